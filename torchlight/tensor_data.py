"""Module 2: TensorData, a tensor's storage, shape and strides, and every shape computation.

A tensor is a view of a flat 1-D ``storage`` (a float64 numpy array): the element at index
``(i0, i1, ...)`` lives at ``offset + i0 * strides[0] + i1 * strides[1] + ...``. Permuting,
slicing, expanding and viewing only change ``shape``, ``strides`` and ``offset``; they never copy.
All shape logic lives here, in Python; kernels see only flat arrays with shape and strides.

On the "cuda" backend (module 3) the storage is a device array instead, in the GPU's memory: it
slices like a numpy array, but its values reach the host only by a copy. The few places here that
read values (``to_numpy``, ``get``, ``set``, ``contiguous``) make that copy; nothing else changes.
"""

import math
from functools import lru_cache
from typing import Any, Iterable, Iterator, Optional, Sequence, Tuple, Union

import numpy as np

from .indexing import broadcast_index, index_to_position, is_contiguous, to_index

__all__ = [
    "IndexingError",
    "TensorData",
    "broadcast_index",
    "broadcasts_to",
    "index_to_position",
    "infer_shape",
    "is_device_array",
    "shape_broadcast",
    "strides_from_shape",
    "to_index",
]

Shape = Tuple[int, ...]
ShapeArg = Union[int, Sequence[int]]  # f(2, 3) or f((2, 3)), as PyTorch accepts both


class IndexingError(IndexError):
    """An index or dimension that does not fit a tensor's shape."""


class _Version:
    """The in-place modification counter, one object shared by every view of a storage."""

    value = 0  # (a class default rather than an __init__: every new tensor makes one, and it is half the cost)


def prod(shape: Iterable[int]) -> int:
    """The number of elements of a tensor of this shape (1 for the 0-d shape ())."""
    return math.prod(shape)


# Sizes, element counts and byte counts are 64-bit signed integers, as in PyTorch: a shape whose
# count does not fit is refused where it is made, never left to wrap around (or to hang a kernel
# that loops over 2**64 elements).
INT64_MAX = 2**63 - 1
_MAX_STORAGE = INT64_MAX // 8  # float64 elements whose byte count (8 each) still fits


def check_storage(shape: Sequence[int]) -> None:
    """PyTorch's RuntimeError for a new storage of this shape whose byte count (8 per float64
    element) is more than an int64 counts."""
    if prod(shape) > _MAX_STORAGE:
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={list(shape)}: {prod(shape)} float64 elements "
            f"of 8 bytes each are more than 2**63 - 1 bytes"
        )


def strides_from_shape(shape: Sequence[int]) -> Shape:
    """The strides of a contiguous (row-major) tensor of this shape: (3, 1) for (2, 3).

    The last dimension has stride 1; each dimension's stride is the one after it times that
    dimension's size. (As PyTorch: a dimension of size 0 counts as size 1 here, so that it does not
    zero the strides of the dimensions before it.)

    :param shape: the tensor's shape.
    """
    # BEGIN SOLUTION 2.1
    strides = []
    step = 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))
    # END SOLUTION 2.1


# Shapes recur (every operation of a training step meets the same few), so their derived forms
# are computed once. Both caches hold immutable tuples or arrays that nothing writes to.
@lru_cache(maxsize=1024)
def _contiguous_strides(shape: Shape) -> Shape:
    """strides_from_shape(shape), computed once per shape (a tuple)."""
    return strides_from_shape(shape)


@lru_cache(maxsize=1024)
def _int64_array(values: Shape) -> np.ndarray:
    """``values`` as the int64 array a kernel takes for a shape or strides (shared: kernels only read it)."""
    return np.array(values, dtype=np.int64)


@lru_cache(maxsize=1024)
def _contiguous_layout(shape: Shape) -> Tuple[Shape, int, np.ndarray, np.ndarray]:
    """A contiguous tensor's strides and element count (refused past int64), and its shape and
    strides as kernel arguments, once per shape (sizes known valid)."""
    strides = _contiguous_strides(shape)
    return strides, _storage_size(shape), _int64_array(shape), _int64_array(strides)


def _storage_size(shape: Shape) -> int:
    """The element count of a new storage of ``shape`` (sizes known valid), refused past int64."""
    size = math.prod(shape)
    if size > _MAX_STORAGE:
        check_storage(shape)
    return size


