"""Module 2: PyTorch's tensor factories: ``arange``, ``linspace``, ``full``, ``eye``, ``randn``,
``randint``, ``randperm``, ``empty``, the ``*_like`` forms and ``from_numpy``.

Each takes PyTorch's arguments (``dtype=``, ``device=``, ``requires_grad=``, ``generator=``) and
torchlight's own ``backend=`` (instead of ``device=``) and ``seed=``. Values are computed as
PyTorch computes them (``linspace`` is symmetric about its middle, ``arange`` is
``start + i * step``), so that a program gives the same numbers on both. dtypes follow PyTorch's
defaults: ``arange`` of integers and ``randint`` give int64, ``full`` takes its fill value's kind,
and floating results are float64 (torchlight's only float; see ``torchlight.dtypes``).

``zeros``, ``ones``, ``rand`` and ``tensor`` live with Tensor in ``tensor.py``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Optional

import numpy as np

from . import dtypes, random
from .tensor import BackendLike, Tensor, _typed
from .tensor_data import ShapeArg, _shape_arg, _valid_shape

__all__ = [
    "arange",
    "empty",
    "empty_like",
    "eye",
    "from_numpy",
    "full",
    "full_like",
    "linspace",
    "ones_like",
    "rand_like",
    "randint",
    "randn",
    "randn_like",
    "randperm",
    "zeros_like",
]


def _number(x: Any, fn: str, arg: str) -> Any:
    """x as a Python int or float (a one-element tensor gives its value); a TypeError otherwise."""
    if isinstance(x, Tensor):
        return x.item()
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{fn}(): argument '{arg}' must be a number, got {type(x).__name__}: {x!r}")
    return x


def _count(n: Any, fn: str, arg: str) -> int:
    """n as a non-negative int; a TypeError for a non-int, a RuntimeError for a negative one."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{fn}(): argument '{arg}' must be an int, got {type(n).__name__}: {n!r}")
    if n < 0:
        raise RuntimeError(f"{fn}(): {arg} must be greater or equal to 0, got {n}")
    return int(n)


def arange(
    start: Any = 0,
    end: Any = None,
    step: Any = 1,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    backend: BackendLike = None,
) -> Tensor:
    """start, start + step, ... up to but not including end: ``arange(5)``, ``arange(1, 2, 0.25)``.

    int64 when start, end and step are all ints (as PyTorch), else float64.
    """
    if end is None:
        start, end = 0, start
    start, end, step = (_number(v, "arange", a) for v, a in ((start, "start"), (end, "end"), (step, "step")))
    if not all(math.isfinite(v) for v in (start, end, step)):
        raise RuntimeError(f"arange(): unsupported range: {start} -> {end} (step {step}); all must be finite")
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(
            f"arange(): upper bound and lower bound inconsistent with step sign (start {start}, end {end}, step {step})"
        )
    n = math.ceil((end - start) / step)
    default = dtypes.int64 if all(isinstance(v, (int, np.integer)) for v in (start, end, step)) else dtypes.float64
    values = start + step * np.arange(n, dtype=np.float64)  # as PyTorch: start + i * step
    return _typed(values, dtype, device, backend, requires_grad, default)


