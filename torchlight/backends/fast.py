"""Module 3: the fast backend, the simple backend's kernels compiled by numba and run in parallel.

It computes exactly what ``simple.py`` computes, with the same index arithmetic
(``torchlight/indexing.py``, compiled here by numba rather than copied), but three things make it
fast:

1. Compilation. ``fn`` (a ``torchlight.scalar`` function) is compiled into the kernel's loop, so
   the loop runs as machine code with no Python object and no function call per element.
2. Fewer index computations. The simple kernels turn every ordinal into an index and every index
   into a position. These kernels do that once per *row* (a run along the last dimension) and then
   step through the row by its strides; when input and output are contiguous with the same shape
   they skip indexing altogether (the fast path).
3. Threads. A large tensor is cut into parts that run in parallel (``prange``). Small ones run
   serially: starting a parallel region costs microseconds when the cores are idle and
   milliseconds when another process holds one, and a training step is many small operations.

How the code is organised, and why (compiling is a user cost: see fast_cache.py):

- ``map_part``, ``zip_part`` and ``reduce_part`` are *templates*: plain functions that call ``fn``
  and do one part of the work. ``fast_cache.py`` compiles them once per scalar function, in a
  small generated module in which ``fn`` is that function, so that numba caches them on disk.
- ``parallel_map``, ``parallel_zip`` and ``parallel_reduce`` run the parts of one large operation
  on all threads. They receive the part as a value (``fast_parallel.py``), so each is compiled
  (and cached) once for all scalar functions, not once per function.
- The matrix multiply, which calls no scalar function, is in ``fast_matmul.py``, built the same way.
"""

import inspect
import sys
from typing import Any, Callable, List

import numba
import numpy as np
from numba import njit, prange, types, uint64  # noqa: F401  (stages 3.1-3.2 use prange and uint64)
from numba.extending import register_jitable

from .. import indexing, scalar
from . import fast_cache, fast_launch, fast_math, fast_parallel, fast_tiles, memory  # noqa: F401  (memory registers itself: new tensors do not page-fault)
from .base import TensorBackend
from .fast_conv import fold1d_kernel, fold2d_kernel, unfold1d_kernel, unfold2d_kernel  # noqa: F401  (module 4)
from .fast_matmul import matmul_kernel  # noqa: F401  (a member of this kernel set)
from .fast_nn import (  # noqa: F401  (module 4's fused max pooling and cross-entropy: ops/fused_nn.py)
    cross_entropy_back_kernel,
    cross_entropy_kernel,
    max_pool2d_blocks_kernel,
    window_gather_kernel,
    window_scatter_kernel,
)

# Tensors with fewer elements than this run serially. Measured (benchmarks/threshold.py, 2 idle
# cores): threads pay from about 65,000 elements for a zip of additions, from about 5,000 for a
# map of exp. But under load (another process on a core) a parallel region can stall for
# milliseconds, and a training step is many small operations, so the bar is set high.
PARALLEL_THRESHOLD = 100_000

# How many parts per thread a parallel operation is cut into (uneven parts then balance out).
PARTS_PER_THREAD = 4

# The shared index arithmetic, compiled. Each helper is compiled once and called from every
# kernel (LLVM inlines the small ones); numba's own inline="always" would type and lower it again
# inside each kernel, which costs compile time (a user cost) for no speed: they run once per row.
_helper = njit
to_index = _helper(indexing.to_index)
broadcast_index = _helper(indexing.broadcast_index)
index_to_position = _helper(indexing.index_to_position)
is_contiguous = _helper(indexing.is_contiguous)  # (True when elements lie in row-major order with no gaps)


@_helper
def size_of(shape):
    """The number of elements of a tensor of ``shape``."""
    n = 1
    for s in shape:
        n *= s
    return n


@_helper
def same_contiguous(out_shape, out_strides, shape, strides):
    """True when a tensor is contiguous with the same shape as a contiguous ``out``: the fast path."""
    if len(shape) != len(out_shape):
        return False
    for i in range(len(shape)):
        if shape[i] != out_shape[i]:
            return False
    return is_contiguous(out_shape, out_strides) and is_contiguous(shape, strides)


