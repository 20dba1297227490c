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
from .tensor_data import INT64_MAX, ShapeArg, _shape_arg, _valid_shape

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
    """n as a non-negative int; a TypeError for a non-int, a ValueError for one beyond int64 (as
    PyTorch's), a RuntimeError for a negative one."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{fn}(): argument '{arg}' must be an int, got {type(n).__name__}: {n!r}")
    if n > INT64_MAX:
        raise ValueError(
            f"{fn}(): Overflow when unpacking long long: argument '{arg}' = {n} does not fit in a 64-bit integer"
        )
    if n < 0:
        raise RuntimeError(f"{fn}(): {arg} must be greater or equal to 0, got {n}")
    return int(n)


def _size(size: Any, fn: str) -> tuple:
    """A ``size=`` argument that PyTorch takes as a tuple (or list) of ints only: ``full((2, 3), x)``."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(
            f"{fn}(): argument 'size' must be a tuple of ints, not {type(size).__name__} (write ({size!r},) "
            "for one dimension)"
        )
    return _valid_shape(size)


def _exact(value: Any, fn: str, dtype: Any, default: dtypes.dtype) -> Any:
    """A Python int argument that becomes a tensor value, checked to be held exactly (dtypes.exact_float)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        dtypes.exact_float(int(value), fn, (dtypes.as_dtype(dtype) or default).is_floating_point)
    return value


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

    int64 when start, end and step are all ints (as PyTorch), else float64. As PyTorch, an int64
    range takes start, end and step as int64 (truncated toward zero) before counting.

    :param start: the first value (with end left out: the end, counting from 0).
    :param end: the bound, not included.
    :param step: the difference between neighbours.
    :param dtype: the dtype (default: as PyTorch picks it for these values).
    :param device: ``"cpu"`` or ``"cuda"``, which picks the backend (not with backend).
    :param requires_grad: make it a leaf that receives ``.grad``.
    :param backend: the backend or its name (default: the default backend).
    """
    if end is None:
        start, end = 0, start
    start, end, step = (_number(v, "arange", a) for v, a in ((start, "start"), (end, "end"), (step, "step")))
    default = dtypes.int64 if all(isinstance(v, (int, np.integer)) for v in (start, end, step)) else dtypes.float64
    d = dtypes.as_dtype(dtype) or default
    if d is dtypes.bool_:
        raise RuntimeError("arange(): a range of dtype bool is not implemented (PyTorch has none either)")
    if not all(math.isfinite(v) for v in (start, end, step)):
        raise RuntimeError(f"arange(): unsupported range: {start} -> {end} (step {step}); all must be finite")
    for v, a in ((start, "start"), (end, "end"), (step, "step")):
        if isinstance(v, (int, np.integer)) and not -INT64_MAX - 1 <= v <= INT64_MAX:
            raise RuntimeError(f"arange(): {a} = {v}: value cannot be converted to type int64_t without overflow")
    if not d.is_floating_point:  # (PyTorch: arange(0, 5, 1.5, dtype=torch.long) is 0, 1, 2, 3, 4)
        start, end, step = (int(v) for v in (start, end, step))
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero" + ("" if d.is_floating_point else " (as an int64)"))
    if (end - start) * step < 0:
        raise RuntimeError(
            f"arange(): upper bound and lower bound inconsistent with step sign (start {start}, end {end}, step {step})"
        )
    span = (end - start) / step
    if not span <= INT64_MAX:  # (a float range such as 0 -> 1e300, step 1e-300, counts beyond even floats)
        raise RuntimeError(
            f"arange(): the range {start} -> {end} (step {step}) has {span:.6g} elements: value cannot be "
            "converted to type int64_t without overflow"
        )
    n = math.ceil(span)
    _valid_shape((n,))  # (PyTorch: "Storage size calculation overflowed" for more bytes than an int64 counts)
    if n:  # the first and last values, held exactly (ints: the last one computed exactly)
        for v in (start, start + (n - 1) * step):
            _exact(v, "arange()", dtype, default)
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
    """``steps`` evenly spaced values from start to end, both included.

    :param start: the first value.
    :param end: the last value.
    :param steps: how many values.
    :param dtype: the dtype (default: float64).
    :param device: ``"cpu"`` or ``"cuda"``, which picks the backend (not with backend).
    :param requires_grad: make it a leaf that receives ``.grad``.
    :param backend: the backend or its name (default: the default backend).
    """
    start, end = float(_number(start, "linspace", "start")), float(_number(end, "linspace", "end"))
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise TypeError(f"linspace(): argument 'steps' must be an int, got {type(steps).__name__}: {steps!r}")
    if steps > INT64_MAX:
        raise ValueError(
            f"linspace(): Overflow when unpacking long long: steps={steps} does not fit in a 64-bit integer"
        )
    if steps < 0:
        raise RuntimeError(f"linspace(): number of steps must be non-negative, got {steps}")
    _valid_shape((steps,))  # (more bytes than an int64 counts: PyTorch's "Storage size calculation overflowed")
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
    a bool, else float64, as PyTorch).

    :param size: the shape, a tuple of ints.
    :param fill_value: the number in every element.
    :param dtype: the dtype (default: as PyTorch picks it for these values).
    :param device: ``"cpu"`` or ``"cuda"``, which picks the backend (not with backend).
    :param requires_grad: make it a leaf that receives ``.grad``.
    :param backend: the backend or its name (default: the default backend).
    """
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
    _exact(fill_value, "full()", dtype, default)
    values = np.full(_size(size, "full"), float(fill_value))
    return _typed(values, dtype, device, backend, requires_grad, default)


def empty(
    *size: ShapeArg, dtype: Any = None, device: Any = None, requires_grad: bool = False, backend: BackendLike = None
) -> Tensor:
    """A tensor of ``size`` (torchlight fills it with zeros, where PyTorch leaves it unset).

    :param size: the shape: ints, or one tuple of them.
    :param dtype: the dtype (default: float64).
    :param device: ``"cpu"`` or ``"cuda"``, which picks the backend (not with backend).
    :param requires_grad: make it a leaf that receives ``.grad``.
    :param backend: the backend or its name (default: the default backend).
    """
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
    """An n x m matrix (m defaults to n) with ones on the diagonal and zeros elsewhere.

    :param n: the number of rows.
    :param m: the number of columns (default: n).
    :param dtype: the dtype (default: float64).
    :param device: ``"cpu"`` or ``"cuda"``, which picks the backend (not with backend).
    :param requires_grad: make it a leaf that receives ``.grad``.
    :param backend: the backend or its name (default: the default backend).
    """
    n = _count(n, "eye", "n")
    m = n if m is None else _count(m, "eye", "m")
    _valid_shape((n, m))
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

    :param size: the shape: ints, or one tuple of them.
    :param generator: a numpy Generator to draw from (default: torchlight's).
    :param seed: draw from a new generator seeded with it.
    :param dtype: the dtype (default: float64).
    :param device: ``"cpu"`` or ``"cuda"``, which picks the backend (not with backend).
    :param requires_grad: make it a leaf that receives ``.grad``.
    :param backend: the backend or its name (default: the default backend).
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
    ``randint(low, high, size)`` (int64, as PyTorch).

    :param size: the shape, a tuple of ints (or the last positional argument).
    :param generator: a numpy Generator to draw from (default: torchlight's).
    :param seed: draw from a new generator seeded with it.
    :param dtype: the dtype (default: int64).
    :param device: ``"cpu"`` or ``"cuda"``, which picks the backend (not with backend).
    :param requires_grad: make it a leaf that receives ``.grad``.
    :param backend: the backend or its name (default: the default backend).
    """
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
    for v in (low, high - 1):  # the values drawn run from low to high - 1
        _exact(v, "randint()", dtype, dtypes.int64)
    shape = _size(size, "randint")
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
    """0, 1, ..., n - 1 in a random order (int64).

    :param n: how many values: 0 to n - 1.
    :param generator: a numpy Generator to draw from (default: torchlight's).
    :param seed: draw from a new generator seeded with it.
    :param dtype: the dtype (default: int64).
    :param device: ``"cpu"`` or ``"cuda"``, which picks the backend (not with backend).
    :param requires_grad: make it a leaf that receives ``.grad``.
    :param backend: the backend or its name (default: the default backend).
    """
    n = _count(n, "randperm", "n")
    _valid_shape((n,))
    values = random.generator(seed, generator).permutation(n)
    return _typed(values.astype(np.float64), dtype, device, backend, requires_grad, dtypes.int64)