def shape_broadcast(shape1: Sequence[int], shape2: Sequence[int]) -> Shape:
    """The shape that two broadcast shapes make together (numpy's rules).

    Shapes are aligned on their last dimension; each pair of sizes must be equal or contain a 1.

    :param shape1: one shape.
    :param shape2: the other.
    :raises RuntimeError: when they do not broadcast, naming the dimension.
    """
    # BEGIN SOLUTION 2.2
    # HINT: pad the shorter shape with leading 1s, then compare the sizes pair by pair; for a pair
    # that does not fit, raise _cannot_broadcast(shape1, shape2, i) for dimension i.
    n = max(len(shape1), len(shape2))
    a = (1,) * (n - len(shape1)) + tuple(shape1)
    b = (1,) * (n - len(shape2)) + tuple(shape2)
    out = []
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise _cannot_broadcast(shape1, shape2, i)
    return tuple(out)
    # END SOLUTION 2.2


def _cannot_broadcast(shape1: Sequence[int], shape2: Sequence[int], dim: int) -> RuntimeError:
    """The error for two shapes whose sizes differ, neither being 1, at ``dim`` of the padded shapes."""
    n = max(len(shape1), len(shape2))
    x = ((1,) * (n - len(shape1)) + tuple(shape1))[dim]
    y = ((1,) * (n - len(shape2)) + tuple(shape2))[dim]
    return RuntimeError(
        f"shapes {tuple(shape1)} and {tuple(shape2)} cannot be broadcast together: the size "
        f"of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton dimension {dim}"
    )


def broadcasts_to(shape: Sequence[int], target: Sequence[int]) -> bool:
    """True when a tensor of ``shape`` broadcasts to ``target`` unchanged: ``expand(target)`` would work.

    :param shape: the tensor's shape.
    :param target: the shape to broadcast to.
    """
    shape, target = tuple(shape), tuple(target)
    # BEGIN SOLUTION 2.2
    if shape == target:
        return True
    if len(shape) > len(target):
        return False
    return all(n == 1 or n == m for n, m in zip(reversed(shape), reversed(target), strict=False))
    # END SOLUTION 2.2


def normalize_dim(dim: int, dims: int) -> int:
    """``dim`` as a non-negative dimension of a tensor with ``dims`` dimensions (-1 is the last)."""
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"a dimension must be an integer, got {type(dim).__name__}: {dim!r}")
    low, high = (-dims, dims - 1) if dims > 0 else (-1, 0)
    if not low <= dim <= high:
        raise IndexingError(f"Dimension out of range (expected to be in range of [{low}, {high}], but got {dim})")
    return int(dim) % max(dims, 1)


