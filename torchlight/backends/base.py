"""Modules 2-3: TensorBackend, which turns a kernel set into tensor operations.

A kernel set is any object (usually a module: ``simple``, ``fast``, ``cuda``) with four members:

- ``map_kernel(fn)`` returns ``kernel(out, out_shape, out_strides, in_storage, in_shape, in_strides)``:
  ``out[i] = fn(in[i])`` for every index i of out; ``in`` broadcasts to ``out``.
- ``zip_kernel(fn)`` returns ``kernel(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape,
  b_strides)``: ``out[i] = fn(a[i], b[i])``; ``a`` and ``b`` broadcast to ``out``.
- ``reduce_kernel(fn)`` returns ``kernel(out, out_shape, out_strides, a, a_shape, a_strides,
  reduce_dim, start)``: ``out`` has a's shape with size 1 at ``reduce_dim``, and each element of out
  becomes ``fn(...fn(fn(start, a[.., 0, ..]), a[.., 1, ..])..)`` along ``reduce_dim``.
- ``matmul_kernel(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides)``:
  ``out[p] = a[p] @ b[p]`` for 3-D shapes ``(batch, n, k) @ (batch, k, m) -> (batch, n, m)``;
  a batch size of 1 in ``a`` or ``b`` broadcasts.

and, for module 4's convolutions (``TensorBackend.unfold`` and ``fold`` say what they compute):

- ``unfold1d_kernel(out, out_shape, out_strides, x, x_shape, x_strides, kernel, stride, padding)``
  and ``unfold2d_kernel(..., kh, kw, sh, sw, ph, pw)``: the windows of ``x`` as columns of ``out``;
- ``fold1d_kernel(out, out_shape, out_strides, cols, cols_shape, cols_strides, kernel, stride,
  padding)`` and ``fold2d_kernel(...)``: each column of ``cols`` added back onto its window in ``out``.

A kernel set may also offer kernels that fuse several operations of a later module's op, found by
name with ``TensorBackend.fused_kernel`` (the fast backend's max pooling and cross-entropy:
``fast_nn.py``, used by ``ops/fused_nn.py``); a backend without them runs the op's composed version.

Every storage is a 1-D float64 numpy array that starts at the tensor's first element; shapes and
strides are 1-D int64 numpy arrays. A kernel set that keeps storage elsewhere (cuda: in the GPU's
memory) says so with ``storage_type`` (its arrays' class) and provides ``empty(shape)``,
``zeros(shape)``, ``filled(shape, value)`` (new contiguous TensorData in its memory) and
``adopt(data)`` (data copied there: a tensor made on this backend from storage elsewhere).

``out`` is freshly allocated and contiguous unless the caller passes ``out=``: then it can be any
strided view, so kernels must index it through its strides.
For map and zip ``out`` is uninitialized (write every element); for reduce it is already filled
with ``start`` and for matmul, unfold and fold with zeros, so a kernel may either accumulate or
overwrite.

Everything about shapes (broadcasting, checking, batching for matmul) happens here in Python.
"""

from functools import lru_cache
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from .. import scalar
from ..extension import extension_point
from ..tensor_data import TensorData, broadcasts_to, normalize_dim, prod, shape_broadcast, strides_from_shape

# What making a backend does first, one call each. Module 2 needs nothing here: its tensors are
# plain numpy arrays. Module 3's ``memory.py`` adds ``keep_freed_memory`` when it is imported (the
# fast and cuda backends import it), so that a new tensor of megabytes does not page-fault.
on_new_backend: List[Callable[[], Any]] = []