@_helper
def last_stride(shape, strides):
    """The storage step along out's last dimension of a tensor broadcast to out (0 when broadcast)."""
    if len(shape) == 0 or shape[len(shape) - 1] == 1:
        return 0
    return strides[len(strides) - 1]


@_helper
def part_bounds(part, parts, work):
    """The half-open range of the ``work`` items that part number ``part`` of ``parts`` covers."""
    return part * work // parts, (part + 1) * work // parts


# A function the user lifts may call torchlight.scalar's operators (``d * scalar.sigmoid(x)``):
# numba compiles a call to a plain Python function only when told it may, as here.
for _f in vars(scalar).values():
    if inspect.isfunction(_f) and _f.__module__ == scalar.__name__:
        register_jitable(error_model="numpy")(_f)

# The names a generated kernel module imports from here (fast_cache writes the import).
HELPERS = [
    "np",
    "uint64",
    "to_index",
    "broadcast_index",
    "index_to_position",
    "size_of",
    "same_contiguous",
    "last_stride",
    "part_bounds",
    "LINES",
]


def fn(*args):
    """Stands for the lifted scalar function in the templates below; each generated module binds its own."""
    raise RuntimeError("the fast kernel templates run only inside a module generated by fast_cache")


# ---------------------------------------------------------------------------------------------
# Templates: one part of a map, zip or reduce. fast_cache copies their source into a module where
# ``fn`` is the scalar function and compiles them with the signatures in PART_SIGNATURES.
# Inner loops index slices from 0 (``o = out[po:]``, then ``o[j]``), not ``out[po + j]``, and
# cast strided indices to unsigned (``o[uint64(j * so)]``): numba lets a negative index count from
# the end, and it drops that check only for an index it knows cannot be negative. The check stops
# LLVM from vectorizing the loop, which then runs 4-7x slower (measured; see the notebook).
# ---------------------------------------------------------------------------------------------


def map_part(part, parts, out, out_shape, out_strides, a, a_shape, a_strides):
    """out[i] = fn(a[i]) for the elements of out in part number ``part`` of ``parts``.

    The part is out's ordinals lo..hi-1 (``part_bounds``); every part of one operation may run at
    the same time as the others, on another thread, so a part writes only its own elements. When a
    is laid out as out (``same_contiguous``, a 0-d tensor included) ordinals are positions in both:
    the fast path below, no index arithmetic at all. Otherwise a may be permuted, sliced or
    broadcast to out's shape, and out itself may be a strided view. A part may hold no ordinals
    (lo == hi: more parts than elements, or an out with a 0 in its shape). The results are the
    simple backend's, bit for bit: each element is fn of the one value it reads.
    """
    lo, hi = part_bounds(part, parts, size_of(out_shape))
    if same_contiguous(out_shape, out_strides, a_shape, a_strides):  # the fast path: no indexing
        o, x = out[lo:hi], a[lo:hi]
        for i in range(hi - lo):
            o[i] = fn(x[i])
        return
    # BEGIN SOLUTION 3.1
    # HINT: do the ordinals lo..hi-1 one row (a run along the last dimension) at a time. Once per
    # row, find where it starts in out and in a, with module 2's index helpers; along the row,
    # out's elements are its last stride apart, and a's are last_stride(a_shape, a_strides) apart
    # (0 where a is broadcast). A part may begin or end in the middle of a row. Index a row's
    # slice with uint64(...), as the notebook's copy_rows does: a plain int index stops numba
    # from vectorizing the loop.
    dims = len(out_shape)
    out_index = np.empty(dims, np.int64)
    a_index = np.empty(len(a_shape), np.int64)
    row = out_shape[dims - 1]
    so = out_strides[dims - 1]
    sa = last_stride(a_shape, a_strides)
    ordinal = lo
    while ordinal < hi:  # one row (a run along the last dimension) at a time
        to_index(ordinal, out_shape, out_index)
        broadcast_index(out_index, out_shape, a_shape, a_index)
        o = out[index_to_position(out_index, out_strides) :]
        x = a[index_to_position(a_index, a_strides) :]
        n = min(row - out_index[dims - 1], hi - ordinal)
        for j in range(n):
            o[uint64(j * so)] = fn(x[uint64(j * sa)])
        ordinal += n
    # END SOLUTION 3.1


