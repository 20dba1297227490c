"""Module 4: PyTorch's names for the rest of Tensor: dtype and device, conversions, more math and
statistics, ``softmax`` (from ``nn.functional``, module 4), so that PyTorch programs run.

They include Python's sequence protocol (``len(t)``, ``for row in t``), ``size()``, ``tolist()``,
``new_zeros``/``new_ones``, ``gather`` and ``all``, indexing by lists, ranges, tensors and masks
(``ops/advanced_index.py``), ``np.asarray(t)`` (``__array__``), the method forms of the
functions (``t.mul(u)``, ``t.matmul(u)``, ...), and ``write_out``, which writes a function's
result into the tensor given as ``out=`` (``operations.py``).

tensor.py (module 2) holds what the stages teach; the methods here add PyTorch's spellings and
conveniences on top of it, each a line or two over the operations of ``ops/`` (``selection.py``,
``statistics.py``, ``joining.py``) or over ``dtypes`` and ``devices``. They are attached to
``Tensor`` when this file is imported (``@extends(Tensor)``, ``extension.py``); docs/pytorch.md
lists what PyTorch has that torchlight has not.
"""

from __future__ import annotations

import builtins
import copy
import numbers
import warnings
from typing import TYPE_CHECKING, Any, Iterator, Optional, Tuple, Union

import numpy as np

from . import backends, devices, dtypes, operations, scalar
from .autograd.grad_mode import is_grad_enabled, no_grad
from .extension import extends
from .ops import advanced_index, joining, selection
from .ops import statistics as S
from .ops.elementwise import Cos, Neg, Sin
from .ops.movement import Gather
from .tensor import _BOOL, _FLOAT64, _INT64, Tensor, _as_bool, _as_int64, _tensor_of, tensor
from .tensor_conversions import Conversions
from .tensor_data import ShapeArg, TensorData, _shape_arg, normalize_dim, prod

__all__ = ["PyTorchNames", "write_out"]

if TYPE_CHECKING:
    _Methods = Conversions  # (the type checker reads these methods as Tensor's own, beside module 2's to)
else:
    _Methods = object


_to_backend = Conversions.to  # module 2's: a move to another backend (tensor_conversions.py)
_index_view = Tensor.__getitem__  # module 2's: integers, slices, None and ... (a view)


