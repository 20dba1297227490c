"""Module 2: Tensor, an n-dimensional array of float64 that records the operations applied to it.

Tensor is a thin façade: data lives in a ``TensorData`` (storage, shape, strides), computation
happens in a backend (``t.backend``), and every operation is a Function from ``torchlight/ops/``,
so one engine differentiates Scalars and Tensors alike.

This file holds the class that modules 1 and 2 read: construction, attributes, backward, the
arithmetic, the operations of the stages and views. Files of their own add the rest to Tensor when
``torchlight`` is imported (``@extends(Tensor)``, ``extension.py``). Module 2's:
``tensor_variable.py`` (Tensor's side of the Variable protocol, what module 1's engine asks of a
value: ``_match_grad``, ``accumulate_derivative``, ...), ``tensor_comparisons.py`` (``<``, ``==``,
``is_close``, ...) and ``tensor_conversions.py`` (``to_numpy``, ``item``, ``repr``, ``to`` another
backend). Later modules': ``tensor_fused.py`` (module 3: ``-``, ``/`` and ``tanh`` as single fused
Functions, replacing the methods marked ``@extension_point`` here), ``tensor_pytorch.py`` (module
4: dtype, device, ``len``, ``size``, ``tolist`` and the rest of PyTorch's names),
``tensor_inplace.py`` (module 5: ``add_``, ``t[key] = value``, ...) and ``tensor_autograd.py``
(module 5: the version counter and tangent check that module 5's engine asks of a Tensor).
"""

import numbers
from collections import namedtuple
from typing import TYPE_CHECKING, Any, Optional, Tuple, Union

import numpy as np

from . import backends, devices, dtypes, random
from .autograd.function import History
from .autograd.graph import BackwardPass, backpropagate
from .autograd.variable import Variable
from .extension import extension_point
from .ops import elementwise
from .ops.elementwise import Abs, Add, Exp, Log, Mul, Neg, Pow, ReLU, Sigmoid, Sqrt
from .ops.matmul import MatMul
from .ops.movement import BroadcastView, Copy, Index, Permute, Squeeze, Unsqueeze, View
from .ops.reductions import Max, MaxDim, Sum
from .tensor_data import ShapeArg, TensorData, _shape_arg, _valid_shape, infer_shape, normalize_dim, prod

__all__ = ["Tensor", "tensor", "zeros", "ones", "rand"]

BackendLike = Union[str, backends.TensorBackend, None]

# What ``max(dim)`` returns, as PyTorch's ``torch.return_types.max``.
MaxResult = namedtuple("max", ["values", "indices"])  # type: ignore[name-match]

# Every tensor holds float64; its dtype says how to read the values (see torchlight.dtypes).
_FLOAT64, _INT64, _BOOL = dtypes.float64, dtypes.int64, dtypes.bool_


def _as_bool(t: "Tensor") -> "Tensor":
    """t (holding 0.0 and 1.0) labelled bool: comparisons give bool tensors, as PyTorch's."""
    t._dtype = _BOOL
    return t


def _as_int64(t: "Tensor") -> "Tensor":
    """t (holding whole numbers) labelled int64: positions and counts, as PyTorch gives them."""
    t._dtype = _INT64
    return t


def _backend(backend: BackendLike) -> backends.TensorBackend:
    return backends.default() if backend is None else backends.get(backend)