class TensorBackend:
    """Tensor operations built from one kernel set: ``map``, ``zip``, ``reduce``, ``matrix_multiply``.

    ``map(fn)``, ``zip(fn)`` and ``reduce(fn, start)`` lift a ``torchlight.scalar`` function to a
    function on tensors; each is built (and, for compiled backends, compiled) once per ``fn``.
    Pass module-level functions, not lambdas made afresh on every call. The results are new
    tensors without history: Functions call these in their forward.

    :param kernels: the kernel set: an object with ``map_kernel``, ``zip_kernel``, ``reduce_kernel``
        and ``matmul_kernel`` (this module's docstring says what each does).
    :param name: the backend's name.
    """

    def __init__(self, kernels: Any, name: str):
        self.kernels = kernels
        self.name = name
        self._ops: dict = {}
        self._matmul = kernels.matmul_kernel
        for hook in on_new_backend:  # (module 3's memory.py keeps freed memory for new tensors)
            hook()
        # Where this backend's tensors keep their storage: numpy arrays in the host's memory, unless
        # the kernel set keeps its own (cuda: device arrays), which it then allocates and adopts.
        self.storage_type = getattr(kernels, "storage_type", np.ndarray)
        # (The operations here call them with shapes made from other tensors' shapes, whose sizes
        # are valid already: TensorData's own checks of a shape are skipped.)
        self.empty: Callable[[tuple], TensorData] = getattr(kernels, "empty", TensorData._empty)
        self.zeros: Callable[[tuple], TensorData] = getattr(kernels, "zeros", TensorData._zeros)
        self.filled: Callable[[tuple, float], TensorData] = getattr(kernels, "filled", TensorData._filled)
        self.adopt: Callable[[TensorData], TensorData] = getattr(kernels, "adopt", TensorData.on_host)

    def __repr__(self) -> str:
        return f"TensorBackend('{self.name}')"

    def __deepcopy__(self, memo: dict) -> "TensorBackend":
        # One backend per name: a deep copy of a tensor or a module keeps using it.
        return self

    def _check(self, op: str, *tensors: Any) -> None:
        # The callers on hot paths test ``t.backend is not self`` first and call this only to raise.
        for t in tensors:
            if t.backend is not self:  # mixing backends: name both, say how to fix it
                raise RuntimeError(
                    f"{op}: expected all tensors on the '{self.name}' backend, but found one on the "
                    f"'{t.backend.name}' backend; move it first with .to('{self.name}')"
                )

    def _kernel(self, kind: str, fn: Callable) -> Callable:
        key = (kind, fn)
        kernel = self._ops.get(key)
        if kernel is None:
            kernel = self._ops[key] = getattr(self.kernels, kind)(fn)
        return kernel

    @extension_point
    def _entry(self, op: Callable, kernel: Callable, arity: int) -> Callable:
        """What ``map(fn)`` (arity 1) and ``zip(fn)`` (arity 2) hand out: ``op`` itself. Module 3
        puts a native call in front of the fast backend's, for their common case (fast_launch.py)."""
        return op

    def map(self, fn: Callable[[float], float]) -> Callable:
        """``map(fn)(a, out=None)``: fn applied to every element; ``a`` broadcasts to ``out``."""
        cached = self._ops.get(("map", fn))
        if cached is not None:
            return cached
        kernel = self._kernel("map_kernel", fn)
        name = f"map({getattr(fn, '__name__', type(fn).__name__)})"  # a callable object has no __name__

        def op(a, out=None):
            if out is None:
                if a.backend is not self:
                    self._check(name, a)
                out = a._new(self.empty(a._data.shape), self)
            else:
                self._check(name, a, out)
                _check_broadcasts_to(a.shape, out.shape, name)
            od, ad = out._data, a._data
            views = _long_rows(od, ad) if od.size >= LONG_ROWS_MIN_SIZE else None
            if views is None:
                kernel(*od.kernel_args(), *ad.kernel_args())
            else:
                kernel(*views[0], *views[1])
            return out

        entry = self._ops[("map", fn)] = self._entry(op, kernel, 1)
        return entry

    def zip(self, fn: Callable[[float, float], float]) -> Callable:
        """``zip(fn)(a, b, out=None)``: fn applied to pairs of elements, a and b broadcast together."""
        cached = self._ops.get(("zip", fn))
        if cached is not None:
            return cached
        kernel = self._kernel("zip_kernel", fn)
        name = f"zip({getattr(fn, '__name__', type(fn).__name__)})"  # a callable object has no __name__

        def op(a, b, out=None):
            if a.backend is not self or b.backend is not self:
                self._check(name, a, b)
            ad, bd = a._data, b._data
            shape = ad.shape if ad.shape == bd.shape else _broadcast_shapes(ad.shape, bd.shape)
            if out is None:
                out = a._new(self.empty(shape), self)
            else:
                self._check(name, out)
                _check_broadcasts_to(shape, out.shape, name)
            od = out._data
            views = _long_rows(od, ad, bd) if od.size >= LONG_ROWS_MIN_SIZE else None
            if views is None:
                kernel(*od.kernel_args(), *ad.kernel_args(), *bd.kernel_args())
            else:
                kernel(*views[0], *views[1], *views[2])
            return out

        entry = self._ops[("zip", fn)] = self._entry(op, kernel, 2)
        return entry

    def reduce(self, fn: Callable[[float, float], float], start: float = 0.0) -> Callable:
        """``reduce(fn, start)(a, dim)``: fold dimension ``dim`` with fn from ``start``; dim keeps size 1."""
        start = float(start)
        cached = self._ops.get(("reduce", fn, start))
        if cached is not None:
            return cached
        kernel = self._kernel("reduce_kernel", fn)
        name = f"reduce({getattr(fn, '__name__', type(fn).__name__)})"  # a callable object has no __name__

        def op(a, dim):
            if a.backend is not self:
                self._check(name, a)
            data = a._data
            dim = normalize_dim(dim, data.dims)
            if data.dims == 0:  # a 0-d tensor reduces as a tensor of shape (1,)
                data = data.view(1)
            shape = data.shape[:dim] + (1,) + data.shape[dim + 1 :]
            rows = _rows_of_reduction(data, dim) if data.size >= LONG_ROWS_MIN_SIZE else None
            if rows is not None:  # the same fold, along rows of out (see _rows_of_reduction)
                kshape, kstrides = rows
                out = self.filled(kshape[:-2] + (1, kshape[-1]), start)
                kernel(*out.kernel_args(), *data._view(kshape, kstrides).kernel_args(), len(kshape) - 2, start)
                out = out._view(shape, strides_from_shape(shape))  # the same row-major order of out
            else:
                out = self.filled(shape, start)
                kernel(*out.kernel_args(), *data.kernel_args(), dim, start)
            if a._data.dims == 0:
                out = out.view(())
            return a._new(out, self)

        self._ops[("reduce", fn, start)] = op
        return op

    def matrix_multiply(self, a: Any, b: Any) -> Any:
        """The matrix product with numpy's rules: 1-D operands are vectors, batch dims broadcast."""
        if a.backend is not self or b.backend is not self:
            self._check("matmul", a, b)
        a_dims, b_dims = len(a.shape), len(b.shape)
        if a_dims == 0 or b_dims == 0:
            raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a_dims}D and {b_dims}D")
        ad = a._data.unsqueeze(0) if a_dims == 1 else a._data
        bd = b._data.unsqueeze(1) if b_dims == 1 else b._data
        n, k = ad.shape[-2:]
        k2, m = bd.shape[-2:]
        if k != k2:
            raise RuntimeError(
                f"matmul: shapes {a.shape} and {b.shape} cannot be multiplied ({n}x{k} and {k2}x{m}): "
                "the last dimension of the first must equal the second-to-last dimension of the second"
            )
        a_batch, b_batch = ad.shape[:-2], bd.shape[:-2]
        try:
            batch = a_batch if a_batch == b_batch else shape_broadcast(a_batch, b_batch)
        except RuntimeError:
            raise RuntimeError(
                f"matmul: the batch dimensions of shapes {a.shape} and {b.shape} cannot be broadcast together"
            ) from None
        nb = prod(batch)
        out = self.zeros((nb, n, m))
        self._matmul(*out.kernel_args(), *self._as_3d(ad, batch).kernel_args(), *self._as_3d(bd, batch).kernel_args())
        shape = batch + ((n,) if a_dims > 1 else ()) + ((m,) if b_dims > 1 else ())
        return a._new(out if shape == out.shape else out._view(shape, strides_from_shape(shape)), self)

    def unfold(self, x: Any, kernel_size: Tuple[int, ...], stride: Tuple[int, ...], padding: Tuple[int, ...]) -> Any:
        """The sliding windows of ``x`` as columns, as ``torch.nn.functional.unfold``.

        ``x`` is (N, C, W) or (N, C, H, W) and the windows have ``kernel_size`` (one size per
        spatial dimension), step by ``stride`` and see ``x`` padded with ``padding`` zeros on each
        side. The result is (N, C * K, L): K = prod(kernel_size) values per channel in each window,
        one column per window, L windows in row-major order. The arguments are checked by the caller
        (``ops/conv.py``): the windows fit the padded input.
        """
        self._check("unfold", x)
        data = x._data
        batch, channels, sizes = data.shape[0], data.shape[1], data.shape[2:]
        windows = prod(conv_output_size(sizes, kernel_size, stride, padding))
        rows = channels * prod(kernel_size)
        # Row-major (N, C * K, L): each of the kernel's rows (one place of every window) is written
        # contiguously, and weight @ columns reads the rows of its right operand whole (fast's thin
        # product). Stored window after window (N, L, C * K) instead, a conv2d forward+backward
        # took 10-20% longer on this course's machine (benchmarks/conv.py's shapes).
        out = self.zeros((batch, rows, windows))
        kernel = self._conv_kernel("unfold", len(sizes))
        kernel(*out.kernel_args(), *data.kernel_args(), *kernel_size, *stride, *padding)
        return x._new(out, self)

    def fold(
        self,
        cols: Any,
        output_size: Tuple[int, ...],
        kernel_size: Tuple[int, ...],
        stride: Tuple[int, ...],
        padding: Tuple[int, ...],
    ) -> Any:
        """The adjoint of ``unfold``, as ``torch.nn.functional.fold``: (N, C * K, L) columns to an
        (N, C, *output_size) tensor, each column added onto the positions its window covers (the
        parts in the padding dropped). Overlapping windows add up."""
        self._check("fold", cols)
        batch, rows = cols.shape[0], cols.shape[1]
        out = self.zeros((batch, rows // prod(kernel_size)) + tuple(output_size))
        kernel = self._conv_kernel("fold", len(output_size))
        kernel(*out.kernel_args(), *cols._data.kernel_args(), *kernel_size, *stride, *padding)
        return cols._new(out, self)

    def _conv_kernel(self, kind: str, spatial: int) -> Callable:
        name = f"{kind}{spatial}d_kernel"
        kernel = getattr(self.kernels, name, None)
        if kernel is None:
            raise NotImplementedError(
                f"{kind}: the '{self.name}' backend has no {spatial}-d {kind} kernel ({name}); "
                "move the tensors to a backend that has, e.g. .to('fast')"
            )
        return kernel

    def fused_kernel(self, name: str) -> Optional[Callable]:
        """The kernel set's member ``name``, a kernel that does the work of several operations at
        once (module 4's ``ops/fused_nn.py`` asks for its own), or None where this backend has none:
        the operation then runs its composed version."""
        return getattr(self.kernels, name, None)

    def _as_3d(self, data: TensorData, batch: tuple) -> TensorData:
        """``data`` (..., r, c) as a 3-D view (batch, r, c), copying only if its strides demand it."""
        r, c = data.shape[-2:]
        rs, cs = data.strides[-2:]
        if prod(data.shape[:-2]) == 1:  # one matrix for the whole batch: a batch of 1 broadcasts
            return data._view((1, r, c), (0, rs, cs))
        data = data.expand(batch + (r, c))
        stride = _merged_stride(data.shape[:-2], data.strides[:-2])
        if stride is None:  # e.g. a broadcast batch dim between two real ones: no single stride walks it
            data = self._copy(data)
            rs, cs = data.strides[-2:]
            stride = r * c
        return data._view((prod(batch), r, c), (stride, rs, cs))

    def _copy(self, data: TensorData) -> TensorData:
        out = self.empty(data.shape)
        self._kernel("map_kernel", scalar.id)(*out.kernel_args(), *data.kernel_args())
        return out


# Kernels work out an index once per row (a run along the last dimension) and then step through
# it. Where the last dimension is short (the 4 values of a 2x2 pooling window, a classifier's 10
# scores) that per-row work costs more than the arithmetic: 5-15 times, measured on a (512, 196, 4)
# zip, reduction and permuted copy (docs/performance.md). An elementwise operation may walk the
# dimensions in any order, and a reduction may too as long as each element folds in the same
# order, so for large tensors the kernels get views with dimensions merged where every operand
# allows and a long dimension last. The results are the same, to the bit. (The callers test the
# size first: most operations of a training step are small, and a call costs a tenth of a microsecond.)
LONG_ROWS_MIN_SIZE = 1 << 14  # smaller tensors: the few microseconds of Python here would not pay
SHORT_ROW = 16  # a last dimension shorter than this is worth reordering


def _merge_dims(shape: Sequence[int], strides: Sequence[Sequence[int]]) -> Tuple[list, list]:
    """Adjacent dimensions of ``shape`` merged wherever every operand's strides allow it (each
    operand's strides in ``strides``), dimensions of size 1 dropped: (shape, strides per operand)."""
    # (Plain loops: this runs on every large map, zip and reduction, and generators cost microseconds.)
    operands = range(len(strides))
    new_shape: list = []
    new_strides: list = [[] for _ in operands]
    for i, n in enumerate(shape):
        if n == 1:
            continue
        merge = bool(new_shape)
        for j in operands:
            if merge and new_strides[j][-1] != strides[j][i] * n:
                merge = False
        if merge:
            new_shape[-1] *= n
            for j in operands:
                new_strides[j][-1] = strides[j][i]
        else:
            new_shape.append(n)
            for j in operands:
                new_strides[j].append(strides[j][i])
    return new_shape, new_strides


def _long_rows(out: TensorData, *inputs: TensorData) -> Optional[list]:
    """The kernel arguments (storage, shape, strides) of out and of the inputs (broadcast to out's
    shape) as views with merged dimensions and a long last one; None where the plain call does as well."""
    shape = out.shape
    if out.size < LONG_ROWS_MIN_SIZE or len(shape) < 2 or shape[-1] >= SHORT_ROW:
        return None
    datas = (out,) + inputs
    new_shape, strides = _merge_dims(shape, [_broadcast_strides(d, shape) for d in datas])
    if len(new_shape) > 1 and new_shape[-1] < SHORT_ROW:
        longest = max(range(len(new_shape)), key=new_shape.__getitem__)
        order = [d for d in range(len(new_shape)) if d != longest] + [longest]
        new_shape = [new_shape[d] for d in order]
        strides = [[s[d] for d in order] for s in strides]
    sizes = np.array(new_shape, dtype=np.int64)
    return [(d.kernel_args()[0], sizes, np.array(s, dtype=np.int64)) for d, s in zip(datas, strides, strict=True)]


def _broadcast_strides(data: TensorData, shape: tuple) -> tuple:
    """data's strides for walking ``shape``, which data broadcasts to (0 where it repeats)."""
    if data.shape == shape:
        return data.strides
    lead = (0,) * (len(shape) - len(data.shape))
    return lead + tuple(0 if n == 1 else s for n, s in zip(data.shape, data.strides, strict=True))


def _rows_of_reduction(data: TensorData, dim: int) -> Optional[Tuple[tuple, tuple]]:
    """For a reduction of a large tensor along a short last dimension: the (shape, strides) of a
    view of it with the other dimensions merged and the reduced one second to last, so that the
    kernel folds whole rows of out at once; None otherwise."""
    if data.size < LONG_ROWS_MIN_SIZE or dim != data.dims - 1 or data.dims < 2 or data.shape[dim] >= SHORT_ROW:
        return None
    others, (strides,) = _merge_dims(data.shape[:-1], [data.strides[:-1]])
    if not others:
        return None
    shape = tuple(others[:-1]) + (data.shape[dim], others[-1])
    return shape, tuple(strides[:-1]) + (data.strides[dim], strides[-1])


def conv_output_size(
    sizes: Sequence[int], kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int]
) -> Tuple[int, ...]:
    """The number of window positions along each spatial dimension: (size + 2 padding - kernel) // stride + 1."""
    return tuple((n + 2 * p - k) // s + 1 for n, k, s, p in zip(sizes, kernel_size, stride, padding, strict=True))


def _merged_stride(shape: tuple, strides: tuple) -> Optional[int]:
    """The one stride that walks these dimensions as a single flattened one, or None if none does."""
    dims = [(n, s) for n, s in zip(shape, strides, strict=True) if n != 1]
    for (_, outer), (size, inner) in zip(dims, dims[1:], strict=False):
        if outer != inner * size:
            return None
    return dims[-1][1] if dims else 0


@lru_cache(maxsize=1024)
def _broadcast_shapes(shape1: tuple, shape2: tuple) -> tuple:
    """shape_broadcast(shape1, shape2), worked out once per pair of shapes: a training step meets
    the same few pairs again and again (a bias added to a batch, a number times a tensor)."""
    return shape_broadcast(shape1, shape2)


def _check_broadcasts_to(shape: tuple, target: tuple, op: str) -> None:
    if not broadcasts_to(shape, target):
        raise RuntimeError(f"{op}: the result of shape {tuple(shape)} does not fit out= of shape {tuple(target)}")