def zip_part(part, parts, out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides):
    """out[i] = fn(a[i], b[i]) for the elements of out in part number ``part`` of ``parts``.

    As ``map_part``, with two inputs, each broadcast to out's shape on its own: ``a`` of shape
    (3, 1) and ``b`` of shape (4,) give out of shape (3, 4).
    """
    lo, hi = part_bounds(part, parts, size_of(out_shape))
    if same_contiguous(out_shape, out_strides, a_shape, a_strides) and same_contiguous(
        out_shape, out_strides, b_shape, b_strides
    ):  # the fast path
        o, x, y = out[lo:hi], a[lo:hi], b[lo:hi]
        for i in range(hi - lo):
            o[i] = fn(x[i], y[i])
        return
    # BEGIN SOLUTION 3.1
    # HINT: map_part's rows, with a second input: b needs its own index and its own step along
    # the row, since a and b may each be broadcast or strided differently.
    dims = len(out_shape)
    out_index = np.empty(dims, np.int64)
    a_index = np.empty(len(a_shape), np.int64)
    b_index = np.empty(len(b_shape), np.int64)
    row = out_shape[dims - 1]
    so = out_strides[dims - 1]
    sa = last_stride(a_shape, a_strides)
    sb = last_stride(b_shape, b_strides)
    ordinal = lo
    while ordinal < hi:
        to_index(ordinal, out_shape, out_index)
        broadcast_index(out_index, out_shape, a_shape, a_index)
        broadcast_index(out_index, out_shape, b_shape, b_index)
        o = out[index_to_position(out_index, out_strides) :]
        x = a[index_to_position(a_index, a_strides) :]
        y = b[index_to_position(b_index, b_strides) :]
        n = min(row - out_index[dims - 1], hi - ordinal)
        for j in range(n):
            o[uint64(j * so)] = fn(x[uint64(j * sa)], y[uint64(j * sb)])
        ordinal += n
    # END SOLUTION 3.1