class Tensor(Variable):
    """An n-dimensional array in the autodiff graph.

    Make one with ``torchlight.tensor(data)``, ``zeros``, ``ones`` or ``rand``. A tensor made with
    ``requires_grad=True`` is a leaf that receives ``.grad`` from ``backward()``; results of
    operations on it record their history (``grad_fn``).

    :param data: its storage, shape and strides.
    :param backend: the backend or its name that runs its operations (default: the default backend).
    :param history: how it was computed (None: a leaf).
    """

    __slots__ = ("_data", "backend", "_dtype", "__weakref__")

    # numpy defers to Tensor's operators: np.float64(2.0) * t is a Tensor, not an array of Tensors.
    __array_ufunc__ = None

    def __init__(self, data: TensorData, backend: BackendLike = None, history: Optional[History] = None):
        if not isinstance(data, TensorData):
            raise TypeError(
                f"Tensor(...) takes a TensorData; to make a tensor from {type(data).__name__}, use "
                "torchlight.tensor(data)"
            )
        self.backend = backend if isinstance(backend, backends.TensorBackend) else _backend(backend)
        if type(data.storage) is not self.backend.storage_type:  # made elsewhere (host or GPU): copied over
            data = self.backend.adopt(data)
        self._data = data
        self.history = history
        self._output_nr = 0
        self.unique_id = Variable._next_id()
        self.grad: Optional["Tensor"] = None
        self._dtype = _FLOAT64

    # -- construction ---------------------------------------------------------------------------

    @staticmethod
    def from_numpy(array: np.ndarray, backend: BackendLike = None) -> "Tensor":
        """A tensor with the array's shape and values; a C-contiguous float64 array is shared, not copied."""
        array = np.asarray(array)
        if array.dtype != np.float64 or not array.flags.c_contiguous:
            array = np.ascontiguousarray(array, dtype=np.float64)
        return Tensor(TensorData(array.reshape(-1), array.shape), backend)

    def _new(self, data: TensorData, backend: Optional[backends.TensorBackend] = None) -> "Tensor":
        """A new tensor without history over ``data``, on ``backend`` (default: this tensor's).

        The one way operations make their results: from a view of an input's data, or new data.
        """
        return Tensor(data, self.backend if backend is None else backend)

    def _keep(self, out: "Tensor") -> "Tensor":
        """out labelled with this tensor's dtype: for views and copies, which keep the values."""
        if self._dtype is not _FLOAT64:
            out._dtype = self._dtype
        return out

    def _constant(self, array: Any) -> "Tensor":
        """A constant tensor (from a number or an array) on this tensor's backend."""
        return Tensor.from_numpy(array, self.backend)

    # -- attributes -----------------------------------------------------------------------------

    @property
    def shape(self) -> Tuple[int, ...]:
        """The size of each dimension, as a tuple (``torch.Size`` in PyTorch)."""
        return self._data.shape

    @property
    def dims(self) -> int:
        """Number of dimensions."""
        return len(self._data.shape)

    def numel(self) -> int:
        """Number of elements."""
        return self._data.size

    @property
    def requires_grad(self) -> bool:
        """True when operations on this tensor are recorded for backward."""
        return self.history is not None

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Turn gradient recording for this leaf on (or off); returns self."""
        _check_flag(requires_grad, "requires_grad_", "requires_grad")
        if requires_grad:
            if self._dtype is not _FLOAT64:
                raise RuntimeError(
                    f"only Tensors of floating point dtype can require gradients (this one is {self._dtype}); "
                    "convert it first with .double()"
                )
            if self.history is None:
                self.history = History()
        elif self.history is not None:
            if self.history.last_fn is not None:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a "
                    "computed variable in a subgraph that doesn't require differentiation use "
                    "var_no_grad = var.detach()."
                )
            self.history = None
        return self

    @property
    def is_leaf(self) -> bool:
        """True unless this tensor was computed by a recorded operation (as PyTorch)."""
        return self.history is None or self.history.last_fn is None

    @property
    def grad_fn(self) -> Optional[type]:
        """The Function class that made this tensor (None for a leaf or a constant). The graph
        node itself, with PyTorch's ``next_functions``, is ``history``."""
        return None if self.history is None else self.history.last_fn

    def detach(self) -> "Tensor":
        """A tensor sharing this one's storage, outside the graph."""
        return self._keep(self._new(self._data))

    def zero_grad_(self) -> None:
        """Forget the accumulated gradient (``.grad = None``)."""
        self.grad = None

    def is_contiguous(self) -> bool:
        """True when the elements lie in storage in row-major order without gaps."""
        return self._data.is_contiguous()

    def backward(
        self, gradient: Any = None, retain_graph: Optional[bool] = None, create_graph: bool = False, *, grad: Any = None
    ) -> None:
        """Accumulate into ``.grad`` of every leaf the gradient of this tensor (times ``gradient``).

        ``gradient`` may be left out for a one-element tensor (``grad=`` is the same argument by
        the course contract's name). The graph's saved tensors are freed afterwards unless
        ``retain_graph=True`` (default: ``create_graph``); ``create_graph=True`` records the
        backward pass itself, for higher-order gradients.

        :param gradient: the gradient of the final result with respect to this tensor (its shape).
        :param retain_graph: keep the graph's saved tensors for another backward.
        :param create_graph: record the backward pass, for higher-order gradients.
        :param grad: ``gradient``, by the course contract's name.
        :raises RuntimeError: for a tensor with no graph, or a gradient of another shape.
        """
        if grad is not None:
            if gradient is not None:
                raise TypeError("backward() got both gradient= and grad= (the same argument): pass one")
            gradient = grad
        if self.history is None:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn "
                "(make the inputs with requires_grad=True, and do not compute under no_grad())"
            )
        grad = self._default_grad() if gradient is None else self._lift(gradient)
        if grad.shape != self.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[0] has a shape of {grad.shape} and output[0] has a "
                f"shape of {self.shape}."
            )
        if retain_graph is None:
            retain_graph = create_graph
        backpropagate(self, grad, BackwardPass.make(self, retain_graph, create_graph))

    # -- operators ------------------------------------------------------------------------------

    def _lift(self, x: Any) -> "Tensor":
        """A number becomes a constant 0-d tensor on this backend; a Tensor stays itself."""
        if isinstance(x, Tensor):
            return x
        if isinstance(x, numbers.Real):
            return self._new(TensorData._filled((), float(x)))  # (() is a valid shape: no checks)
        if isinstance(_tensor_of(x), Tensor):  # an nn.Parameter stands for its value
            return _tensor_of(x)
        raise TypeError(f"cannot combine a Tensor with {type(x).__name__}: {x!r}")

    def __add__(self, b: Any) -> "Tensor":
        return Add.apply(self, self._lift(b))

    def __radd__(self, b: Any) -> "Tensor":
        return Add.apply(self._lift(b), self)

    # -, / and tanh are composed here (a + (-b), a * inv(b), 2 * sigmoid(2a) - 1: ops/elementwise.py);
    # module 3 replaces them with single fused Functions, the same values faster (tensor_fused.py).

    @extension_point
    def __sub__(self, b: Any) -> "Tensor":
        return elementwise.sub(self, self._lift(b))

    @extension_point
    def __rsub__(self, b: Any) -> "Tensor":
        return elementwise.sub(self._lift(b), self)

    def __mul__(self, b: Any) -> "Tensor":
        return Mul.apply(self, self._lift(b))

    def __rmul__(self, b: Any) -> "Tensor":
        return Mul.apply(self._lift(b), self)

    @extension_point
    def __truediv__(self, b: Any) -> "Tensor":
        return elementwise.div(self, self._lift(b))

    @extension_point
    def __rtruediv__(self, b: Any) -> "Tensor":
        return elementwise.div(self._lift(b), self)

    def __pow__(self, b: Any) -> "Tensor":
        return Pow.apply(self, self._lift(b))

    def __rpow__(self, b: Any) -> "Tensor":
        return Pow.apply(self._lift(b), self)

    def __matmul__(self, b: "Tensor") -> "Tensor":
        b = _tensor_of(b)
        if not isinstance(b, Tensor):
            raise TypeError(f"matmul needs two tensors, got Tensor @ {type(b).__name__}")
        return MatMul.apply(self, b)

    def __rmatmul__(self, b: Any) -> "Tensor":
        raise TypeError(f"matmul needs two tensors, got {type(b).__name__} @ Tensor")

    def __neg__(self) -> "Tensor":
        return Neg.apply(self)

    @extension_point  # module 4 adds indexing by lists and tensors (tensor_pytorch.py)
    def __getitem__(self, key: Any) -> "Tensor":
        return self._keep(Index.apply(self, key))

    # -- elementwise functions ------------------------------------------------------------------

    def exp(self) -> "Tensor":
        """e ** self, elementwise."""
        return Exp.apply(self)

    def log(self) -> "Tensor":
        """Natural logarithm, elementwise (-inf at 0, as PyTorch)."""
        return Log.apply(self)

    def sigmoid(self) -> "Tensor":
        """1 / (1 + e ** -self), elementwise."""
        return Sigmoid.apply(self)

    def relu(self) -> "Tensor":
        """max(self, 0), elementwise."""
        return ReLU.apply(self)

    @extension_point
    def tanh(self) -> "Tensor":
        """Hyperbolic tangent, elementwise (composed here; fused from module 3 on)."""
        return elementwise.tanh(self)

    def sqrt(self) -> "Tensor":
        """Square root, elementwise."""
        return Sqrt.apply(self)

    def abs(self) -> "Tensor":
        """|self|, elementwise."""
        return Abs.apply(self)

    # -- reductions -----------------------------------------------------------------------------

    def _dims(self, dim: Any) -> Tuple[int, ...]:
        if dim is None:
            return tuple(range(self.dims))
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        out = tuple(sorted({normalize_dim(d, self.dims) for d in dims}))
        if len(out) != len(dims):  # (0, -2) of a matrix names dimension 0 twice: PyTorch refuses it too
            raise RuntimeError(f"dim {list(dims)} names a dimension more than once (tensor of {self.dims} dimensions)")
        return out if self.dims else ()

    def _drop(self, t: "Tensor", dims: Tuple[int, ...]) -> "Tensor":
        """t without the size-1 dimensions ``dims`` that a keepdim reduction left."""
        for d in reversed(dims):
            t = Squeeze.apply(t, d)
        return t

    def sum(self, dim: Any = None, keepdim: bool = False) -> "Tensor":
        """The sum over ``dim`` (an int, a tuple, or None for all dimensions)."""
        _check_flag(keepdim, "sum", "keepdim")
        out = Sum.apply(self, self._dims(dim), keepdim)
        return out if self._dtype is _FLOAT64 else _as_int64(out)  # counts, as PyTorch's sum of ints and bools

    def mean(self, dim: Any = None, keepdim: bool = False) -> "Tensor":
        """The mean over ``dim`` (an int, a tuple, or None for all dimensions)."""
        dims = self._dims(dim)
        count = prod(self.shape[d] for d in dims)
        return self.sum(dims, keepdim) * (1.0 / count if count else float("nan"))  # 0 / 0, as PyTorch

    def max(self, dim: Optional[int] = None, keepdim: bool = False) -> Any:
        """The largest element (0-d), or with ``dim`` a pair (values, indices) along it (int64 indices, no gradient)."""
        _check_flag(keepdim, "max", "keepdim")
        if dim is None:
            return self._keep(Max.apply(self))
        dim = normalize_dim(dim, self.dims)  # a 0-d tensor has dims -1 and 0, as in PyTorch
        if not self.dims:
            return MaxResult(self.clone(), _as_int64(self._new(TensorData.zeros(()))))
        values, indices = MaxDim.apply(self, normalize_dim(dim, self.dims), keepdim)
        return MaxResult(self._keep(values), _as_int64(indices))

    # -- shape and movement ---------------------------------------------------------------------

    def permute(self, *order: int) -> "Tensor":
        """A view with dimensions reordered: dimension i of the result is ``order[i]`` of self."""
        if len(order) == 1 and isinstance(order[0], (tuple, list)):
            order = tuple(order[0])
        return self._keep(Permute.apply(self, order))

    def transpose(self, dim0: int, dim1: int) -> "Tensor":
        """A view with two dimensions swapped (of a 0-d tensor, dims 0 and -1: the same view, as PyTorch)."""
        order = list(range(self.dims))
        dim0, dim1 = normalize_dim(dim0, self.dims), normalize_dim(dim1, self.dims)
        if order:
            order[dim0], order[dim1] = order[dim1], order[dim0]
        return self._keep(Permute.apply(self, tuple(order)))

    @property
    def T(self) -> "Tensor":
        """A view with the dimensions in reverse order: a matrix's transpose (as PyTorch's ``.T``)."""
        return self._keep(Permute.apply(self, tuple(range(self.dims - 1, -1, -1))))

    def view(self, *shape: ShapeArg) -> "Tensor":
        """A view with a new shape (one entry may be -1); self must be contiguous."""
        return self._keep(View.apply(self, _shape_arg(shape)))

    def reshape(self, *shape: ShapeArg) -> "Tensor":
        """A tensor with a new shape: a view when possible, else a copy."""
        sizes = infer_shape(_shape_arg(shape), self.numel())  # a bad shape fails before any copy
        return self.contiguous().view(sizes)

    def contiguous(self) -> "Tensor":
        """Self if contiguous, else a contiguous copy."""
        return self if self._data.is_contiguous() else self._keep(Copy.apply(self))

    def clone(self) -> "Tensor":
        """A copy in new storage (differentiable)."""
        return self._keep(Copy.apply(self))

    def expand(self, *shape: ShapeArg) -> "Tensor":
        """A view repeating dimensions of size 1 to ``shape`` (-1 keeps a size), without copying."""
        return self._keep(BroadcastView.apply(self, _shape_arg(shape)))

    def unsqueeze(self, dim: int) -> "Tensor":
        """A view with a dimension of size 1 inserted at ``dim``."""
        return self._keep(Unsqueeze.apply(self, dim))

    def squeeze(self, dim: Optional[int] = None) -> "Tensor":
        """A view without dimension ``dim`` if its size is 1 (without every size-1 dim if None)."""
        if dim is None:
            dims = tuple(d for d, n in enumerate(self.shape) if n == 1)
            return self._keep(self._drop(self, dims)) if dims else self
        dim = normalize_dim(dim, self.dims)  # (a 0-d tensor has dims 0 and -1, and nothing to squeeze)
        return self._keep(Squeeze.apply(self, dim)) if self.dims and self.shape[dim] == 1 else self

    if TYPE_CHECKING:  # what the files named above add: the type checker cannot see it from here

        def __getattr__(self, name: str) -> Any: ...

        # (operators it looks up on the class itself: tensor_comparisons.py's)
        def __lt__(self, b: Any) -> "Tensor": ...
        def __gt__(self, b: Any) -> "Tensor": ...
        def __le__(self, b: Any) -> "Tensor": ...
        def __ge__(self, b: Any) -> "Tensor": ...
        def __eq__(self, b: Any) -> "Tensor": ...  # type: ignore[override]
        def __ne__(self, b: Any) -> "Tensor": ...  # type: ignore[override]


