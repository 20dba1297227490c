"""Module 2: element types, the dtype names PyTorch programs use, and what each means in torchlight.

torchlight stores and computes every tensor in float64. A tensor's ``dtype`` says how its values
are to be read:

- ``float64`` (alias ``double``): the default, and the dtype of everything that arithmetic makes;
- ``int64`` (alias ``long``): whole numbers (indices from ``argmax``, labels, ``arange(5)``,
  ``randint``); ``item()`` and ``tolist()`` give Python ints and ``numpy()`` an int64 array;
- ``bool``: 0 and 1 (comparisons, ``any``, ``all``); read back as Python and numpy bools.

``float32`` (alias ``float``) is accepted wherever PyTorch takes a dtype and gives float64: the
values are those PyTorch would compute in float32, only more precise. Other PyTorch dtypes
(float16, int32, uint8, complex, ...) are refused with an error (see ``torchlight.__getattr__``).
docs/pytorch.md lists every difference.
"""

import builtins
import numbers
from typing import Any, Optional

import numpy as np

__all__ = [
    "dtype",
    "float64",
    "float32",
    "int64",
    "bool_",
    "as_dtype",
    "convert",
    "exact_float",
    "exact_floats",
    "of_array",
    "stored",
]

# Integers beyond this are not all representable in float64's 53-bit significand.
EXACT_INT_LIMIT = 2**53
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class dtype:
    """An element type (``torchlight.float64``, ``float32``, ``int64``, ``bool``)."""

    __slots__ = ("name", "is_floating_point", "numpy")

    def __init__(self, name: str, is_floating_point: builtins.bool, numpy: Any):
        self.name = name
        self.is_floating_point = is_floating_point
        self.numpy = numpy  # the numpy dtype that numpy() and tolist() give for it

    def __repr__(self) -> str:
        return f"torchlight.{self.name}"

    def __reduce__(self) -> str:
        return self.name  # pickled by name: the one object of each dtype stays one


float64 = dtype("float64", True, np.float64)
float32 = dtype("float32", True, np.float64)  # requested as float32, held (and computed) as float64
int64 = dtype("int64", False, np.int64)
bool_ = dtype("bool", False, np.bool_)

# PyTorch accepts Python's own types as dtypes: torch.zeros(2, dtype=int).
_PYTHON_TYPES = {builtins.float: float64, builtins.int: int64, builtins.bool: bool_}


def as_dtype(value: Any, arg: str = "dtype") -> Optional[dtype]:
    """``value`` as a torchlight dtype (None stays None); a clear TypeError for anything else."""
    if value is None or isinstance(value, dtype):
        return value
    if value in _PYTHON_TYPES:
        return _PYTHON_TYPES[value]
    raise TypeError(
        f"{arg} must be a torchlight dtype (torchlight.float64, float32, int64 or bool), got "
        f"{value!r} ({type(value).__name__})"
    )


def stored(d: dtype) -> dtype:
    """The dtype a tensor asked to be ``d`` reports: float32 is held as float64."""
    return float64 if d is float32 else d


def convert(values: np.ndarray, d: dtype, what: str = "tensor") -> np.ndarray:
    """float64 values as ``d`` would hold them, still as float64: whole numbers for int64
    (truncated toward zero, as PyTorch), 0.0 and 1.0 for bool (non-zero is true).

    nan and inf have no int64 value: PyTorch makes up a number, torchlight raises.
    """
    if d is int64:
        if values.size and not np.all(np.isfinite(values)):
            raise RuntimeError(f"cannot convert a {what} holding nan or inf to torchlight.int64")
        if values.size and np.abs(values).max() > EXACT_INT_LIMIT:
            raise RuntimeError(
                f"cannot convert a {what} holding {np.abs(values).max():.17g} to torchlight.int64: torchlight "
                "holds int64 values in float64, which holds whole numbers exactly only up to 2**53 in "
                "magnitude (keep such values as float64)"
            )
        return np.trunc(values)
    if d is bool_:
        return (values != 0.0).astype(np.float64)
    return values


def _digits(value: int) -> str:
    """An integer as a reader takes it in: itself, or its size when it is long."""
    text = str(value)
    return text if len(text) <= 40 else f"{text[:12]}... ({len(text.lstrip('-'))} digits)"


def exact_float(value: int, fn: str, rounding: builtins.bool = False) -> float:
    """A Python int as the float64 that torchlight holds it in: exact, or a ValueError saying why not.

    torchlight holds every tensor, int64 ones too, in float64, whose 53-bit significand holds whole
    numbers exactly only up to 2**53 in magnitude. Beyond that an int would be silently rounded
    (``tensor(2**53 + 1)`` would hold 2**53), so it is refused, unless ``rounding`` (the caller
    asked for a floating dtype, which rounds in PyTorch too). Ints beyond int64's range are refused
    as PyTorch refuses them ("Overflow when unpacking long long").
    """
    if -EXACT_INT_LIMIT <= value <= EXACT_INT_LIMIT:
        return float(value)
    if rounding:
        try:
            return float(value)
        except OverflowError:
            raise ValueError(
                f"{fn}: the integer {_digits(value)} is too large for float64 (whose largest value is about 1.8e308)"
            ) from None
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ValueError(
            f"{fn}: Overflow when unpacking long long: the integer {_digits(value)} does not fit in a 64-bit "
            f"integer (it needs {value.bit_length()} bits and a sign; int64 has 63 and a sign)"
        )
    rounded = "" if float(value) == value else f": it would become {float(value):.0f}"
    raise ValueError(
        f"{fn}: the integer {value} is beyond 2**53 in magnitude, where float64, which holds every "
        f"torchlight tensor, no longer holds every whole number exactly{rounded}. Pass it as a float "
        f"({value}.0), or give dtype=torchlight.float64, to accept rounding"
    )


def exact_floats(array: np.ndarray, fn: str, rounding: builtins.bool = False) -> np.ndarray:
    """An array of Python or numpy ints (numpy's integer or object kinds) as float64, each int
    through ``exact_float``: exact, or an error naming the first that is not."""
    kind = array.dtype.kind
    if kind in "iu":
        if array.size:
            low, high = int(array.min()), int(array.max())
            for v in (low, high):
                exact_float(v, fn, rounding)
        return array.astype(np.float64)
    if kind == "O":
        out = np.empty(array.shape)
        flat = out.reshape(-1)
        for i, x in enumerate(array.flat):
            is_int = isinstance(x, numbers.Integral) and not isinstance(x, (builtins.bool, np.bool_))
            flat[i] = exact_float(int(x), fn, rounding) if is_int else float(x)
        return out
    return array.astype(np.float64, copy=False)


def of_array(array: np.ndarray) -> dtype:
    """The dtype PyTorch gives a tensor made from this numpy array (``from_numpy``)."""
    kind = array.dtype.kind
    if kind == "b":
        return bool_
    if kind in "iu":
        if array.size and (int(array.max()) > EXACT_INT_LIMIT or int(array.min()) < -EXACT_INT_LIMIT):
            raise ValueError(
                "from_numpy(): integers above 2**53 in magnitude cannot be held exactly in float64, which "
                f"torchlight computes in (got values from {int(array.min())} to {int(array.max())})"
            )
        return int64
    if kind == "f":
        return float64
    raise TypeError(f"from_numpy(): expected a numpy array of floats, integers or bools, got dtype {array.dtype}")