class TensorData:
    """Storage, offset, shape and strides of one tensor (or view), plus the shape operations.

    :param storage: the values: a numpy array, numbers, or a device array.
    :param shape: the size of each dimension.
    :param strides: the storage step of each dimension (default: contiguous, row-major).
    :param offset: the storage position of the first element.
    :param version: the version counter that views of one storage share (default: a new one).
    """

    __slots__ = ("storage", "offset", "shape", "strides", "size", "version", "_kernel_args")
    storage: Any  # a 1-D float64 numpy array, or a device array (is_device_array) on the cuda backend
    _kernel_args: Optional[Tuple[Any, np.ndarray, np.ndarray]]

    def __init__(
        self,
        storage: Any,  # a numpy array, numbers, or a device array
        shape: Sequence[int],
        strides: Optional[Sequence[int]] = None,
        offset: int = 0,
        version: Optional[_Version] = None,
    ):
        if is_device_array(storage):  # the cuda backend's storage: kept in the GPU's memory
            if storage.dtype != np.float64 or storage.ndim != 1:
                raise TypeError(f"a device storage must be a 1-D float64 array, got {storage.ndim}-D {storage.dtype}")
        elif not (isinstance(storage, np.ndarray) and storage.dtype == np.float64 and storage.ndim == 1):
            storage = np.ascontiguousarray(storage, dtype=np.float64).reshape(-1)
        shape = _valid_shape(shape)
        strides = _contiguous_strides(shape) if strides is None else tuple(map(int, strides))
        if len(strides) != len(shape):
            raise IndexingError(f"strides {strides} and shape {shape} must have the same length")
        size = prod(shape)
        if size:
            last = offset + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))
            if offset < 0 or min(strides, default=0) < 0 or last >= len(storage):
                raise IndexingError(
                    f"storage of {len(storage)} elements is too small for shape {shape} with strides "
                    f"{strides} and offset {offset}"
                )
        self.storage = storage
        self.offset = offset
        self.shape = shape
        self.strides = strides
        self.size = size
        self.version = _Version() if version is None else version
        self._kernel_args = None

    @classmethod
    def _unchecked(
        cls,
        storage: np.ndarray,
        shape: Shape,
        strides: Shape,
        offset: int,
        version: _Version,
        size: int,
        kernel_args: Optional[Tuple[Any, np.ndarray, np.ndarray]] = None,
    ) -> "TensorData":
        # What __init__ makes, without its checks and conversions: for the views and new storages
        # made in this file, whose parts fit by construction. (Views are made on every operation,
        # and the checks would be a good part of their cost.)
        self = object.__new__(cls)
        self.storage = storage
        self.offset = offset
        self.shape = shape
        self.strides = strides
        self.size = size
        self.version = version
        self._kernel_args = kernel_args
        return self

    @classmethod
    def _fresh(cls, storage: np.ndarray, shape: Shape) -> "TensorData":
        # A contiguous TensorData over a new flat storage of prod(shape) values, shape known valid.
        # (Every operation's result is made here, so its kernel arguments are set at once, from
        # arrays made once per shape.)
        strides, size, shape_array, strides_array = _contiguous_layout(shape)
        return cls._unchecked(storage, shape, strides, 0, _Version(), size, (storage, shape_array, strides_array))

    @classmethod
    def zeros(cls, shape: Sequence[int]) -> "TensorData":
        """A new contiguous TensorData of zeros."""
        return cls._zeros(_valid_shape(shape))

    @classmethod
    def _zeros(cls, shape: Shape) -> "TensorData":
        # zeros() for a shape of valid sizes, as _empty below.
        return cls._fresh(np.zeros(_storage_size(shape)), shape)

    @classmethod
    def empty(cls, shape: Sequence[int]) -> "TensorData":
        """A new contiguous TensorData whose values are not set (the caller fills every element)."""
        return cls._empty(_valid_shape(shape))

    @classmethod
    def _empty(cls, shape: Shape) -> "TensorData":
        # empty() for a shape of valid sizes (taken from other TensorDatas) whose element count
        # may still be too large: broadcasting (2**62, 1) with (1, 4), say.
        return cls._fresh(np.empty(_storage_size(shape)), shape)

    @classmethod
    def filled(cls, shape: Sequence[int], value: float) -> "TensorData":
        """A new contiguous TensorData with every element ``value``."""
        return cls._filled(_valid_shape(shape), value)

    @classmethod
    def _filled(cls, shape: Shape, value: float) -> "TensorData":
        # filled() for a shape of valid sizes, as _empty above.
        data = cls._empty(shape)
        data.storage.fill(value)  # (np.full does the same, at several times the cost for small sizes)
        return data

    @property
    def dims(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    def __repr__(self) -> str:
        return f"TensorData(shape={self.shape}, strides={self.strides}, offset={self.offset})"

    # -- what kernels see ---------------------------------------------------------------

    def kernel_args(self) -> Tuple[Any, np.ndarray, np.ndarray]:
        """(storage, shape, strides) as a kernel takes them: the storage starts at this view's
        first element (so kernels need no offset), shape and strides are int64 arrays."""
        args = self._kernel_args
        if args is None:
            storage = self.storage if self.offset == 0 else self.storage[self.offset :]
            args = self._kernel_args = (storage, _int64_array(self.shape), _int64_array(self.strides))
        return args

    # -- single elements ----------------------------------------------------------------

    def is_contiguous(self) -> bool:
        """True when the elements lie in storage in row-major order with no gaps.

        As in PyTorch, the stride of a dimension of size 1 does not matter, and a tensor without
        elements is contiguous whatever its strides.
        """
        return self.size == 0 or is_contiguous(self.shape, self.strides)  # (torchlight/indexing.py)

    def index(self, index: Union[int, Sequence[int]]) -> int:
        """The storage position of the element at ``index`` (negative entries count from the end)."""
        if isinstance(index, (int, np.integer)):
            index = (index,)
        index = tuple(index)
        if len(index) != len(self.shape):
            raise IndexingError(f"index {index} must have {len(self.shape)} entries for shape {self.shape}")
        fixed = []
        for d, (i, size) in enumerate(zip(index, self.shape, strict=True)):
            if not -size <= i < size:
                raise IndexingError(f"index {i} is out of bounds for dimension {d} with size {size}")
            fixed.append(i % size)
        return self.offset + index_to_position(fixed, self.strides)

    def get(self, index: Union[int, Sequence[int]]) -> float:
        """The value at ``index``."""
        position = self.index(index)
        if is_device_array(self.storage):
            return float(self.storage[position : position + 1].copy_to_host()[0])
        return float(self.storage[position])

    def set(self, index: Union[int, Sequence[int]], value: float) -> None:
        """Write ``value`` at ``index``."""
        position = self.index(index)
        if is_device_array(self.storage):
            self.storage[position : position + 1].copy_to_device(np.array([value], dtype=np.float64))
        else:
            self.storage[position] = value

    def indices(self) -> Iterator[Shape]:
        """Every index of this shape, in row-major order."""
        out = [0] * len(self.shape)
        for ordinal in range(self.size):
            to_index(ordinal, self.shape, out)
            yield tuple(out)

    # -- views: new shape, strides and offset over the same storage ---------------------

    def _view(self, shape: Sequence[int], strides: Sequence[int], offset: Optional[int] = None) -> "TensorData":
        # Every caller derives shape, strides and offset from this view's own, so they fit the storage.
        shape = tuple(shape)
        return TensorData._unchecked(
            self.storage, shape, tuple(strides), self.offset if offset is None else offset, self.version, prod(shape)
        )

    def permute(self, *order: int) -> "TensorData":
        """A view with the dimensions reordered: dimension i of the result is ``order[i]`` of this one."""
        if len(order) == 1 and isinstance(order[0], (tuple, list)):
            order = tuple(order[0])
        if len(order) != len(self.shape):
            raise RuntimeError(
                f"permute: the order {tuple(order)} has {len(order)} dimensions but the tensor has "
                f"{len(self.shape)} (shape {self.shape}); name every dimension exactly once"
            )
        order = tuple(normalize_dim(d, len(self.shape)) for d in order)
        if sorted(order) != list(range(len(self.shape))):
            raise RuntimeError(f"permute: the order {order} repeats a dimension; name every dimension exactly once")
        # BEGIN SOLUTION 2.1: the shape and strides of the permuted view
        # HINT: a view shares the storage: return self._view(new_shape, new_strides).
        return self._view([self.shape[d] for d in order], [self.strides[d] for d in order])
        # END SOLUTION 2.1

    def view(self, *shape: ShapeArg) -> "TensorData":
        """A view with a new shape holding the same elements (one entry may be -1: inferred)."""
        sizes = infer_shape(_shape_arg(shape), self.size)
        if not self.is_contiguous():
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead "
                "(or .contiguous().view(...))."
            )
        return self._view(sizes, _contiguous_strides(sizes))

    def expand(self, *shape: ShapeArg) -> "TensorData":
        """A view repeating dimensions of size 1 (stride 0) and adding leading ones: no copy.

        -1 keeps a dimension's size, as in PyTorch.
        """
        shape = _shape_arg(shape)
        if len(shape) < len(self.shape):
            raise RuntimeError(
                f"expand: the number of sizes provided ({len(shape)}) must be greater or equal to "
                f"the number of dimensions in the tensor ({len(self.shape)})"
            )
        extra = len(shape) - len(self.shape)
        new_shape, new_strides = [], []
        for i, target in enumerate(shape):
            if target < -1:  # (a negative size would make a view over memory the storage does not have)
                raise RuntimeError(
                    f"expand: invalid size {target} at dimension {i} of {list(shape)}: sizes must be "
                    "non-negative, or -1 to keep a dimension's size"
                )
            if i < extra:
                if target == -1:
                    raise RuntimeError(
                        f"expand: the expanded size of the tensor (-1) isn't allowed in a leading, "
                        f"non-existing dimension {i} (target sizes {list(shape)}, tensor sizes {list(self.shape)})"
                    )
                new_shape.append(target)
                new_strides.append(0)
                continue
            size, stride = self.shape[i - extra], self.strides[i - extra]
            if target == -1 or target == size:
                new_shape.append(size)
                new_strides.append(stride)
            elif size == 1:
                new_shape.append(target)
                new_strides.append(0)
            else:
                raise RuntimeError(
                    f"The expanded size of the tensor ({target}) must match the existing size ({size}) "
                    f"at non-singleton dimension {i}.  Target sizes: {list(shape)}.  Tensor sizes: "
                    f"{list(self.shape)}"
                )
        if prod(new_shape) > INT64_MAX:  # (a view costs no memory, but its element count must be a number)
            raise RuntimeError(
                f"numel: integer multiplication overflow: expand to sizes {new_shape} would make "
                f"{prod(new_shape)} elements, more than 2**63 - 1"
            )
        return self._view(new_shape, new_strides)

    def unsqueeze(self, dim: int) -> "TensorData":
        """A view with a new dimension of size 1 inserted at ``dim``."""
        dim = normalize_dim(dim, len(self.shape) + 1)
        stride = self.shape[dim] * self.strides[dim] if dim < len(self.shape) else 1
        return self._view(
            self.shape[:dim] + (1,) + self.shape[dim:], self.strides[:dim] + (stride,) + self.strides[dim:]
        )

    def squeeze(self, dim: int) -> "TensorData":
        """A view without dimension ``dim``, which must have size 1 (of a 0-d tensor, dims 0 and -1
        name the tensor itself, as in PyTorch: the view is the same)."""
        dim = normalize_dim(dim, len(self.shape))
        if not self.shape:
            return self._view((), ())
        if self.shape[dim] != 1:
            raise RuntimeError(f"squeeze: dimension {dim} has size {self.shape[dim]}, not 1 (shape {self.shape})")
        return self._view(self.shape[:dim] + self.shape[dim + 1 :], self.strides[:dim] + self.strides[dim + 1 :])

    def getitem(self, key) -> "TensorData":
        """The view that ``tensor[key]`` selects: integers drop a dimension, slices keep it,
        ``None`` inserts one of size 1, ``...`` stands for all dimensions not named."""
        if not isinstance(key, tuple):
            key = (key,)
        for k in key:
            if isinstance(k, bool) or not (k is None or k is Ellipsis or isinstance(k, (int, np.integer, slice))):
                raise TypeError(
                    "only integers, slices (`:`), ellipsis (`...`) and None are valid indices, got "
                    f"{type(k).__name__}: {k!r}"
                    + ("; use gather() to select by a tensor of indices" if hasattr(k, "shape") else "")
                )
        named = sum(1 for k in key if k is not None and k is not Ellipsis)
        if named > len(self.shape):
            raise IndexingError(
                f"too many indices for tensor of dimension {len(self.shape)} (got {named} for shape {self.shape})"
                + ("; a 0-d tensor has no dimension to index: .item() gives its value" if not self.shape else "")
            )
        if sum(1 for k in key if k is Ellipsis) > 1:
            raise IndexingError("an index can only have a single ellipsis ('...')")
        fill = (slice(None),) * (len(self.shape) - named)
        if Ellipsis in key:
            at = next(i for i, k in enumerate(key) if k is Ellipsis)
            key = key[:at] + fill + key[at + 1 :]
        else:
            key = key + fill

        offset, shape, strides, d = self.offset, [], [], 0
        for k in key:
            if k is None:
                shape.append(1)
                strides.append(0)
                continue
            size, stride = self.shape[d], self.strides[d]
            if isinstance(k, slice):
                if k.step is not None and k.step <= 0:
                    raise ValueError("step must be greater than zero")
                start, stop, step = k.indices(size)
                n = len(range(start, stop, step))
                if n:
                    offset += start * stride
                shape.append(n)
                strides.append(stride * step)
            else:
                if not -size <= k < size:
                    raise IndexingError(f"index {int(k)} is out of bounds for dimension {d} with size {size}")
                offset += (int(k) % size) * stride
            d += 1
        return self._view(shape, strides, offset)

    # -- copies -------------------------------------------------------------------------

    def to_numpy(self) -> np.ndarray:
        """A new numpy array (C-contiguous, float64) with this tensor's shape and values."""
        if self.size > _MAX_STORAGE:  # (a view of 2**62 elements, say: PyTorch's error, not numpy's)
            check_storage(self.shape)
        if not self.size:
            base = np.zeros(1)
        elif is_device_array(self.storage):  # only the run of storage this view spans comes over
            last = self.offset + sum((n - 1) * s for n, s in zip(self.shape, self.strides, strict=True))
            base = self.storage[self.offset : last + 1].copy_to_host()
        else:
            base = self.storage[self.offset :]
        item = base.itemsize
        view = np.lib.stride_tricks.as_strided(base, self.shape, tuple(s * item for s in self.strides), writeable=False)
        return np.array(view, dtype=np.float64, copy=True)

    def contiguous(self) -> "TensorData":
        """A contiguous copy (a new storage with its own version counter), in the same memory
        (host or device) as this one."""
        if is_device_array(self.storage):
            return TensorData._fresh(_device_copy(self), self.shape)
        if self.is_contiguous():  # the elements are one run of the storage already
            storage = self.storage[self.offset : self.offset + self.size].copy()
        else:
            storage = self.to_numpy().reshape(-1)
        return TensorData._fresh(storage, self.shape)

    def on_host(self) -> "TensorData":
        """This TensorData if its storage is a numpy array, else a contiguous copy in one."""
        if isinstance(self.storage, np.ndarray):
            return self
        return TensorData._fresh(self.to_numpy().reshape(-1), self.shape)


