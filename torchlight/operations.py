"""Module 2: the tensor operations as module-level functions, with PyTorch's names and signatures:
``torchlight.sin(x)`` is ``x.sin()``, ``torchlight.cat([a, b], dim=1)`` joins two tensors, and
``torchlight.max(a, b)`` is the elementwise maximum, as in PyTorch. Each is a thin call into the
Tensor method or ``torchlight.ops`` function that does the work; none adds an operation. Those of
a later module (``softmax`` and ``log_softmax``, module 4's) import it when first called, and so
does ``out=``, which those that take it in PyTorch take here too: the result is written into the
tensor ``out`` (module 4's ``write_out``, tensor_pytorch.py), which is returned.

Also PyTorch's grad-mode helpers: ``no_grad``, ``enable_grad``, ``set_grad_enabled``,
``is_grad_enabled`` (from ``torchlight.autograd``) and ``inference_mode``.
"""

from __future__ import annotations

import builtins
import functools
from typing import Any, Callable, Optional, Sequence

import numpy as np

from . import dtypes
from .autograd.grad_mode import _GradMode, _set_mode, enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .ops import joining, selection
from .tensor import Tensor, _tensor_of
from .tensor_data import shape_broadcast

__all__ = [
    "abs", "add", "allclose", "argmax", "argmin", "bmm", "cat", "clamp", "clip", "concat", "concatenate",
    "cos", "div", "enable_grad", "exp", "flatten", "inference_mode", "is_grad_enabled", "is_tensor",
    "isclose", "log", "log_softmax", "matmul", "max", "maximum", "mean", "min", "minimum", "mm", "mul",
    "neg", "no_grad", "norm", "numel", "permute", "pow", "relu", "reshape", "set_grad_enabled", "sigmoid", "sin",
    "softmax", "sqrt", "squeeze", "stack", "std", "sub", "sum", "t", "tanh", "transpose", "unsqueeze",
    "var", "where",
]  # fmt: skip


def _input(x: Any, fn: str, arg: str = "input") -> Tensor:
    """x, checked to be a Tensor (PyTorch's functions take no lists or numbers where a tensor goes);
    an ``nn.Parameter`` gives its value."""
    x = _tensor_of(x)
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' must be Tensor, not {type(x).__name__}")
    return x


def is_tensor(obj: Any) -> builtins.bool:
    """True when obj is a torchlight Tensor.

    :param obj: any object.
    """
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    """The number of elements of input.

    :param input: the tensor.
    """
    return _input(input, "numel").numel()


# -- elementwise ------------------------------------------------------------------------------


def _out(result: Any, out: Any, fn: str, **checks: Any) -> Any:
    """result, or with ``out=`` given, result written into out (which is returned)."""
    if out is None:
        return result
    from .tensor_pytorch import write_out  # (module 4's: imported when first used)

    return write_out(result, out, fn, **checks)