def linspace(
    start: Any,
    end: Any,
    steps: int,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    backend: BackendLike = None,
) -> Tensor:
    """``steps`` evenly spaced values from start to end, both included."""
    start, end = float(_number(start, "linspace", "start")), float(_number(end, "linspace", "end"))
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise TypeError(f"linspace(): argument 'steps' must be an int, got {type(steps).__name__}: {steps!r}")
    if steps < 0:
        raise RuntimeError(f"linspace(): number of steps must be non-negative, got {steps}")
    # PyTorch's formula: from start in the first half, back from end in the second, so that the
    # values are symmetric and both ends exact.
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    i = np.arange(steps, dtype=np.float64)
    values = np.where(i < steps // 2, start + step * i, end - step * (steps - 1 - i)) if steps > 1 else i + start
    return _typed(values, dtype, device, backend, requires_grad)


def full(
    size: ShapeArg,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    backend: BackendLike = None,
) -> Tensor:
    """A tensor of ``size`` with every element ``fill_value`` (its dtype: int64 for an int, bool for
    a bool, else float64, as PyTorch)."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if not isinstance(fill_value, numbers.Real):
        raise TypeError(f"full(): fill_value must be a number, got {type(fill_value).__name__}: {fill_value!r}")
    if isinstance(fill_value, bool):
        default = dtypes.bool_
    elif isinstance(fill_value, (int, np.integer)):
        default = dtypes.int64
    else:
        default = dtypes.float64
    values = np.full(_valid_shape(_shape_arg((size,))), float(fill_value))
    return _typed(values, dtype, device, backend, requires_grad, default)


def empty(
    *size: ShapeArg, dtype: Any = None, device: Any = None, requires_grad: bool = False, backend: BackendLike = None
) -> Tensor:
    """A tensor of ``size`` (torchlight fills it with zeros, where PyTorch leaves it unset)."""
    return _typed(np.zeros(_valid_shape(_shape_arg(size))), dtype, device, backend, requires_grad)


def eye(
    n: int,
    m: Optional[int] = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    backend: BackendLike = None,
) -> Tensor:
    """An n x m matrix (m defaults to n) with ones on the diagonal and zeros elsewhere."""
    n = _count(n, "eye", "n")
    m = n if m is None else _count(m, "eye", "m")
    return _typed(np.eye(n, m), dtype, device, backend, requires_grad)


def randn(
    *size: ShapeArg,
    generator: Optional[np.random.Generator] = None,
    seed: Optional[int] = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    backend: BackendLike = None,
) -> Tensor:
    """Values drawn from the standard normal distribution: ``randn(2, 3)``, ``randn(())``.

    From torchlight's generator (``torchlight.manual_seed``), ``generator`` or a new one for ``seed``.
    """
    shape = _valid_shape(_shape_arg(size))
    values = random.generator(seed, generator).standard_normal(shape)
    return _typed(np.asarray(values, dtype=np.float64), dtype, device, backend, requires_grad)


def randint(
    *args: Any,
    size: Optional[ShapeArg] = None,
    generator: Optional[np.random.Generator] = None,
    seed: Optional[int] = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    backend: BackendLike = None,
) -> Tensor:
    """Whole numbers drawn uniformly from [low, high): ``randint(high, size)`` or
    ``randint(low, high, size)`` (int64, as PyTorch)."""
    if size is None and args:
        *args, size = args  # type: ignore[assignment]
    if size is None or len(args) not in (1, 2):
        raise TypeError("randint() takes (high, size) or (low, high, size), with size a tuple of ints")
    low, high = (0, args[0]) if len(args) == 1 else args
    for name, v in (("low", low), ("high", high)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"randint(): argument '{name}' must be an int, got {type(v).__name__}: {v!r}")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    shape = _valid_shape(_shape_arg((size,)))
    values = random.generator(seed, generator).integers(low, high, shape)
    return _typed(values.astype(np.float64), dtype, device, backend, requires_grad, dtypes.int64)


def randperm(
    n: int,
    *,
    generator: Optional[np.random.Generator] = None,
    seed: Optional[int] = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    backend: BackendLike = None,
) -> Tensor:
    """0, 1, ..., n - 1 in a random order (int64)."""
    values = random.generator(seed, generator).permutation(_count(n, "randperm", "n"))
    return _typed(values.astype(np.float64), dtype, device, backend, requires_grad, dtypes.int64)


# -- like another tensor: its shape, and its dtype and backend unless others are given --------------


def _like(input: Any, values: np.ndarray, dtype: Any, device: Any, requires_grad: bool) -> Tensor:
    backend = input.backend if device is None else None
    return _typed(values, dtype, device, backend, requires_grad, input.dtype)


def _shape_of(input: Any, fn: str) -> tuple:
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input.shape


def zeros_like(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Zeros of input's shape (and dtype and device, unless given)."""
    return _like(input, np.zeros(_shape_of(input, "zeros_like")), dtype, device, requires_grad)


def ones_like(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Ones of input's shape (and dtype and device, unless given)."""
    return _like(input, np.ones(_shape_of(input, "ones_like")), dtype, device, requires_grad)


def empty_like(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of input's shape (filled with zeros here; PyTorch leaves it unset)."""
    return _like(input, np.zeros(_shape_of(input, "empty_like")), dtype, device, requires_grad)


def full_like(
    input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """``fill_value`` in input's shape (and dtype and device, unless given)."""
    if not isinstance(fill_value, numbers.Real):
        raise TypeError(f"full_like(): fill_value must be a number, got {type(fill_value).__name__}: {fill_value!r}")
    values = np.full(_shape_of(input, "full_like"), float(fill_value))
    return _like(input, values, dtype, device, requires_grad)


def rand_like(
    input: Tensor,
    *,
    generator: Optional[np.random.Generator] = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Uniform values in [0, 1) in input's shape (and dtype and device, unless given)."""
    values = random.generator(None, generator).random(_shape_of(input, "rand_like"))
    return _like(input, values, dtype, device, requires_grad)


def randn_like(
    input: Tensor,
    *,
    generator: Optional[np.random.Generator] = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Standard normal values in input's shape (and dtype and device, unless given)."""
    values = random.generator(None, generator).standard_normal(_shape_of(input, "randn_like"))
    return _like(input, np.asarray(values, dtype=np.float64), dtype, device, requires_grad)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor with the array's values and PyTorch's dtype for it (int64 for integers, bool for
    bools, float64 for floats). A C-contiguous float64 array is shared, not copied, as in PyTorch:
    writing to one changes the other."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy(): expected np.ndarray (got {type(ndarray).__name__})")
    d = dtypes.of_array(ndarray)
    t = Tensor.from_numpy(ndarray)
    t._dtype = d
    return t