def is_device_array(storage: Any) -> bool:
    """True for a storage in a GPU's memory: a numba.cuda device array (the simulator's too).

    Such an array slices like a numpy array and copies to and from the host (``copy_to_host``,
    ``copy_to_device``); its values cannot be read in place from Python.

    :param storage: a tensor's storage.
    """
    return not isinstance(storage, np.ndarray) and hasattr(storage, "copy_to_host")


def _device_copy(data: TensorData) -> Any:
    """A new device array with the elements of ``data`` (whose storage is one) in row-major order."""
    from numba import cuda  # imported already, since a device array exists

    if not data.is_contiguous():  # (the cuda backend copies such views with its own kernel)
        return cuda.to_device(data.to_numpy().reshape(-1))
    out = cuda.device_array(data.size)
    if data.size:
        out.copy_to_device(data.storage[data.offset : data.offset + data.size])
    return out


def _valid_shape(shape: Sequence[int]) -> Shape:
    """``shape`` as a tuple of non-negative ints, for a new storage: a TypeError for a size that is
    not an int, a RuntimeError for a negative one or for more bytes than an int64 counts (as
    PyTorch's)."""
    sizes = _int_sizes(shape)
    for s in sizes:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(sizes)}")
    check_storage(sizes)
    return sizes


def _shape_arg(shape: Tuple[ShapeArg, ...]) -> Shape:
    """Accept both f(2, 3) and f((2, 3)), as PyTorch does; every size an int (negative ones are
    for the caller to judge: -1 means something to view and expand)."""
    sizes: Sequence[Any] = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    return _int_sizes(sizes)