# -- like another tensor: its shape, and its dtype and backend unless others are given --------------


def _like(input: Any, values: np.ndarray, dtype: Any, device: Any, requires_grad: bool) -> Tensor:
    backend = input.backend if device is None else None
    return _typed(values, dtype, device, backend, requires_grad, input.dtype)


def _shape_of(input: Any, fn: str) -> tuple:
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be Tensor, not {type(input).__name__}")
    return _valid_shape(input.shape)  # (an expanded view's shape may hold more than a storage can)


def zeros_like(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Zeros of input's shape (and dtype and device, unless given).

    :param input: the tensor whose shape is taken.
    :param dtype: the dtype (default: input's).
    :param device: ``"cpu"`` or ``"cuda"`` (default: input's).
    :param requires_grad: make it a leaf that receives ``.grad``.
    """
    return _like(input, np.zeros(_shape_of(input, "zeros_like")), dtype, device, requires_grad)


def ones_like(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Ones of input's shape (and dtype and device, unless given).

    :param input: the tensor whose shape is taken.
    :param dtype: the dtype (default: input's).
    :param device: ``"cpu"`` or ``"cuda"`` (default: input's).
    :param requires_grad: make it a leaf that receives ``.grad``.
    """
    return _like(input, np.ones(_shape_of(input, "ones_like")), dtype, device, requires_grad)


def empty_like(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of input's shape (filled with zeros here; PyTorch leaves it unset).

    :param input: the tensor whose shape is taken.
    :param dtype: the dtype (default: input's).
    :param device: ``"cpu"`` or ``"cuda"`` (default: input's).
    :param requires_grad: make it a leaf that receives ``.grad``.
    """
    return _like(input, np.zeros(_shape_of(input, "empty_like")), dtype, device, requires_grad)


def full_like(
    input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """``fill_value`` in input's shape (and dtype and device, unless given).

    :param input: the tensor whose shape is taken.
    :param fill_value: the number in every element.
    :param dtype: the dtype (default: input's).
    :param device: ``"cpu"`` or ``"cuda"`` (default: input's).
    :param requires_grad: make it a leaf that receives ``.grad``.
    """
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
    """Uniform values in [0, 1) in input's shape (and dtype and device, unless given).

    :param input: the tensor whose shape is taken.
    :param generator: a numpy Generator to draw from (default: torchlight's).
    :param dtype: the dtype (default: input's).
    :param device: ``"cpu"`` or ``"cuda"`` (default: input's).
    :param requires_grad: make it a leaf that receives ``.grad``.
    """
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
    """Standard normal values in input's shape (and dtype and device, unless given).

    :param input: the tensor whose shape is taken.
    :param generator: a numpy Generator to draw from (default: torchlight's).
    :param dtype: the dtype (default: input's).
    :param device: ``"cpu"`` or ``"cuda"`` (default: input's).
    :param requires_grad: make it a leaf that receives ``.grad``.
    """
    values = random.generator(None, generator).standard_normal(_shape_of(input, "randn_like"))
    return _like(input, np.asarray(values, dtype=np.float64), dtype, device, requires_grad)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor with the array's values and PyTorch's dtype for it (int64 for integers, bool for
    bools, float64 for floats). A C-contiguous float64 array is shared, not copied, as in PyTorch:
    writing to one changes the other.

    :param ndarray: a numpy array.
    :raises TypeError: when it is not one.
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy(): expected np.ndarray (got {type(ndarray).__name__})")
    d = dtypes.of_array(ndarray)
    t = Tensor.from_numpy(ndarray)
    t._dtype = d
    return t