def reduce_part(part, parts, out, out_shape, out_strides, a, a_shape, a_strides, reduce_dim, start):
    """Fold a along reduce_dim into the out elements of part number ``part`` of ``parts``.

    out has a's shape with ``out_shape[reduce_dim] == 1``. Each out element gets
    fn(...fn(fn(start, a[.., 0, ..]), a[.., 1, ..])...), in that order, as in the simple backend,
    so that the results are identical, bit for bit (floating-point addition is not associative).
    Two ways through, by the layout:

    - reduce_dim is out's last dimension (or out's rows have one element): each element of out
      folds its line of a on its own. The parts are out's elements (its ordinals).
    - otherwise a whole row of out is folded at once, every element one step at a time: each step
      then reads a row of a (a run along its last dimension), not one element a stride away. The
      parts are out's rows.

    A line of no values (``n == 0``: a 0 in a's shape at reduce_dim) folds to ``start``. A part
    may hold no elements (more parts than work, or an out with a 0 in its shape).
    """
    dims = len(out_shape)
    n = a_shape[reduce_dim]  # noqa: F841  (the length of the lines folded; stage 3.2's code uses it)
    step = a_strides[reduce_dim]  # noqa: F841  (how far apart a line's elements lie in a)
    row = out_shape[dims - 1]  # noqa: F841  (out's last dimension)
    index = np.empty(dims, np.int64)  # noqa: F841  (an index buffer)
    # BEGIN SOLUTION 3.2
    # HINT: the index of an out element, used in a, is the index of the first element of its line
    # (its reduce_dim entry is 0). Fold into a local variable, and write out once. For the rows:
    # part_bounds over the number of rows; start every element of the row at start first.
    if reduce_dim == dims - 1 or row <= 1:
        lo, hi = part_bounds(part, parts, size_of(out_shape))
        for ordinal in range(lo, hi):
            to_index(ordinal, out_shape, index)  # index[reduce_dim] is 0: the line's first element
            line = a[index_to_position(index, a_strides) :]
            acc = start
            for j in range(n):
                acc = fn(acc, line[uint64(j * step)])
            out[index_to_position(index, out_strides)] = acc
        return
    lo, hi = part_bounds(part, parts, size_of(out_shape) // row)
    so = out_strides[dims - 1]
    sa = a_strides[dims - 1]
    for r in range(lo, hi):
        to_index(r * row, out_shape, index)
        o = out[index_to_position(index, out_strides) :]
        x = a[index_to_position(index, a_strides) :]
        for t in range(row):
            o[uint64(t * so)] = start
        for j in range(n):
            x_j = x[j * step :]
            for t in range(row):
                o[uint64(t * so)] = fn(o[uint64(t * so)], x_j[uint64(t * sa)])
    # END SOLUTION 3.2


# ---------------------------------------------------------------------------------------------
# The library's reduction along the last dimension (a speed-up, not stage 3.2's exercise).
#
# reduce_part folds each line on its own, one element after another, and each step waits for the
# one before (an addition takes about 4 cycles, in which the processor could start 8). Here LINES
# lines are folded side by side: each from start and in order along the line, as reduce_part
# folds it, so the result is the same to the bit; the processor works on LINES chains at once.
# (A reduction along another dimension needs none of this: reduce_part's second path already
# folds a whole row of out at a time.) tests/module3/test_fast_reduce_lines.py holds the two equal.
# ---------------------------------------------------------------------------------------------

LINES = 4
LINES_MIN_LENGTH = 32  # shorter lines: reduce_part, whose per-line work is small anyway


def lines_part(part, parts, out, out_shape, out_strides, a, a_shape, a_strides, reduce_dim, start):
    """reduce_part's fold of every line along reduce_dim (out's last dimension), LINES lines at a
    time. The parts are blocks of LINES of out's elements (the last block may be shorter)."""
    dims = len(out_shape)
    n = a_shape[reduce_dim]
    step = a_strides[reduce_dim]
    total = size_of(out_shape)
    index = np.empty(dims, np.int64)
    first = np.empty(LINES, np.int64)  # where each line of the block starts in a
    where = np.empty(LINES, np.int64)  # and its element in out
    acc = np.empty(LINES)
    lo, hi = part_bounds(part, parts, (total + LINES - 1) // LINES)
    for block in range(lo, hi):
        count = min(LINES, total - block * LINES)
        for t in range(count):
            to_index(block * LINES + t, out_shape, index)  # index[reduce_dim] is 0: the line's start
            first[t] = index_to_position(index, a_strides)
            where[t] = index_to_position(index, out_strides)
            acc[t] = start
        if count == LINES:  # a constant trip count, which LLVM unrolls
            for j in range(n):
                for t in range(LINES):
                    acc[t] = fn(acc[t], a[uint64(first[t] + j * step)])
        else:
            for j in range(n):
                for t in range(count):
                    acc[t] = fn(acc[t], a[uint64(first[t] + j * step)])
        for t in range(count):
            out[where[t]] = acc[t]


# The maximum needs no order at all, except in two cases: scalar.max keeps the first nan it meets,
# and of two equal values the later, which tells 0.0 from -0.0. So max_lines_part takes each
# contiguous line eight elements side by side (eight running maxima, which LLVM's SLP vectorizer
# turns into two vector compares per step) and scans the line once more, in the fold's order, only
# where a nan or a zero maximum makes the order matter: the results are the fold's, to the bit.


@njit(inline="always", error_model="numpy")
def _line_max(line, n, start):
    """What folding line[0:n] with scalar.max from start gives, bit for bit."""
    if start != start:  # a nan start is kept whatever follows
        return start
    m0 = m1 = m2 = m3 = m4 = m5 = m6 = m7 = start
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0  # x * 0 adds a nan for a nan (or an infinity)
    j = 0
    while j + 8 <= n:
        x0, x1, x2, x3 = line[uint64(j)], line[uint64(j + 1)], line[uint64(j + 2)], line[uint64(j + 3)]
        x4, x5, x6, x7 = line[uint64(j + 4)], line[uint64(j + 5)], line[uint64(j + 6)], line[uint64(j + 7)]
        m0, m1, m2, m3 = x0 if x0 > m0 else m0, x1 if x1 > m1 else m1, x2 if x2 > m2 else m2, x3 if x3 > m3 else m3
        m4, m5, m6, m7 = x4 if x4 > m4 else m4, x5 if x5 > m5 else m5, x6 if x6 > m6 else m6, x7 if x7 > m7 else m7
        s0, s1, s2, s3 = s0 + x0 * 0.0, s1 + x1 * 0.0, s2 + x2 * 0.0, s3 + x3 * 0.0
        s4, s5, s6, s7 = s4 + x4 * 0.0, s5 + x5 * 0.0, s6 + x6 * 0.0, s7 + x7 * 0.0
        j += 8
    m0, m1, m2, m3 = m4 if m4 > m0 else m0, m5 if m5 > m1 else m1, m6 if m6 > m2 else m2, m7 if m7 > m3 else m3
    m0, m1 = m2 if m2 > m0 else m0, m3 if m3 > m1 else m1
    m = m1 if m1 > m0 else m0
    s = s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7
    for i in range(j, n):
        x = line[uint64(i)]
        m = x if x > m else m
        s += x * 0.0
    if s != s:  # a nan or an infinity: the fold ends on the first nan, if there is one
        for i in range(n):
            if line[uint64(i)] != line[uint64(i)]:
                return line[uint64(i)]
    if m == 0.0:  # of equal values the fold keeps the later: the last zero, else start
        for i in range(n - 1, -1, -1):
            if line[uint64(i)] == 0.0:
                return line[uint64(i)]
        return start
    return m


@fast_cache.recovering
@njit(cache=True, error_model="numpy")
def max_lines_part(part, parts, out, out_shape, out_strides, a, a_shape, a_strides, reduce_dim, start):
    """reduce_part's fold with scalar.max of every line along reduce_dim (out's last dimension, a's
    elements contiguous along it), eight elements at a time. The parts are blocks of out's elements."""
    index = np.empty(len(out_shape), np.int64)
    n = a_shape[reduce_dim]
    lo, hi = part_bounds(part, parts, size_of(out_shape))
    for element in range(lo, hi):
        to_index(element, out_shape, index)  # (as in lines_part, where the line starts in a)
        out[index_to_position(index, out_strides)] = _line_max(a[index_to_position(index, a_strides) :], n, start)


TEMPLATES: List[Callable[..., None]] = [map_part, zip_part, reduce_part, lines_part]

# The compiled parts' signatures. Explicit signatures make the parts first-class function values
# that the parallel launchers below can receive; storages are contiguous 1-D float64 arrays,
# shapes and strides contiguous int64 arrays (TensorData.kernel_args makes them so).
_storage = types.float64[::1]
_ints = types.int64[::1]
_tensor = (_storage, _ints, _ints)
PART_SIGNATURES = {
    "map_part": types.void(types.int64, types.int64, *_tensor, *_tensor),
    "zip_part": types.void(types.int64, types.int64, *_tensor, *_tensor, *_tensor),
    "reduce_part": types.void(types.int64, types.int64, *_tensor, *_tensor, types.int64, types.float64),
}

# The files whose code is compiled into the parts: editing one must invalidate the disk cache.
SOURCES = [__file__, indexing.__file__, scalar.__file__]


# ---------------------------------------------------------------------------------------------
# Parallel launchers: run every part of one operation, spread over numba's threads (compiled by
# fast_parallel.launcher). A prange loop's index is unsigned: np.int64(p) matches the parts.
# ---------------------------------------------------------------------------------------------


def parallel_map(map_part, parts, out, out_shape, out_strides, a, a_shape, a_strides):
    """Run map_part(p, parts, ...) for every part p, in parallel."""
    # BEGIN SOLUTION 3.1
    # HINT: the notebook's Step 3: every part once, spread over numba's threads. A part's number
    # is an int64 (the part's signature, PART_SIGNATURES), and a prange index is not.
    for p in prange(parts):
        map_part(np.int64(p), parts, out, out_shape, out_strides, a, a_shape, a_strides)
    # END SOLUTION 3.1


def parallel_zip(zip_part, parts, out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides):
    """Run zip_part(p, parts, ...) for every part p, in parallel."""
    # BEGIN SOLUTION 3.1
    for p in prange(parts):
        zip_part(np.int64(p), parts, out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides)
    # END SOLUTION 3.1


def parallel_reduce(reduce_part, parts, out, out_shape, out_strides, a, a_shape, a_strides, reduce_dim, start):
    """Run reduce_part(p, parts, ...) for every part p, in parallel."""
    # BEGIN SOLUTION 3.2
    for p in prange(parts):
        reduce_part(np.int64(p), parts, out, out_shape, out_strides, a, a_shape, a_strides, reduce_dim, start)
    # END SOLUTION 3.2


_LAUNCHERS = {"map_part": parallel_map, "zip_part": parallel_zip, "reduce_part": parallel_reduce}


# ---------------------------------------------------------------------------------------------
# The kernel set: what TensorBackend calls.
# ---------------------------------------------------------------------------------------------


# In the student edition an unwritten function raises NotImplementedError("Task N.K: ..."). Before
# compiling a kernel, the Python functions compiled into it are called once on sample arguments
# (fast_parallel.raise_if_stub), so that a stub says what to write at once, instead of numba
# spending seconds failing to type a kernel around a function that returns nothing.
_SAMPLE_ARGS = {"map_part": (0.5,), "zip_part": (0.5, 0.25), "reduce_part": (0.5, 0.25)}
_not_stubs: set = set()  # (fn, number of arguments) already called once, and the index helpers


def _raise_if_stubs(fn, kind: str) -> None:
    """Re-raise a stub's NotImplementedError from fn or from the index helpers; once each."""
    if "indexing" not in _not_stubs:
        index = [0, 0]
        fast_parallel.raise_if_stub(indexing.to_index, 1, [2, 3], index)
        fast_parallel.raise_if_stub(indexing.broadcast_index, [1, 1], [2, 3], [3], [0])
        fast_parallel.raise_if_stub(indexing.index_to_position, [1, 1], [3, 1])
        fast_parallel.raise_if_stub(indexing.is_contiguous, [2, 3], [3, 1])
        _not_stubs.add("indexing")
    args = _SAMPLE_ARGS[kind]
    if (fn, len(args)) not in _not_stubs:
        fast_parallel.raise_if_stub(fn, *args)
        _not_stubs.add((fn, len(args)))


def _one_element(kind: str) -> tuple:
    """Arguments for ``part(0, 1, ...)`` on a 1-element tensor: a trial run before the first launch."""
    one = np.ones(1, np.int64)  # shape (1,), stride 1
    tensor = (np.full(1, 0.5), one, one)
    if kind == "map_part":
        return (np.zeros(1), one, one) + tensor
    if kind == "zip_part":
        return (np.zeros(1), one, one) + tensor + tensor
    return (np.zeros(1), one, one) + tensor + (0, 0.0)


class _Kernel:
    """One operation of one scalar function: runs its part function serially or in parallel."""

    def __init__(self, fn, kind: str):
        self.kind = kind
        # The argument whose length bounds the work: out's storage, or for reduce the input's
        # (every element of it is read). A storage's length needs no Python loop over the shape.
        self._work_arg = 3 if kind == "reduce_part" else 0
        _raise_if_stubs(fn, kind)
        if kind == "map_part":  # exp, log, sigmoid, tanh: their vectorizable forms (fast_math.py)
            fn = fast_math.STAND_INS.get(fn, fn)
        self._fn = fn
        self._module = fast_cache.kernels_for(fn, TEMPLATES, HELPERS, SOURCES)
        self.part = getattr(self._module, kind)
        fast_cache.compile_part(self.part, PART_SIGNATURES[kind], fn)
        self._lines: Any = None  # lines_part, compiled on the first reduction of long last-dimension lines
        self._max_lines: Any = None  # and for scalar.max, max_lines_part
        self._pointers: dict = {}  # part -> its PartPointer, made on the first parallel call
        self._launch = None

    def _lines_or_part(self, args: tuple) -> Any:
        """The reduction's part for this call: for long lines along the last dimension lines_part, or
        max_lines_part for scalar.max over contiguous ones."""
        a, a_shape, a_strides, reduce_dim = args[3], args[4], args[5], args[6]
        if (
            reduce_dim != len(a_shape) - 1
            or a_shape[reduce_dim] < LINES_MIN_LENGTH
            or len(a) < 2 * LINES * a_shape[reduce_dim]
        ):
            return self.part
        if self._lines is None:
            # reduce_part runs first, on one element: in the student edition a stage 3.2 not yet
            # written raises its own message, as it would without this speed-up.
            self.part(0, 1, *_one_element(self.kind))
            if self._fn is scalar.max:
                fast_tiles.compile_vectorized(max_lines_part, PART_SIGNATURES[self.kind])
                self._max_lines = max_lines_part
            lines = self._module.lines_part
            fast_cache.compile_part(lines, PART_SIGNATURES[self.kind], self._fn)
            self._lines = lines
        if self._max_lines is not None and a_strides[reduce_dim] == 1:
            return self._max_lines
        return self._lines

    def __call__(self, *args):
        # (Most operations of a training step are small: this is on every one's path, so it is
        # kept to the fewest Python steps, the serial case first.)
        part = self.part if self.kind != "reduce_part" else self._lines_or_part(args)
        try:
            if len(args[self._work_arg]) < PARALLEL_THRESHOLD or numba.get_num_threads() == 1:
                part(0, 1, *args)
            else:
                pointer = self._pointers.get(part)
                if pointer is None:
                    # An exception inside the launcher's threads is printed and lost (numba cannot
                    # pass it on through a part called as a value): a part that raises (a stub,
                    # or a bug) must raise here first, serially, on one element.
                    part(0, 1, *_one_element(self.kind))
                    signature = PART_SIGNATURES[self.kind]
                    pointer = self._pointers[part] = fast_parallel.PartPointer(part, signature)
                    if self._launch is None:
                        self._launch = fast_parallel.launcher(
                            _LAUNCHERS[self.kind], fast_parallel.launcher_signature(signature)
                        )
                parts = numba.get_num_threads() * PARTS_PER_THREAD
                fast_parallel.launch(self._launch, pointer, parts, *args)
        except TypeError:
            fast_parallel.run_on_plain_arrays(part, (0, 1) + args, out=2)


def map_kernel(fn):
    """``kernel(out, out_shape, out_strides, a, a_shape, a_strides)``: out[i] = fn(a[i])."""
    return fast_launch.native(_Kernel(fn, "map_part"))


def zip_kernel(fn):
    """``kernel(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides)``:
    out[i] = fn(a[i], b[i])."""
    return fast_launch.native(_Kernel(fn, "zip_part"))


def reduce_kernel(fn):
    """``kernel(out, out_shape, out_strides, a, a_shape, a_strides, reduce_dim, start)``: fold
    ``reduce_dim`` of a with fn from start."""
    return fast_launch.native(_Kernel(fn, "reduce_part"))


def make_backend() -> TensorBackend:
    """The fast backend: these kernels behind a TensorBackend."""
    return TensorBackend(sys.modules[__name__], "fast")