@extends(Tensor)
class PyTorchNames(_Methods):
    """Tensor's methods and attributes beyond modules 1 and 2, by PyTorch's names."""

    def new_tensor(self, data: Any) -> "Tensor":
        """A new tensor on this tensor's backend (as ``torchlight.tensor``)."""
        return tensor(data, backend=self.backend)

    def new_zeros(
        self, *shape: ShapeArg, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False
    ) -> "Tensor":
        """Zeros of ``shape``, of this tensor's dtype on its backend (or ``dtype``, ``device``)."""
        return self._new_filled(_shape_arg(shape), 0.0, dtype, device, requires_grad)

    def new_ones(
        self, *shape: ShapeArg, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False
    ) -> "Tensor":
        """Ones of ``shape``, of this tensor's dtype on its backend (or ``dtype``, ``device``)."""
        return self._new_filled(_shape_arg(shape), 1.0, dtype, device, requires_grad)

    def new_full(
        self,
        size: ShapeArg,
        fill_value: Any,
        *,
        dtype: Any = None,
        device: Any = None,
        requires_grad: builtins.bool = False,
    ) -> "Tensor":
        """``fill_value`` in every element of a tensor of ``size``, of this tensor's dtype on its backend."""
        return self._new_filled(_shape_arg((size,)), fill_value, dtype, device, requires_grad)

    def new_empty(
        self, *shape: ShapeArg, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False
    ) -> "Tensor":
        """A tensor of ``shape`` (zeros here: PyTorch leaves the values unset), as ``new_zeros``."""
        return self._new_filled(_shape_arg(shape), 0.0, dtype, device, requires_grad)

    def _new_filled(
        self, shape: Tuple[int, ...], value: Any, dtype: Any, device: Any, requires_grad: builtins.bool
    ) -> "Tensor":
        backend = self.backend if device is None else devices.backend_for(device, self.backend)
        out = Tensor(TensorData.filled(shape, builtins.float(value)), backend)
        d = dtypes.stored(dtypes.as_dtype(dtype) or self._dtype)
        if d is not _FLOAT64:
            out = out._cast(d)  # (a fill value truncated toward zero for int64, as PyTorch)
        return out.requires_grad_(requires_grad)

    def tolist(self) -> Any:
        """The values as (nested) Python lists, or a float for a 0-d tensor."""
        return self._values().tolist()

    def dim(self) -> int:
        """Number of dimensions (PyTorch's spelling)."""
        return len(self._data.shape)

    def size(self, dim: Optional[int] = None) -> Union[Tuple[int, ...], int]:
        """The shape, or with ``dim`` the size of that dimension."""
        if dim is None:
            return self._data.shape
        return self._data.shape[normalize_dim(dim, self._data.dims)]

    def __getitem__(self, key: Any) -> "Tensor":
        """``self[key]``: a view for integers, slices, ``None`` and ``...`` (module 2); a copy of the
        elements picked by lists, ranges or tensors of integers, or by bool masks (as PyTorch)."""
        if advanced_index.is_advanced(key):
            return self._keep(advanced_index.index(self, key))
        return _index_view(self, key)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """``np.asarray(t)``: the values as ``numpy()`` gives them (shared memory for float64)."""
        array = self.numpy()
        if dtype is not None:
            array = array.astype(dtype, copy=False)
        return array.copy() if copy else array

    def mul(self, other: Any) -> "Tensor":
        """``self * other``"""
        return self * other

    multiply = mul

    def add(self, other: Any, *, alpha: Any = 1) -> "Tensor":
        """``self + alpha * other``"""
        return operations.add(self, other, alpha=alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> "Tensor":
        """``self - alpha * other``"""
        return operations.sub(self, other, alpha=alpha)

    subtract = sub

    def div(self, other: Any) -> "Tensor":
        """``self / other``"""
        return self / other

    divide = true_divide = div

    def matmul(self, other: "Tensor") -> "Tensor":
        """``self @ other``"""
        return operations.matmul(self, other)

    def mm(self, mat2: "Tensor") -> "Tensor":
        """The product of two matrices (2-D only), as ``torchlight.mm``."""
        return operations.mm(self, mat2)

    def bmm(self, mat2: "Tensor") -> "Tensor":
        """Batched matrix products, as ``torchlight.bmm``."""
        return operations.bmm(self, mat2)

    def dot(self, other: "Tensor") -> "Tensor":
        """The dot product of two 1-D tensors of the same size."""
        other = _tensor_of(other)
        if not isinstance(other, Tensor):
            raise TypeError(f"dot(): argument 'tensor' must be Tensor, not {type(other).__name__}")
        if self.dims != 1 or other.dims != 1:
            raise RuntimeError(f"1D tensors expected, but got {self.dims}D and {other.dims}D tensors")
        if self.shape != other.shape:
            n, m = self.numel(), other.numel()
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same number of "
                f"elements, but got {n} and {m} elements respectively"
            )
        return (self * other).sum()

    def square(self) -> "Tensor":
        """self * self, elementwise."""
        return self * self

    # The comparisons by name, as PyTorch's methods: bool tensors.
    def eq(self, other: Any) -> "Tensor":
        """``self == other``, elementwise."""
        return _compared(self.__eq__(other), other, "eq")

    def ne(self, other: Any) -> "Tensor":
        """``self != other``, elementwise."""
        return _compared(self.__ne__(other), other, "ne")

    def lt(self, other: Any) -> "Tensor":
        """``self < other``, elementwise."""
        return self < other

    def le(self, other: Any) -> "Tensor":
        """``self <= other``, elementwise."""
        return self <= other

    def gt(self, other: Any) -> "Tensor":
        """``self > other``, elementwise."""
        return self > other

    def ge(self, other: Any) -> "Tensor":
        """``self >= other``, elementwise."""
        return self >= other

    def equal(self, other: "Tensor") -> builtins.bool:
        """True when other has self's shape and the same values."""
        other = _tensor_of(other)
        if not isinstance(other, Tensor):
            raise TypeError(f"equal(): argument 'other' must be Tensor, not {type(other).__name__}")
        return self.shape == other.shape and builtins.bool(np.array_equal(self.to_numpy(), other.to_numpy()))

    def allclose(
        self, other: "Tensor", rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: builtins.bool = False
    ) -> builtins.bool:
        """``torchlight.allclose(self, other, ...)``"""
        return operations.allclose(self, other, rtol, atol, equal_nan)

    def isclose(
        self, other: "Tensor", rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: builtins.bool = False
    ) -> "Tensor":
        """``torchlight.isclose(self, other, ...)``"""
        return operations.isclose(self, other, rtol, atol, equal_nan)

    def view_as(self, other: "Tensor") -> "Tensor":
        """``self.view(other.shape)``"""
        return self.view(other.shape)

    def reshape_as(self, other: "Tensor") -> "Tensor":
        """``self.reshape(other.shape)``"""
        return self.reshape(other.shape)

    def nelement(self) -> int:
        """The number of elements (``numel()``)."""
        return self.numel()

    @property
    def is_cuda(self) -> builtins.bool:
        """True for a tensor on the "cuda" backend."""
        return self.device.type == "cuda"

    def __abs__(self) -> "Tensor":
        return self.abs()

    def __pos__(self) -> "Tensor":
        return self

    def __contains__(self, element: Any) -> builtins.bool:
        """``element in t``: whether some element of t equals ``element`` (a number or a tensor)."""
        if not isinstance(element, (Tensor, numbers.Real)):
            raise RuntimeError(
                f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element).__name__}."
            )
        return builtins.bool((self == element).any().item())

    def __len__(self) -> int:
        if not self._data.shape:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self) -> Iterator["Tensor"]:
        if not self._data.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    @property
    def data(self) -> "Tensor":
        """This tensor's values without history, sharing storage (as PyTorch's ``.data``)."""
        return self.detach()

    @data.setter
    def data(self, value: "Tensor") -> None:
        self._data = value._data

    def __deepcopy__(self, memo: dict) -> "Tensor":
        """``copy.deepcopy``: a leaf's values in new storage, with its requires_grad and a copy of its grad."""
        if not self.is_leaf:  # PyTorch's rule: copying a graph's inner node would copy half a graph
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol; "
                "deepcopy t.detach() instead"
            )
        out = self.detach().clone()
        memo[id(self)] = out
        if self.requires_grad:
            out.requires_grad_(True)
        if self.grad is not None:
            out.grad = copy.deepcopy(self.grad, memo)
        return out

    def to(self, *args: Any, **kwargs: Any) -> "Tensor":
        """This tensor on another backend or device, or as another dtype: ``to("fast")``,
        ``to("cpu")``, ``to(torchlight.float64)``, ``to(device, dtype)``, ``to(other)`` (other's
        backend and dtype). Itself when nothing changes; a move between backends is differentiable."""
        where, dtype, copy = _to_arguments(args, kwargs)
        out: Tensor = self
        if where is not None:
            out = _to_backend(self, devices.backend_for(where, self.backend))
        if dtype is not None:
            out = out._cast(dtype)
        return out.clone() if copy and out is self else out

    def _cast(self, dtype: Any) -> "Tensor":
        """This tensor as ``dtype``: itself if it is that already, else a new tensor (int64 values
        truncated toward zero, as PyTorch). Only float64 tensors are in the graph."""
        d = dtypes.stored(dtypes.as_dtype(dtype) or self._dtype)
        if d is self._dtype:
            return self
        if d is _FLOAT64:
            out = self._new(self._data.contiguous())
        else:
            out = Tensor.from_numpy(dtypes.convert(self.to_numpy(), d), self.backend)
        out._dtype = d
        return out

    def __float__(self) -> float:
        return self.item()

    def __int__(self) -> int:
        return int(self.item())

    @property
    def dtype(self) -> dtypes.dtype:
        """How the values are read: float64 (the default), int64 or bool (see ``torchlight.dtypes``)."""
        return self._dtype

    @property
    def device(self) -> devices.device:
        """Where the tensor lives: cpu for the "simple" and "fast" backends, cuda for "cuda"."""
        return devices.of_backend(self.backend)

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self._data.shape)

    def is_floating_point(self) -> builtins.bool:
        """True for float64 tensors (every tensor that is not int64 or bool)."""
        return self._dtype is _FLOAT64

    def type(self, dtype: Any = None) -> Any:
        """With no argument, the type's name ("torchlight.DoubleTensor", "LongTensor" or
        "BoolTensor"); with a dtype, this tensor as that dtype."""
        if dtype is None:
            return "torchlight." + {_FLOAT64: "Double", _INT64: "Long", _BOOL: "Bool"}[self._dtype] + "Tensor"
        return self._cast(dtype)

    def double(self) -> "Tensor":
        """This tensor as float64 (itself if it is)."""
        return self._cast(_FLOAT64)

    def long(self) -> "Tensor":
        """This tensor as int64 (values truncated toward zero; no gradient)."""
        return self._cast(_INT64)

    def cpu(self) -> "Tensor":
        """This tensor on the CPU (itself if it is there)."""
        return self.to("cpu")

    def cuda(self, device: Any = None) -> "Tensor":
        """This tensor on the "cuda" backend (an error saying why where it cannot run)."""
        return self.to("cuda")

    def numpy(self, *, force: builtins.bool = False) -> np.ndarray:
        """The values as a numpy array (int64 and bool arrays for those dtypes). A float64 tensor
        shares its memory with the array, as in PyTorch: writing to one changes the other."""
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self.device.type != "cpu":
            raise TypeError(
                f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                "to host memory first."
            )
        if self._dtype is not _FLOAT64:
            return self._values()
        data, storage = self._data, self._data.storage
        if not isinstance(storage, np.ndarray):  # (a backend keeping its storage in another form: a copy)
            return self.to_numpy()
        strides = tuple(storage.itemsize * s for s in data.strides)
        return np.lib.stride_tricks.as_strided(storage[data.offset :], data.shape, strides)

    def __index__(self) -> int:
        if self._dtype is _FLOAT64 or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __invert__(self) -> "Tensor":
        if self._dtype is not _BOOL:
            raise TypeError(f"~ (logical not) is only for bool tensors here, got a {self._dtype} tensor")
        return self == 0.0

    def sin(self) -> "Tensor":
        """Sine, elementwise."""
        return Sin.apply(self)

    def cos(self) -> "Tensor":
        """Cosine, elementwise."""
        return Cos.apply(self)

    def neg(self) -> "Tensor":
        """-self"""
        return Neg.apply(self)

    def pow(self, exponent: Any) -> "Tensor":
        """self ** exponent (a number or a tensor), elementwise."""
        return self**exponent

    def clamp(self, min: Any = None, max: Any = None) -> "Tensor":
        """Elements below ``min`` raised to it, above ``max`` lowered to it (numbers or tensors)."""
        return selection.clamp(self, min, max)

    clip = clamp

    def clamp_min(self, min: Any) -> "Tensor":
        """``clamp(min=min)``"""
        return selection.clamp(self, min, None)

    def clamp_max(self, max: Any) -> "Tensor":
        """``clamp(max=max)``"""
        return selection.clamp(self, None, max)

    def maximum(self, other: "Tensor") -> "Tensor":
        """The larger of self and other, elementwise (a tie gives each half the gradient)."""
        return selection.maximum(self, other)

    def minimum(self, other: "Tensor") -> "Tensor":
        """The smaller of self and other, elementwise."""
        return selection.minimum(self, other)

    def where(self, condition: "Tensor", other: Any) -> "Tensor":
        """self where condition is true, else other (``torchlight.where(condition, self, other)``)."""
        return selection.where(condition, self, other)

    def masked_fill(self, mask: "Tensor", value: Any) -> "Tensor":
        """A copy with ``value`` wherever ``mask`` is true (mask broadcasts to self's shape)."""
        return self._keep(selection.masked_fill(self, mask, value))

    def min(self, dim: Optional[int] = None, keepdim: builtins.bool = False) -> Any:
        """The smallest element (0-d), or with ``dim`` a pair (values, indices) along it."""
        if dim is None:
            return self._keep(S.min(self))
        values, indices = S.min(self, dim, keepdim)
        return S.MinResult(self._keep(values), indices)

    def argmax(self, dim: Optional[int] = None, keepdim: builtins.bool = False) -> "Tensor":
        """Where the largest element is along ``dim`` (in the flattened tensor for None), as int64."""
        return _as_int64(S.argmax(self, dim, keepdim))

    def argmin(self, dim: Optional[int] = None, keepdim: builtins.bool = False) -> "Tensor":
        """Where the smallest element is along ``dim`` (in the flattened tensor for None), as int64."""
        return _as_int64(S.argmin(self, dim, keepdim))

    def var(
        self, dim: Any = None, unbiased: builtins.bool = True, keepdim: builtins.bool = False, *, correction: Any = None
    ) -> "Tensor":
        """The variance over ``dim`` (divided by n - 1 unless ``unbiased=False`` or ``correction``)."""
        return S.var(self, dim, unbiased, keepdim, correction=correction)

    def std(
        self, dim: Any = None, unbiased: builtins.bool = True, keepdim: builtins.bool = False, *, correction: Any = None
    ) -> "Tensor":
        """The standard deviation over ``dim`` (the square root of ``var``)."""
        return S.std(self, dim, unbiased, keepdim, correction=correction)

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: builtins.bool = False) -> "Tensor":
        """The p-norm over ``dim`` (all elements by default): 2 (``"fro"``), 1, inf, ... as PyTorch."""
        return S.norm(self, p, dim, keepdim)

    def all(self, dim: Optional[int] = None) -> "Tensor":
        """1.0 where every element (along ``dim``) is non-zero, else 0.0 (no gradient)."""
        dims = self._dims(dim)
        nonzero = 1.0 - (self.detach() == 0.0)
        for d in dims:
            nonzero = self.backend.reduce(scalar.mul, 1.0)(nonzero, d)
        return _as_bool(self._drop(nonzero, dims))

    def any(self, dim: Optional[int] = None, keepdim: builtins.bool = False) -> "Tensor":
        """True where some element (along ``dim``) is non-zero (a bool tensor; no gradient)."""
        return _as_bool(S.any(self, dim, keepdim))

    def t(self) -> "Tensor":
        """A matrix's transpose; a vector or 0-d tensor unchanged (as PyTorch)."""
        if self.dims > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.dims}D")
        return self.transpose(0, 1) if self.dims == 2 else self

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> "Tensor":
        """Dimensions ``start_dim`` to ``end_dim`` (default: all) merged into one."""
        start, end = normalize_dim(start_dim, self.dims), normalize_dim(end_dim, self.dims)
        if not self.dims:  # (dims 0 and -1 name a 0-d tensor, as in PyTorch)
            return self.reshape(1)
        if start > end:
            raise RuntimeError(f"flatten() has invalid args: start_dim {start_dim} cannot come after end_dim {end_dim}")
        shape = self.shape
        return self.reshape(shape[:start] + (prod(shape[start : end + 1]),) + shape[end + 1 :])

    def gather(self, dim: int, index: "Tensor") -> "Tensor":
        """Values picked along ``dim`` at positions ``index`` (a tensor of whole numbers), as PyTorch."""
        return Gather.apply(self, dim, index)

    def expand_as(self, other: "Tensor") -> "Tensor":
        """``self.expand(other.shape)``"""
        return self.expand(other.shape)

    def repeat(self, *sizes: Any) -> "Tensor":
        """self tiled ``sizes[i]`` times along dimension i: ``tensor([1, 2]).repeat(2)`` is [1, 2, 1, 2]."""
        return self._keep(joining.repeat(self, *sizes))

    def softmax(self, dim: int) -> "Tensor":
        """``torchlight.nn.functional.softmax(self, dim)``"""
        from .nn import functional as F  # (nn sits above tensors: imported when first used)

        return F.softmax(self, dim)

    def log_softmax(self, dim: int) -> "Tensor":
        """``torchlight.nn.functional.log_softmax(self, dim)``"""
        from .nn import functional as F

        return F.log_softmax(self, dim)

    # (last in the class: these names would hide the builtins from annotations below them)
    def float(self) -> "Tensor":
        """This tensor as PyTorch's float32, which torchlight holds as float64 (itself if float)."""
        return self._cast(dtypes.float32)

    def bool(self) -> "Tensor":
        """This tensor as bool: true where non-zero (no gradient)."""
        return self._cast(_BOOL)