def _unary(name: str, has_out: builtins.bool = True) -> Callable[..., Tensor]:
    def fn(input: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
        return _out(getattr(_input(input, name), name)(), out, name)

    def no_out(input: Tensor) -> Tensor:
        return getattr(_input(input, name), name)()

    f = fn if has_out else no_out
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``input.{name}()``: {name} of every element.\n\n:param input: the tensor."
    if has_out:
        f.__doc__ += "\n:param out: a tensor to write the result into (and return)."
    return f


sin = _unary("sin")
cos = _unary("cos")
exp = _unary("exp")
log = _unary("log")
tanh = _unary("tanh")
sigmoid = _unary("sigmoid")
relu = _unary("relu", has_out=False)  # (PyTorch's relu takes no out=)
abs = _unary("abs")
sqrt = _unary("sqrt")


def neg(input: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """-input

    :param input: the tensor.
    :param out: a tensor to write the result into (and return).
    """
    return _out(-_input(input, "neg"), out, "neg")


def add(input: Any, other: Any, *, alpha: float = 1, out: Optional[Tensor] = None) -> Tensor:
    """input + alpha * other (one of them a Tensor).

    :param input: a Tensor or a number.
    :param other: a Tensor or a number, broadcast against input.
    :param alpha: the factor other is multiplied by.
    :param out: a tensor to write the result into (and return).
    """
    return _out(input + (other * alpha if alpha != 1 else other), out, "add")


def sub(input: Any, other: Any, *, alpha: float = 1, out: Optional[Tensor] = None) -> Tensor:
    """input - alpha * other (one of them a Tensor).

    :param input: a Tensor or a number.
    :param other: a Tensor or a number, broadcast against input.
    :param alpha: the factor other is multiplied by.
    :param out: a tensor to write the result into (and return).
    """
    return _out(input - (other * alpha if alpha != 1 else other), out, "sub")


def mul(input: Any, other: Any, *, out: Optional[Tensor] = None) -> Tensor:
    """input * other (one of them a Tensor).

    :param input: a Tensor or a number.
    :param other: a Tensor or a number, broadcast against input.
    :param out: a tensor to write the result into (and return).
    """
    return _out(input * other, out, "mul")


def div(input: Any, other: Any, *, out: Optional[Tensor] = None) -> Tensor:
    """input / other (one of them a Tensor).

    :param input: a Tensor or a number.
    :param other: a Tensor or a number, broadcast against input.
    :param out: a tensor to write the result into (and return).
    """
    return _out(input / other, out, "div")


def pow(input: Any, exponent: Any, *, out: Optional[Tensor] = None) -> Tensor:
    """input ** exponent: a Tensor to a number or Tensor power, or a number to a Tensor power.

    :param input: the base: a Tensor or a number.
    :param exponent: the power: a Tensor or a number.
    :param out: a tensor to write the result into (and return).
    :raises TypeError: when neither is a Tensor.
    """
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError(
            f"pow(): expected a Tensor as input or exponent, got {type(input).__name__} and {type(exponent).__name__}"
        )
    return _out(input**exponent, out, "pow")


def clamp(input: Tensor, min: Any = None, max: Any = None, *, out: Optional[Tensor] = None) -> Tensor:
    """input limited to [min, max] (either bound may be None; numbers or tensors).

    :param input: the tensor.
    :param min: the lower bound (None: none).
    :param max: the upper bound (None: none).
    :param out: a tensor to write the result into (and return).
    """
    return _out(_input(input, "clamp").clamp(min, max), out, "clamp")


clip = clamp


def maximum(input: Tensor, other: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """The larger of input and other, elementwise (a tie gives each half the gradient).

    :param input: a tensor.
    :param other: a tensor broadcast against input.
    :param out: a tensor to write the result into (and return).
    """
    return _out(_input(input, "maximum").maximum(_input(other, "maximum", "other")), out, "maximum")


def minimum(input: Tensor, other: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """The smaller of input and other, elementwise.

    :param input: a tensor.
    :param other: a tensor broadcast against input.
    :param out: a tensor to write the result into (and return).
    """
    return _out(_input(input, "minimum").minimum(_input(other, "minimum", "other")), out, "minimum")


def where(condition: Tensor, input: Any, other: Any, *, out: Optional[Tensor] = None) -> Tensor:
    """input where condition is true (non-zero), else other; the three broadcast together.

    :param condition: a tensor: where it is non-zero the result takes input.
    :param input: a Tensor or a number.
    :param other: a Tensor or a number.
    :param out: a tensor to write the result into (and return).
    """
    result = selection.where(_input(condition, "where", "condition"), _tensor_of(input), _tensor_of(other))
    return _out(result, out, "where")


# -- matrix products ----------------------------------------------------------------------------


def matmul(input: Tensor, other: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """input @ other, with numpy's rules for vectors and batches.

    :param input: the left tensor.
    :param other: the right tensor.
    :param out: a tensor to write the result into (and return).
    """
    return _out(_input(input, "matmul") @ _input(other, "matmul", "other"), out, "matmul")


def mm(input: Tensor, mat2: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """The product of two matrices (2-D only: matmul broadcasts, mm does not).

    :param input: an (n, k) matrix.
    :param mat2: a (k, m) matrix.
    :param out: a tensor to write the result into (and return).
    :raises RuntimeError: when either is not 2-D.
    """
    if _input(input, "mm").dims != 2:
        raise RuntimeError(f"self must be a matrix (got a tensor of shape {list(input.shape)})")
    if _input(mat2, "mm", "mat2").dims != 2:
        raise RuntimeError(f"mat2 must be a matrix (got a tensor of shape {list(mat2.shape)})")
    return _out(input @ mat2, out, "mm")


def bmm(input: Tensor, mat2: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """Batched matrix products: (b, n, k) @ (b, k, m) -> (b, n, m), with equal batch sizes.

    :param input: a (b, n, k) tensor.
    :param mat2: a (b, k, m) tensor.
    :param out: a tensor to write the result into (and return).
    :raises RuntimeError: when the shapes do not fit.
    """
    if _input(input, "bmm").dims != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor (got shape {list(input.shape)})")
    if _input(mat2, "bmm", "mat2").dims != 3:
        raise RuntimeError(f"batch2 must be a 3D tensor (got shape {list(mat2.shape)})")
    if mat2.shape[:2] != (input.shape[0], input.shape[2]):
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: {[input.shape[0], input.shape[2]]} "
            f"but got: {list(mat2.shape[:2])}."
        )
    return _out(input @ mat2, out, "bmm")


# -- reductions ---------------------------------------------------------------------------------


def sum(input: Tensor, dim: Any = None, keepdim: builtins.bool = False, *, out: Optional[Tensor] = None) -> Tensor:
    """The sum over dim (an int, a tuple, or None for all).

    :param input: the tensor.
    :param dim: the dimension, or a tuple of them (None: all).
    :param keepdim: keep each reduced dimension, with size 1.
    :param out: a tensor to write the result into (and return).
    """
    return _out(_input(input, "sum").sum(dim, keepdim), out, "sum")


def mean(input: Tensor, dim: Any = None, keepdim: builtins.bool = False, *, out: Optional[Tensor] = None) -> Tensor:
    """The mean over dim (an int, a tuple, or None for all).

    :param input: the tensor.
    :param dim: the dimension, or a tuple of them (None: all).
    :param keepdim: keep each reduced dimension, with size 1.
    :param out: a tensor to write the result into (and return).
    """
    return _out(_input(input, "mean").mean(dim, keepdim), out, "mean")


def max(input: Tensor, dim: Any = None, keepdim: builtins.bool = False, *, out: Any = None) -> Any:
    """The largest element; with an int dim, (values, indices) along it; with a Tensor in place of
    dim, the elementwise maximum of the two (as PyTorch's ``torch.max(a, b)``). ``out`` is a
    (values, indices) pair of tensors where a dim is given, else a tensor.

    :param input: the tensor.
    :param dim: a dimension (None: over all elements), or a tensor to compare with.
    :param keepdim: keep each reduced dimension, with size 1.
    :param out: a tensor, or a (values, indices) pair with a dim, to write the result into.
    """
    if isinstance(dim, Tensor):
        return maximum(input, dim, out=out)
    return _out_pair(_input(input, "max").max(dim, keepdim), out, "max", dim)


def min(input: Tensor, dim: Any = None, keepdim: builtins.bool = False, *, out: Any = None) -> Any:
    """The smallest element; with an int dim, (values, indices); with a Tensor, the elementwise minimum.

    :param input: the tensor.
    :param dim: a dimension (None: over all elements), or a tensor to compare with.
    :param keepdim: keep each reduced dimension, with size 1.
    :param out: a tensor, or a (values, indices) pair with a dim, to write the result into.
    """
    if isinstance(dim, Tensor):
        return minimum(input, dim, out=out)
    return _out_pair(_input(input, "min").min(dim, keepdim), out, "min", dim)


def _out_pair(result: Any, out: Any, fn: str, dim: Any) -> Any:
    """max/min's result, with ``out``: a tensor for the largest element, (values, indices) along a dim."""
    if out is None or dim is None:
        return _out(result, out, fn)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(f"{fn}(): argument 'out' must be a (values, indices) pair of tensors along a dim")
    values = _out(result.values, out[0], fn)
    return type(result)(values, _out(result.indices, out[1], fn, exact_dtype=True))


def argmax(
    input: Tensor, dim: Optional[int] = None, keepdim: builtins.bool = False, *, out: Optional[Tensor] = None
) -> Tensor:
    """The position of the largest element along dim (of the flattened input for None), as int64.

    :param input: the tensor.
    :param dim: the dimension (None: the flattened input).
    :param keepdim: keep each reduced dimension, with size 1.
    :param out: a tensor to write the result into (and return).
    """
    return _out(_input(input, "argmax").argmax(dim, keepdim), out, "argmax", exact_dtype=True)


def argmin(
    input: Tensor, dim: Optional[int] = None, keepdim: builtins.bool = False, *, out: Optional[Tensor] = None
) -> Tensor:
    """The position of the smallest element along dim, as int64.

    :param input: the tensor.
    :param dim: the dimension (None: the flattened input).
    :param keepdim: keep each reduced dimension, with size 1.
    :param out: a tensor to write the result into (and return).
    """
    return _out(_input(input, "argmin").argmin(dim, keepdim), out, "argmin", exact_dtype=True)


def var(
    input: Tensor,
    dim: Any = None,
    unbiased: builtins.bool = True,
    keepdim: builtins.bool = False,
    *,
    correction: Any = None,
    out: Optional[Tensor] = None,
) -> Tensor:
    """The variance over dim (divided by n - 1 by default).

    :param input: the tensor.
    :param dim: the dimension, or a tuple of them (None: all).
    :param unbiased: divide by n - 1 (else by n).
    :param keepdim: keep each reduced dimension, with size 1.
    :param correction: what n is reduced by, in place of unbiased.
    :param out: a tensor to write the result into (and return).
    """
    return _out(_input(input, "var").var(dim, unbiased, keepdim, correction=correction), out, "var")


def std(
    input: Tensor,
    dim: Any = None,
    unbiased: builtins.bool = True,
    keepdim: builtins.bool = False,
    *,
    correction: Any = None,
    out: Optional[Tensor] = None,
) -> Tensor:
    """The standard deviation over dim (from the variance divided by n - 1 by default).

    :param input: the tensor.
    :param dim: the dimension, or a tuple of them (None: all).
    :param unbiased: divide by n - 1 (else by n).
    :param keepdim: keep each reduced dimension, with size 1.
    :param correction: what n is reduced by, in place of unbiased.
    :param out: a tensor to write the result into (and return).
    """
    return _out(_input(input, "std").std(dim, unbiased, keepdim, correction=correction), out, "std")


def norm(
    input: Tensor, p: Any = "fro", dim: Any = None, keepdim: builtins.bool = False, out: Optional[Tensor] = None
) -> Tensor:
    """The p-norm of input over dim (all elements by default): ``input.norm(p, dim, keepdim)``.

    :param input: the tensor.
    :param p: the order: a number, ``"fro"`` (2 over all elements), ``inf``.
    :param dim: the dimension, or a tuple of them (None: all).
    :param keepdim: keep each reduced dimension, with size 1.
    :param out: a tensor to write the result into (and return).
    """
    return _out(_input(input, "norm").norm(p, dim, keepdim), out, "norm")


def softmax(input: Tensor, dim: int, dtype: Any = None, *, out: Optional[Tensor] = None) -> Tensor:
    """``torchlight.nn.functional.softmax(input, dim)``.

    :param input: the tensor.
    :param dim: the dimension that sums to 1.
    :param dtype: a dtype to convert input to first.
    :param out: a tensor to write the result into (and return).
    """
    from .nn import functional as F  # (nn sits above this module: imported when first used)

    return _out(F.softmax(_as(_input(input, "softmax"), dtype), dim), out, "softmax")


def log_softmax(input: Tensor, dim: int, dtype: Any = None, *, out: Optional[Tensor] = None) -> Tensor:
    """``torchlight.nn.functional.log_softmax(input, dim)``.

    :param input: the tensor.
    :param dim: the dimension softmax normalizes over.
    :param dtype: a dtype to convert input to first.
    :param out: a tensor to write the result into (and return).
    """
    from .nn import functional as F

    return _out(F.log_softmax(_as(_input(input, "log_softmax"), dtype), dim), out, "log_softmax")


def _as(x: Tensor, dtype: Any) -> Tensor:
    return x if dtype is None else x.to(dtypes.as_dtype(dtype))


# -- shapes -------------------------------------------------------------------------------------


def reshape(input: Tensor, shape: Sequence[int]) -> Tensor:
    """input with a new shape (a view when possible).

    :param input: the tensor.
    :param shape: the new shape; one size may be -1 (inferred).
    """
    return _input(input, "reshape").reshape(shape)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """input with dimensions start_dim..end_dim merged into one.

    :param input: the tensor.
    :param start_dim: the first dimension merged.
    :param end_dim: the last dimension merged.
    """
    return _input(input, "flatten").flatten(start_dim, end_dim)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """A view of input with two dimensions swapped.

    :param input: the tensor.
    :param dim0: one dimension.
    :param dim1: the other.
    """
    return _input(input, "transpose").transpose(dim0, dim1)


def t(input: Tensor) -> Tensor:
    """A matrix's transpose (a vector or 0-d tensor unchanged).

    :param input: a tensor of at most 2 dimensions.
    """
    return _input(input, "t").t()


def permute(input: Tensor, dims: Sequence[int]) -> Tensor:
    """A view of input with dimensions reordered.

    :param input: the tensor.
    :param dims: the new order: dims[i] is the dimension of input that becomes dimension i.
    """
    return _input(input, "permute").permute(*dims)


def squeeze(input: Tensor, dim: Optional[int] = None) -> Tensor:
    """input without dimension dim if its size is 1 (without every size-1 dimension for None).

    :param input: the tensor.
    :param dim: the dimension to remove (None: every size-1 dimension).
    """
    return _input(input, "squeeze").squeeze(dim)


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """A view of input with a dimension of size 1 inserted at dim.

    :param input: the tensor.
    :param dim: where the new dimension goes (negative: counted from the end).
    """
    return _input(input, "unsqueeze").unsqueeze(dim)


def _list_of(tensors: Any) -> Any:
    # nn.Parameters give their values; anything else is for joining's checks to judge
    return [_tensor_of(t) for t in tensors] if isinstance(tensors, (list, tuple)) else tensors


def _joined(out: Tensor, tensors: Sequence[Tensor]) -> Tensor:
    # int64 and bool inputs keep their dtype when all share it (values are whole numbers still)
    first = tensors[0].dtype
    if first is not dtypes.float64 and builtins.all(x.dtype is first for x in tensors):
        out._dtype = first
    return out


def cat(tensors: Sequence[Tensor], dim: int = 0, *, out: Optional[Tensor] = None) -> Tensor:
    """The tensors joined along dimension dim (their other sizes must agree).

    :param tensors: the tensors, a list or tuple.
    :param dim: the dimension they are joined along.
    :param out: a tensor to write the result into (and return).
    """
    tensors = _list_of(tensors)
    return _out(_joined(joining.cat(tensors, dim), tensors), out, "cat")


concat = concatenate = cat


def stack(tensors: Sequence[Tensor], dim: int = 0, *, out: Optional[Tensor] = None) -> Tensor:
    """The tensors (all one shape) joined along a new dimension dim.

    :param tensors: the tensors, a list or tuple.
    :param dim: where the new dimension goes.
    :param out: a tensor to write the result into (and return).
    """
    tensors = _list_of(tensors)
    return _out(_joined(joining.stack(tensors, dim), tensors), out, "stack")


# -- comparing ----------------------------------------------------------------------------------


def _close(input: Tensor, other: Tensor, rtol: float, atol: float, equal_nan: builtins.bool, fn: str) -> np.ndarray:
    a, b = _input(input, fn).to_numpy(), _input(other, fn, "other").to_numpy()
    shape_broadcast(a.shape, b.shape)  # shapes that do not broadcast: the error names both
    for name, tolerance in (("rtol", rtol), ("atol", atol)):
        if not tolerance >= 0:  # (nan too)
            raise RuntimeError(f"{fn}(): {name} must be greater than or equal to zero, but got {tolerance}")
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def isclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: builtins.bool = False
) -> Tensor:
    """Elementwise |input - other| <= atol + rtol * |other|, as a bool tensor.

    :param input: a tensor.
    :param other: a tensor broadcast against input.
    :param rtol: the tolerance relative to other.
    :param atol: the absolute tolerance.
    :param equal_nan: count two NaNs as close.
    """
    out = Tensor.from_numpy(_close(input, other, rtol, atol, equal_nan, "isclose"), input.backend)
    out._dtype = dtypes.bool_
    return out


def allclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: builtins.bool = False
) -> builtins.bool:
    """True when every element of input is close to other's (``isclose``).

    :param input: a tensor.
    :param other: a tensor broadcast against input.
    :param rtol: the tolerance relative to other.
    :param atol: the absolute tolerance.
    :param equal_nan: count two NaNs as close.
    """
    return builtins.bool(np.all(_close(input, other, rtol, atol, equal_nan, "allclose")))


# -- grad mode ----------------------------------------------------------------------------------


class inference_mode(_GradMode):
    """PyTorch's inference mode, which torchlight runs as ``no_grad`` (it has no faster mode to
    offer); ``inference_mode(False)`` changes nothing. A context manager or a decorator.

    :param mode: False: change nothing.
    """

    def __init__(self, mode: builtins.bool = True):
        self.inference = builtins.bool(mode)

    def __enter__(self) -> "inference_mode":
        self.prev = _set_mode(False if self.inference else is_grad_enabled())[0]
        return self

    def __call__(self, fn: Callable) -> Callable:
        inference = self.inference

        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(inference):
                return fn(*args, **kwargs)

        return wrapped