def _check_flag(value: Any, fn: str, arg: str) -> None:
    """A TypeError unless value is True or False (as PyTorch's for ``keepdim=1`` or ``requires_grad="yes"``)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument '{arg}' must be bool (True or False), not {type(value).__name__}: {value!r}")


def _tensor_of(x: Any) -> Any:
    """x, or the Tensor that x (an ``nn.Parameter``) holds: a Parameter stands for its value."""
    value = getattr(x, "value", None) if not isinstance(x, Tensor) else None
    return value if isinstance(value, Tensor) else x


# -- creation -----------------------------------------------------------------------------------


def tensor(
    data: Any, backend: BackendLike = None, requires_grad: bool = False, *, dtype: Any = None, device: Any = None
) -> Tensor:
    """A new tensor (float64, or ``dtype``) from a number, nested lists of numbers, a numpy array or a Tensor.

    Integers beyond 2**53 in magnitude are refused (float64, which holds every tensor, would round
    them), unless ``dtype`` is a floating one, which rounds in PyTorch too; see ``dtypes.exact_float``.

    :param data: a number, nested lists of numbers, a numpy array or a Tensor.
    :param backend: the backend or its name (default: the default backend).
    :param requires_grad: make it a leaf that receives ``.grad``.
    :param dtype: the dtype (default: float64, or data's for a Tensor).
    :param device: ``"cpu"`` or ``"cuda"``, which picks the backend (not with backend).
    """
    rounding = (dtypes.as_dtype(dtype) or _INT64).is_floating_point
    array = data.to_numpy() if isinstance(data, Tensor) else _numbers_array(data, rounding)
    default = data._dtype if isinstance(data, Tensor) else _FLOAT64
    return _typed(array, dtype, device, backend, requires_grad, default)


def _typed(
    array: np.ndarray,
    dtype: Any = None,
    device: Any = None,
    backend: BackendLike = None,
    requires_grad: bool = False,
    default: dtypes.dtype = _FLOAT64,
) -> Tensor:
    """A new tensor of ``array``'s float64 values as ``dtype`` (else ``default``) would hold them,
    on ``device`` or ``backend`` (else the default backend)."""
    d = dtypes.stored(dtypes.as_dtype(dtype) or default)
    t = Tensor.from_numpy(dtypes.convert(array, d), _place(device, backend))
    t._dtype = d
    return t.requires_grad_(False if requires_grad is None else requires_grad)  # (None: the default, as PyTorch)


def _place(device: Any, backend: BackendLike) -> backends.TensorBackend:
    """The backend that ``device=`` (PyTorch's) or ``backend=`` (torchlight's) names; the default if neither."""
    if device is None:
        return _backend(backend)
    if backend is not None:
        raise ValueError(f"pass device= or backend=, not both (got device={device!r} and backend={backend!r})")
    return devices.backend_for(device)


def _labelled(t: Tensor, dtype: Any, requires_grad: bool) -> Tensor:
    """t (zeros or ones, right as any dtype) labelled ``dtype``, then requires_grad_."""
    if dtype is not None:
        t._dtype = dtypes.stored(dtypes.as_dtype(dtype) or _FLOAT64)
    return t.requires_grad_(False if requires_grad is None else requires_grad)  # (None: the default, as PyTorch)


def _numbers_array(data: Any, rounding: bool = False) -> np.ndarray:
    """``data`` as a new float64 array: bools and ints convert (ints beyond 2**53 in magnitude only
    with ``rounding``), and anything that is not a real number (None, a string, a complex number,
    ...) is a TypeError naming it."""
    try:
        array = np.array(data)  # a copy, of an array too: the tensor never shares the caller's
    except RuntimeError:  # a tensor in the lists requires grad: numpy's read of it refuses (as PyTorch's)
        array = np.array(_detached(data))
    except ValueError as e:  # nested lists of different lengths
        raise ValueError(_explain_bad_data(data) or f"tensor(): {e}") from None
    kind = array.dtype.kind
    if kind == "O":  # Python objects numpy could not type: a Fraction, a 0-d Tensor, or no number at all
        for x in array.flat:
            if not isinstance(x, (numbers.Real, Tensor)):
                raise TypeError(f"tensor(): expected numbers (or nested lists of them), got {type(x).__name__}: {x!r}")
    elif kind not in "biuf":  # (numpy would parse the string "1.5" as 1.5, and None as nan)
        if isinstance(data, np.ndarray):
            raise TypeError(f"tensor(): expected an array of real numbers, got a numpy array of dtype {data.dtype}")
        raise TypeError(_explain_bad_data(data) or f"tensor(): expected real numbers, got values of type {array.dtype}")
    return dtypes.exact_floats(array, "tensor()", rounding)


def _detached(data: Any) -> Any:
    """data with every tensor in its (nested) lists detached: ``tensor([a, b])`` copies the values."""
    if isinstance(data, Tensor):
        return data.detach()
    return [_detached(x) for x in data] if isinstance(data, (list, tuple)) else data


def _explain_bad_data(data: Any, dim: int = 0) -> str:
    """Why ``data`` does not make a tensor: the first ragged row, or the first non-number."""
    if isinstance(data, (list, tuple)):
        lengths = [len(x) if isinstance(x, (list, tuple)) else None for x in data]
        for i, n in enumerate(lengths):
            if n != lengths[0]:
                first = "a number" if lengths[0] is None else f"a sequence of length {lengths[0]}"
                got = "a number" if n is None else f"length {n}"
                return (
                    f"tensor(): nested lists must be rectangular: expected {first} at dim {dim + 1} "
                    f"(element {i} has {got})"
                )
        for x in data:
            message = _explain_bad_data(x, dim + 1)
            if message:
                return message
        return ""
    if isinstance(data, numbers.Real):
        return ""
    return f"tensor(): expected numbers (or nested lists of them), got {type(data).__name__}: {data!r}"


def zeros(
    *shape: ShapeArg, backend: BackendLike = None, requires_grad: bool = False, dtype: Any = None, device: Any = None
) -> Tensor:
    """A tensor of zeros: ``zeros(2, 3)`` or ``zeros((2, 3))``.

    :param shape: the shape: ints, or one tuple of them.
    :param backend: the backend or its name (default: the default backend).
    :param requires_grad: make it a leaf that receives ``.grad``.
    :param dtype: the dtype (default: float64).
    :param device: ``"cpu"`` or ``"cuda"``, which picks the backend (not with backend).
    """
    return _labelled(Tensor(TensorData.zeros(_shape_arg(shape)), _place(device, backend)), dtype, requires_grad)


def ones(
    *shape: ShapeArg, backend: BackendLike = None, requires_grad: bool = False, dtype: Any = None, device: Any = None
) -> Tensor:
    """A tensor of ones: ``ones(2, 3)`` or ``ones((2, 3))``.

    :param shape: the shape: ints, or one tuple of them.
    :param backend: the backend or its name (default: the default backend).
    :param requires_grad: make it a leaf that receives ``.grad``.
    :param dtype: the dtype (default: float64).
    :param device: ``"cpu"`` or ``"cuda"``, which picks the backend (not with backend).
    """
    return _labelled(Tensor(TensorData.filled(_shape_arg(shape), 1.0), _place(device, backend)), dtype, requires_grad)


def rand(
    *shape: ShapeArg,
    backend: BackendLike = None,
    requires_grad: bool = False,
    seed: Optional[int] = None,
    generator: Optional[np.random.Generator] = None,
    dtype: Any = None,
    device: Any = None,
) -> Tensor:
    """Uniform random values in [0, 1), drawn from torchlight's generator (``torchlight.manual_seed``),
    or from ``generator`` (a numpy Generator), or from a new one seeded with ``seed``.

    :param shape: the shape: ints, or one tuple of them.
    :param backend: the backend or its name (default: the default backend).
    :param requires_grad: make it a leaf that receives ``.grad``.
    :param seed: draw from a new generator seeded with it.
    :param generator: a numpy Generator to draw from (default: torchlight's).
    :param dtype: a floating dtype (default: float64).
    :param device: ``"cpu"`` or ``"cuda"``, which picks the backend (not with backend).
    """
    sizes = _valid_shape(_shape_arg(shape))  # checked here: numpy's own error does not name the shape
    rng = random.generator(seed, generator)
    return _typed(rng.random(sizes), _floating(dtype, "rand"), device, backend, requires_grad)


def _floating(dtype: Any, fn: str) -> Any:
    """dtype, checked to be a floating one (random floats have no int64 or bool form)."""
    d = dtypes.as_dtype(dtype)
    if d is not None and not d.is_floating_point:
        raise RuntimeError(
            f"{fn}(): random floats cannot be {d}: pass dtype=torchlight.float64 (or float32), or use randint"
        )
    return d