def _to_arguments(args: Tuple[Any, ...], kwargs: dict) -> Tuple[Any, Any, builtins.bool]:
    """``to()``'s arguments as (device or backend, dtype, copy); None where not given."""
    where, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)  # (nothing here is asynchronous)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, Tensor):
            where, dtype = a.backend, a._dtype
        elif isinstance(a, dtypes.dtype) or a in (builtins.float, builtins.int, builtins.bool):
            dtype = a
        elif isinstance(a, (str, devices.device, backends.TensorBackend)):
            where = a
        else:
            raise TypeError(
                f"to() expected a device, a backend name, a dtype or a Tensor, got {type(a).__name__}: {a!r}"
            )
    return where, dtype, copy


def _compared(result: Any, other: Any, fn: str) -> "Tensor":
    if result is NotImplemented:
        raise TypeError(f"{fn}(): argument 'other' must be a Tensor or a number, not {type(other).__name__}")
    return result


_RANKS = {_BOOL: 0, _INT64: 1, _FLOAT64: 2}  # what each dtype can hold: bool < int64 < float64
_NAMES = {_BOOL: "Bool", _INT64: "Long", _FLOAT64: "Float"}


def write_out(result: Any, out: Any, fn: str, exact_dtype: builtins.bool = False) -> "Tensor":
    """``fn(..., out=out)``: result's values written into ``out``, which is returned, as PyTorch does.

    As in PyTorch, ``out`` keeps its dtype (a result it cannot hold, a float in an int64 tensor, is
    refused), takes the result's shape (a tensor of another shape that had elements is resized,
    with PyTorch's warning), and no gradient flows through it: with recording on, an input or
    ``out`` that requires grad is an error.
    """
    out = _tensor_of(out)
    if not isinstance(out, Tensor):
        raise TypeError(f"{fn}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if is_grad_enabled() and (result.requires_grad or out.requires_grad):
        raise RuntimeError(
            f"{fn}(): functions with out=... arguments don't support automatic differentiation, but one of "
            "the arguments requires grad."
        )
    if exact_dtype and out._dtype is not result._dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {result._dtype}, but got {out._dtype} instead")
    if _RANKS[result._dtype] > _RANKS[out._dtype]:
        raise RuntimeError(
            f"result type {_NAMES[result._dtype]} can't be cast to the desired output type {_NAMES[out._dtype]}"
        )
    if out.shape != result.shape:
        if out.numel():
            warnings.warn(
                f"An output with one or more elements was resized since it had shape {list(out.shape)}, which "
                f"does not match the required output shape {list(result.shape)}. This behavior is deprecated, "
                "and in a future PyTorch release outputs will not be resized unless they have zero elements. "
                "You can explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0).",
                UserWarning,
                stacklevel=3,
            )
        out._data = Tensor(TensorData.zeros(result.shape), out.backend)._data  # new storage, as PyTorch's resize
    with no_grad():
        out.copy_(result)
    return out