def _int_sizes(sizes: Iterable[Any]) -> Shape:
    """``sizes`` as a tuple of ints, or a TypeError naming the first that is not an int.

    bools and floats are refused, even 2.0: a size is a count, and PyTorch refuses them too. So
    are sizes beyond a 64-bit integer's range (PyTorch: "Overflow when unpacking long long").
    """
    sizes = tuple(sizes)
    if all(type(s) is int and -INT64_MAX - 1 <= s <= INT64_MAX for s in sizes):
        return sizes  # the usual case, in one pass: plain ints in range
    for s in sizes:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"a shape holds integers, got {type(s).__name__}: {s!r} in {sizes}")
    ints = tuple(int(s) for s in sizes)
    for s in ints:
        if not -INT64_MAX - 1 <= s <= INT64_MAX:
            raise TypeError(
                f"Overflow when unpacking long long: the size {s} in {ints} does not fit in a 64-bit "
                "integer (sizes run up to 2**63 - 1)"
            )
    return ints


def infer_shape(sizes: Sequence[int], size: int) -> Shape:
    """The shape that ``view(*sizes)`` gives a tensor of ``size`` elements: sizes are
    non-negative, except one -1 at most, which stands for the size that the others leave.

    :param sizes: the sizes asked for, with at most one -1.
    :param size: the number of elements.
    :raises RuntimeError: when the sizes cannot hold exactly size elements.
    """
    sizes = tuple(sizes)
    for i, s in enumerate(sizes):
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(sizes)}")
    if sizes.count(-1) > 1:
        raise RuntimeError(f"only one dimension can be inferred (-1), got shape {list(sizes)}")
    if -1 in sizes:
        known = prod(s for s in sizes if s != -1)
        if known == 0:
            if size == 0:  # -1 could be any size at all
                raise RuntimeError(
                    f"cannot reshape tensor of 0 elements into shape {list(sizes)} because the "
                    "unspecified dimension size -1 can be any value and is ambiguous"
                )
            raise RuntimeError(f"shape '{list(sizes)}' is invalid for input of size {size}")
        if size % known:
            raise RuntimeError(f"shape '{list(sizes)}' is invalid for input of size {size}")
        sizes = tuple(size // known if s == -1 else s for s in sizes)
    if prod(sizes) != size:
        raise RuntimeError(f"shape '{list(sizes)}' is invalid for input of size {size}")
    return sizes
