"""Module 3, part 2: the cuda backend, the simple backend's kernels as CUDA kernels (numba.cuda).

A GPU runs one function, the *kernel*, on thousands of threads at once. The threads come in
*blocks* (here up to 256 threads each), and the blocks of one launch make the *grid*:
``kernel[blocks, threads_per_block](args)``. Inside, each thread finds its place with
``cuda.threadIdx`` (within its block), ``cuda.blockIdx`` and ``cuda.blockDim`` (or
``cuda.grid(1)``: blockIdx.x * blockDim.x + threadIdx.x, its number in the whole grid). The
threads of one block share a small fast memory (``cuda.shared.array``) and wait for each other
at ``cuda.syncthreads()``; threads of different blocks cannot wait for each other at all.

The kernels compute what ``simple.py`` computes, with the same index arithmetic
(``torchlight/indexing.py``, compiled here as device functions, not copied):

- map and zip (3.4): one thread per element of out; thread i turns its ordinal into an index
  and reads the inputs it broadcasts from.
- reduce (3.4): one block per element of out; its threads fold parts of the line in
  registers, then combine their partial results in shared memory, halving the count at each
  step (a tree), with a ``syncthreads`` between steps.
- matrix multiply (3.5): one thread per element of out, in square blocks (tiles); the block
  copies a tile of ``a`` and a tile of ``b`` into shared memory, each thread adds up its
  products from there, then the next pair of tiles comes in. Each value is read from global
  memory once per tile instead of once per product. Products of 64 x 64 and more take the
  library's kernel instead (``_register_tiles``, no stage's exercise): each thread computes
  4 x 4 outputs in registers, to the bit what stage 3.5's kernel gives.
- unfold and fold (module 4): the simple backend's row functions (stages 4.1 and 4.2) as device
  functions; one thread per row of the columns for unfold, one per channel plane for fold.

A tensor on this backend keeps its storage on the GPU (a numba device array) between operations:
only ``to_numpy()``, ``item()``, printing and ``to("fast")`` copy values back to the host.

With ``NUMBA_ENABLE_CUDASIM=1`` set before numba.cuda is first imported, numba runs these
kernels in its simulator: every thread a Python thread, on the CPU. It is slow, but it runs the
kernels as written (shared memory, syncthreads and all), so the backend is tested without a GPU.
"""

import inspect
import sys
import warnings
from functools import lru_cache
from typing import Any, Callable, Optional, Tuple

import numba
import numpy as np
from numba import cuda

from .. import indexing, scalar
from ..tensor_data import TensorData, _valid_shape, prod, strides_from_shape
from . import cuda_simulator, fast_conv, fast_parallel, memory, simple  # noqa: F401  (memory registers itself: host tensors do not page-fault)
from .base import TensorBackend

# Whether the kernels run in numba's simulator (NUMBA_ENABLE_CUDASIM=1) rather than on a GPU.
SIMULATOR = "simulator" in cuda.device_array.__module__

# Threads per block of the one-thread-per-element kernels (map, zip, unfold, fold).
THREADS = 256
# Threads per block of a reduction, and of them at most LINE_THREADS to a line (powers of two: the
# tree halves them). A block folds REDUCE_THREADS // LINE_THREADS lines or more if they are short.
REDUCE_THREADS = LINE_THREADS = 256
# The side of the matrix multiply's square tiles (TILE x TILE threads per block).
TILE = 16
# The library's register-tiled matrix multiply (below ``_register_tiles``): blocks of REG_THREADS x
# REG_THREADS threads, each thread computing REG x REG outputs, so that a block computes a tile of
# out REG_BLOCK on a side; its tiles in shared memory are REG_DEPTH deep along k. It takes the
# products whose out has at least REGISTER_TILES_FROM rows and as many columns; smaller ones (and
# every product of stage 3.5's tests) take stage 3.5's kernel.
REG_THREADS, REG, REG_DEPTH = 16, 4, 16
REG_BLOCK = REG_THREADS * REG
REG_PADDED = REG_BLOCK + 1  # the length of a row of a's tile in shared memory (see _register_tiles)
REGISTER_TILES_FROM = 64
if SIMULATOR:
    # In the simulator every thread is a Python thread, started one after the other, and a block
    # waits at each syncthreads until its simulated threads have taken turns: the cost grows
    # faster than the number of threads. Four threads that loop over the elements cost a fraction
    # of one thread per element; two threads to a line and tiles of 2 x 2 still take the kernels'
    # paths (several values per thread, several lines per block, several tiles along k) on the
    # small tensors of the tests (tests/module3/test_cuda_kernels.py also runs larger blocks).
    THREADS, REDUCE_THREADS, LINE_THREADS, TILE = 4, 4, 2, 2
    REG_THREADS, REG, REG_DEPTH = 2, 2, 2  # (REGISTER_TILES_FROM stays: the tests set it where they mean to)
    REG_BLOCK, REG_PADDED = REG_THREADS * REG, REG_THREADS * REG + 1
    cuda_simulator.lock_shared_arrays()  # (threads could get different "shared" arrays: see there)
# Python's switch interval while a simulated block waits at syncthreads: numba's block manager
# polls its threads, and with Python's default (5 ms) each round of waiting costs milliseconds.
SIMULATOR_SWITCH_INTERVAL = 0.0001
# A tensor has at most this many dimensions here (each thread holds an index of this length), as
# on PyTorch's GPUs.
MAX_DIMS = 25

# The device's memory: where tensors on this backend keep their storage.
storage_type = type(cuda.device_array(1))

# The shared index arithmetic, compiled as device functions: functions a kernel calls, on the GPU.
to_index = cuda.jit(device=True)(indexing.to_index)
broadcast_index = cuda.jit(device=True)(indexing.broadcast_index)
index_to_position = cuda.jit(device=True)(indexing.index_to_position)

try:  # numba-cuda (torchlight[cuda]) has its own registry of functions kernels may call
    from numba.cuda.extending import register_jitable
except ImportError:  # numba's built-in numba.cuda uses numba's
    from numba.extending import register_jitable

# A lifted function may call torchlight.scalar's operators (``d * scalar.sigmoid(x)``): a kernel
# compiles a call to a plain Python function only when told it may, as here.
for _f in vars(scalar).values():
    if inspect.isfunction(_f) and _f.__module__ == scalar.__name__:
        register_jitable(_f)


def device_function(fn: Callable, arity: int) -> Callable:
    """``fn`` (a function of ``arity`` floats) compiled as a device function, for kernels to call.

    A math function or builtin (``math.exp``) is called from a small function compiled around it;
    a bound method or a callable object is a TypeError: numba cannot compile the object.
    """
    target = getattr(fn, "py_func", fn)  # a numba function: its Python source
    if inspect.isfunction(target):
        _raise_if_stub(target, (0.5,) if arity == 1 else (0.5, 0.25))
        return cuda.jit(device=True)(target)
    if inspect.isbuiltin(fn) or isinstance(fn, type):
        if arity == 1:

            def call1(x):
                return fn(x)

            return cuda.jit(device=True)(call1)

        def call2(x, y):
            return fn(x, y)

        return cuda.jit(device=True)(call2)
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    if inspect.ismethod(fn):
        what = f"a bound method of a {type(fn.__self__).__name__}"
    else:
        what = f"a {type(fn).__name__} object"
    raise TypeError(
        f"the 'cuda' backend cannot compile {name} ({what}): a kernel calls plain functions of floats "
        "only; lift a plain function (def or lambda) instead, or use the 'simple' backend"
    )


# ---------------------------------------------------------------------------------------------
# Storage on the device: what TensorBackend allocates for this backend's tensors.
# ---------------------------------------------------------------------------------------------


@cuda.jit
def _fill(out, n, value):
    """out[i] = value for i < n (one thread per element)."""
    i = cuda.grid(1)
    if i < n:
        out[i] = value


def _filled_storage(n: int, value: float) -> Any:
    if SIMULATOR or n == 0:  # (a simulated device array is a numpy array: filling it costs nothing)
        return cuda.to_device(np.full(n, value))
    storage = cuda.device_array(n)
    _fill[_blocks(n, THREADS), THREADS](storage, n, value)
    return storage


def empty(shape: Tuple[int, ...]) -> TensorData:
    """A new contiguous TensorData on the device whose values are not set."""
    return TensorData._fresh(cuda.device_array(prod(shape)), tuple(shape))


def zeros(shape: Tuple[int, ...]) -> TensorData:
    """A new contiguous TensorData of zeros on the device."""
    shape = _valid_shape(shape)
    return TensorData._fresh(_filled_storage(prod(shape), 0.0), shape)


def filled(shape: Tuple[int, ...], value: float) -> TensorData:
    """A new contiguous TensorData on the device with every element ``value``."""
    shape = _valid_shape(shape)
    return TensorData._fresh(_filled_storage(prod(shape), float(value)), shape)


def adopt(data: TensorData) -> TensorData:
    """``data`` with its storage on the device: itself when it is there, else a copy of the run of
    storage it spans, viewed with the same shape and strides (a permuted or strided view stays one)."""
    if type(data.storage) is storage_type:
        return data
    if data.size == 0:
        return TensorData._fresh(cuda.device_array(0), data.shape)
    last = data.offset + sum((n - 1) * s for n, s in zip(data.shape, data.strides, strict=True))
    if isinstance(data.storage, np.ndarray):
        span = np.ascontiguousarray(data.storage[data.offset : last + 1])
    else:  # (another kind of device array: through the host)
        span = data.storage[data.offset : last + 1].copy_to_host()
    return TensorData(cuda.to_device(span), data.shape, data.strides)


@lru_cache(maxsize=1024)
def _device_ints(values: Tuple[int, ...]) -> Any:
    """A shape or strides as an int64 device array, copied to the device once per distinct value."""
    return cuda.to_device(np.array(values if values else (0,), dtype=np.int64))


def _ints(array: np.ndarray) -> Tuple[int, ...]:
    """A shape or strides as a tuple; a RuntimeError for more dimensions than MAX_DIMS."""
    values = tuple(array.tolist())
    if len(values) > MAX_DIMS:
        raise RuntimeError(
            f"the 'cuda' backend handles tensors of up to {MAX_DIMS} dimensions, got one of {len(values)}; "
            "view it with fewer dimensions first, or use the 'fast' backend"
        )
    return values


def _blocks(n: int, threads: int) -> int:
    return (n + threads - 1) // threads


def _is_contiguous(shape: Tuple[int, ...], strides: Tuple[int, ...]) -> bool:
    return all(n == 1 or s == t for n, s, t in zip(shape, strides, strides_from_shape(shape), strict=True))


def _as_1d(shape: Tuple[int, ...], strides: Tuple[int, ...]) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
    """A 0-d tensor as a tensor of shape (1,): the same one element, and index buffers of length 1."""
    return ((1,), (1,)) if not shape else (shape, strides)


def _elementwise(size: int) -> Tuple[int, int]:
    """(blocks, threads per block) for a kernel over ``size`` elements: one thread per element on a
    GPU; in the simulator one block of a few threads, each looping over several elements."""
    if SIMULATOR:
        return 1, min(THREADS, size)
    return _blocks(size, THREADS), THREADS


def _run(kernel: Any, grid: Any, block: Any, *args: Any, waits: bool = False) -> None:
    """Launch ``kernel[grid, block](*args)`` (``waits``: its threads meet at syncthreads).

    In the simulator, a stub's NotImplementedError comes out prefixed with the thread that raised
    it: it is raised again as the stub's own message.
    """
    if not SIMULATOR:
        kernel[grid, block](*args)
        return
    interval = sys.getswitchinterval()
    if waits:
        sys.setswitchinterval(SIMULATOR_SWITCH_INTERVAL)
    try:
        with warnings.catch_warnings():
            # The simulated threads compute with numpy's floats, which warn of the inf and nan that
            # a GPU (and the simple backend, under np.errstate) makes silently.
            warnings.simplefilter("ignore", RuntimeWarning)
            kernel[grid, block](*args)
    except NotImplementedError as e:
        message = str(e)
        at = message.find("Task ")
        if at <= 0:
            raise
        raise NotImplementedError(message[at:]) from None
    finally:
        sys.setswitchinterval(interval)


def _raise_if_stub(function: Callable, args: tuple) -> None:
    """Before compiling for a GPU, a student edition's stub raises its message (on a GPU a kernel
    that raises only stops; in the simulator the stub raises by itself)."""
    if not SIMULATOR:
        fast_parallel.raise_if_stub(function, *args)


_INDEXING_CHECKED: list = []


def _raise_if_kernel_stub(kernel: Callable) -> None:
    """On a GPU, a kernel whose body is a student edition's stub raises its message here: compiled,
    it would only stop each thread. (The simulator runs the stub, which raises by itself.)"""
    if SIMULATOR:
        return
    if not _INDEXING_CHECKED:
        fast_parallel.raise_if_stub(indexing.to_index, 1, [2, 3], [0, 0])
        fast_parallel.raise_if_stub(indexing.broadcast_index, [1, 1], [2, 3], [3], [0])
        fast_parallel.raise_if_stub(indexing.index_to_position, [1, 1], [3, 1])
        _INDEXING_CHECKED.append(True)
    message = _stub_message(kernel)
    if message is not None:
        raise NotImplementedError(message)


def _stub_message(kernel: Callable) -> Optional[str]:
    """The message of a student edition's stub of a stage of module 3 in ``kernel``'s body, or None."""
    for const in kernel.__code__.co_consts:
        if isinstance(const, str) and const.startswith("Task 3."):
            return const
    return None


# ---------------------------------------------------------------------------------------------
# map and zip: one thread per element of out.
# ---------------------------------------------------------------------------------------------


def map_kernel(fn: Callable[[float], float]) -> Callable:
    """``kernel(out, out_shape, out_strides, a, a_shape, a_strides)``: out[i] = fn(a[i])."""
    f = device_function(fn, 1)

    def kernel(out, out_shape, out_strides, a, a_shape, a_strides, size, aligned):
        i = cuda.grid(1)
        step = cuda.gridsize(1)  # (on a GPU the grid covers out: each thread does one element)
        if aligned:  # out and a contiguous with the same shape: element i is at position i of both
            while i < size:
                out[i] = f(a[i])
                i += step
            return
        out_index = cuda.local.array(MAX_DIMS, numba.int64)  # noqa: F841  (stage 3.4's code uses it)
        a_index = cuda.local.array(MAX_DIMS, numba.int64)  # noqa: F841  (stage 3.4's code uses it)
        while i < size:
            # BEGIN SOLUTION 3.4: thread i's element of out
            # HINT: as the simple kernel's loop body, for the one ordinal i: its index in out
            # (to_index), the index of a that it reads (broadcast_index), then the two positions.
            to_index(i, out_shape, out_index)
            broadcast_index(out_index, out_shape, a_shape, a_index)
            out[index_to_position(out_index, out_strides)] = f(a[index_to_position(a_index, a_strides)])
            # END SOLUTION 3.4
            i += step

    _raise_if_kernel_stub(kernel)
    compiled = cuda.jit(kernel)

    def launch(out, out_shape, out_strides, a, a_shape, a_strides):
        shape, strides = _as_1d(_ints(out_shape), _ints(out_strides))
        ashape, astrides = _as_1d(_ints(a_shape), _ints(a_strides))
        size = prod(shape)
        if size == 0:
            return
        aligned = shape == ashape and _is_contiguous(shape, strides) and _is_contiguous(ashape, astrides)
        args = (out, _device_ints(shape), _device_ints(strides), a, _device_ints(ashape), _device_ints(astrides))
        _run(compiled, *_elementwise(size), *args, size, aligned)

    launch.kernels = (compiled,)  # type: ignore[attr-defined]
    return launch


def zip_kernel(fn: Callable[[float, float], float]) -> Callable:
    """``kernel(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides)``:
    out[i] = fn(a[i], b[i])."""
    f = device_function(fn, 2)

    def kernel(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides, size, aligned):
        i = cuda.grid(1)
        step = cuda.gridsize(1)
        if aligned:  # out, a and b contiguous with the same shape
            while i < size:
                out[i] = f(a[i], b[i])
                i += step
            return
        out_index = cuda.local.array(MAX_DIMS, numba.int64)  # noqa: F841  (stage 3.4's code uses it)
        a_index = cuda.local.array(MAX_DIMS, numba.int64)  # noqa: F841  (stage 3.4's code uses it)
        b_index = cuda.local.array(MAX_DIMS, numba.int64)  # noqa: F841  (stage 3.4's code uses it)
        while i < size:
            # BEGIN SOLUTION 3.4: thread i's element of out
            to_index(i, out_shape, out_index)
            broadcast_index(out_index, out_shape, a_shape, a_index)
            broadcast_index(out_index, out_shape, b_shape, b_index)
            x = a[index_to_position(a_index, a_strides)]
            y = b[index_to_position(b_index, b_strides)]
            out[index_to_position(out_index, out_strides)] = f(x, y)
            # END SOLUTION 3.4
            i += step

    _raise_if_kernel_stub(kernel)
    compiled = cuda.jit(kernel)

    def launch(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides):
        shape, strides = _as_1d(_ints(out_shape), _ints(out_strides))
        ashape, astrides = _as_1d(_ints(a_shape), _ints(a_strides))
        bshape, bstrides = _as_1d(_ints(b_shape), _ints(b_strides))
        size = prod(shape)
        if size == 0:
            return
        aligned = (
            shape == ashape == bshape
            and _is_contiguous(shape, strides)
            and _is_contiguous(ashape, astrides)
            and _is_contiguous(bshape, bstrides)
        )
        args = (
            out,
            _device_ints(shape),
            _device_ints(strides),
            a,
            _device_ints(ashape),
            _device_ints(astrides),
            b,
            _device_ints(bshape),
            _device_ints(bstrides),
        )
        _run(compiled, *_elementwise(size), *args, size, aligned)

    launch.kernels = (compiled,)  # type: ignore[attr-defined]
    return launch


# ---------------------------------------------------------------------------------------------
# reduce: one block per element of out, a tree in shared memory.
# ---------------------------------------------------------------------------------------------

# A line longer than this, in a reduction with fewer outputs than PARTS_BELOW, is cut into parts
# that separate blocks fold (then the parts are folded): one block per output would leave most of
# a GPU idle (a whole-tensor sum has one output).
LONG_LINE = 1 << 15
PARTS_BELOW = 1024
PART_STEPS = 16  # each thread of a part's block folds this many values (a part: LINE_THREADS * PART_STEPS)


def reduce_kernel(fn: Callable[[float, float], float]) -> Callable:
    """``kernel(out, out_shape, out_strides, a, a_shape, a_strides, reduce_dim, start)``: fold
    ``reduce_dim`` of a with fn from start."""
    f = device_function(fn, 2)

    def fold_line(a, base, step, n, partial):
        """The threads of a line (cuda.blockDim.x of them, a power of two) fold the n values
        a[base], a[base + step], ...; the result lands in partial[0] (partial: shared memory, one
        place per thread). n may be 0, for a row of threads past the end of out: nothing to read,
        but every thread still waits at every cuda.syncthreads(). start is not folded in here
        (the caller does that)."""
        t = cuda.threadIdx.x  # noqa: F841  (stage 3.4's code uses it)
        threads = cuda.blockDim.x  # noqa: F841  (stage 3.4's code uses it)
        # BEGIN SOLUTION 3.4: fold the line in the block: each thread its share, then a tree in shared memory
        # HINT: thread t folds values t, t + threads, t + 2 * threads, ... into partial[t]; the first
        # min(n, threads) places then hold a value each. Then, for s = threads // 2, threads // 4,
        # ..., 1: thread t < s folds partial[t + s] into partial[t] (if that place holds a value).
        # Every thread must reach every cuda.syncthreads(): a block waits there for all of them.
        if t < n:
            acc = a[base + t * step]
            j = t + threads
            while j < n:
                acc = f(acc, a[base + j * step])
                j += threads
            partial[t] = acc
        cuda.syncthreads()
        count = min(n, threads)  # places holding a value
        s = threads // 2
        while s > 0:
            if t < s and t + s < count:
                partial[t] = f(partial[t], partial[t + s])
            cuda.syncthreads()
            s //= 2
        # END SOLUTION 3.4

    def kernel(out, out_shape, out_strides, a, a_shape, a_strides, reduce_dim, start, size):
        # Row y of the block's threads folds the line of out's element blockIdx.x * blockDim.y + y
        # (a block of 256 threads folds 64 lines of 4, say, rather than one line with 4 threads).
        partial = cuda.shared.array(REDUCE_THREADS, numba.float64)
        index = cuda.local.array(MAX_DIMS, numba.int64)
        y = cuda.threadIdx.y
        row = partial[y * cuda.blockDim.x :]
        o = cuda.blockIdx.x * cuda.blockDim.y + y
        n, base = 0, 0  # (past the last element of out, a row still meets the block at every syncthreads)
        if o < size:
            to_index(o, out_shape, index)  # out's index: its line in a starts there (0 at reduce_dim)
            n, base = a_shape[reduce_dim], index_to_position(index, a_strides)
        fold_line(a, base, a_strides[reduce_dim], n, row)
        if cuda.threadIdx.x == 0 and o < size:
            out[index_to_position(index, out_strides)] = f(start, row[0])

    def parts_kernel(parts, out_shape, a, a_strides, reduce_dim, n, part_size):
        """Block (x, y) folds part y of line x of a (values y * part_size, ... of it) into
        parts[x, y] (parts: contiguous, gridDim.y parts per line)."""
        partial = cuda.shared.array(REDUCE_THREADS, numba.float64)
        index = cuda.local.array(MAX_DIMS, numba.int64)
        to_index(cuda.blockIdx.x, out_shape, index)
        step = a_strides[reduce_dim]
        first = cuda.blockIdx.y * part_size
        fold_line(a, index_to_position(index, a_strides) + first * step, step, min(part_size, n - first), partial)
        if cuda.threadIdx.x == 0:
            parts[cuda.blockIdx.x * cuda.gridDim.y + cuda.blockIdx.y] = partial[0]

    _raise_if_kernel_stub(fold_line)
    fold_line = cuda.jit(device=True)(fold_line)
    compiled = cuda.jit(kernel)
    compiled_parts = cuda.jit(parts_kernel)

    def launch(out, out_shape, out_strides, a, a_shape, a_strides, reduce_dim, start):
        shape, strides = _as_1d(_ints(out_shape), _ints(out_strides))
        ashape, astrides = _as_1d(_ints(a_shape), _ints(a_strides))
        size, n = prod(shape), ashape[reduce_dim]
        if size == 0 or n == 0:  # (out is filled with start already)
            return
        if n > LONG_LINE and size < PARTS_BELOW:  # (out is contiguous: TensorBackend.reduce made it)
            part_size = LINE_THREADS * PART_STEPS
            count = _blocks(n, part_size)
            parts = cuda.device_array(size * count)
            args = (parts, _device_ints(shape), a, _device_ints(astrides), reduce_dim, n, part_size)
            _run(compiled_parts, (size, count), LINE_THREADS, *args, waits=True)
            a, ashape, astrides, reduce_dim, n = parts, (size, count), (count, 1), 1, count
            shape, strides = (size, 1), (1, 1)
        threads = min(LINE_THREADS, 1 << (n - 1).bit_length())  # per line: a power of two, n or more if it can
        lines = min(REDUCE_THREADS // threads, size)  # lines per block
        args = (out, _device_ints(shape), _device_ints(strides), a, _device_ints(ashape), _device_ints(astrides))
        _run(compiled, _blocks(size, lines), (threads, lines), *args, reduce_dim, start, size, waits=True)

    launch.kernels = (compiled, compiled_parts)  # type: ignore[attr-defined]
    return launch


def matmul_kernel(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides):
    """out[p, i, j] = sum over q of a[p, i, q] * b[p, q, j]; a batch of size 1 broadcasts.

    Products of at least REGISTER_TILES_FROM rows and columns take the register-tiled kernel, the
    others stage 3.5's; both add each output's products in the same order (they agree to the bit).
    """
    batch, n, m = _ints(out_shape)
    k = int(a_shape[2])
    if batch * n * m == 0:
        return
    o0, o1, o2 = _ints(out_strides)
    a0, a1, a2 = _ints(a_strides)
    b0, b1, b2 = _ints(b_strides)
    a0 = 0 if a_shape[0] == 1 else a0  # a batch of size 1 broadcasts: stride 0
    b0 = 0 if b_shape[0] == 1 else b0
    if n >= REGISTER_TILES_FROM and m >= REGISTER_TILES_FROM:
        kernel, side, threads = _register_tiles_kernel(), REG_BLOCK, REG_THREADS
    else:
        kernel, side, threads = _matmul_kernel(), TILE, TILE
    rows, cols = _blocks(n, side), _blocks(m, side)
    for first in range(0, batch, 65535):  # (a grid has at most 65535 blocks along z)
        count = min(65535, batch - first)
        views = (out[first * o0 :], a[first * a0 :], b[first * b0 :])
        _run(
            kernel,
            (cols, rows, count),
            (threads, threads),
            *views,
            n,
            k,
            m,
            o0,
            o1,
            o2,
            a0,
            a1,
            a2,
            b0,
            b1,
            b2,
            waits=True,
        )


def _matmul_tiles(out, a, b, n, k, m, o0, o1, o2, a0, a1, a2, b0, b1, b2):
    """Thread (x, y) of block (X, Y, p) computes out[p, i, j] for i = Y * TILE + y, j = X * TILE + x."""
    a_tile = cuda.shared.array((TILE, TILE), numba.float64)  # noqa: F841  (stage 3.5's code uses it)
    b_tile = cuda.shared.array((TILE, TILE), numba.float64)  # noqa: F841  (stage 3.5's code uses it)
    x = cuda.threadIdx.x
    y = cuda.threadIdx.y
    p = cuda.blockIdx.z  # noqa: F841  (stage 3.5's code uses it)
    i = cuda.blockIdx.y * TILE + y  # noqa: F841  (stage 3.5's code uses it)
    j = cuda.blockIdx.x * TILE + x  # noqa: F841  (stage 3.5's code uses it)
    # BEGIN SOLUTION 3.5: the tiled product: copy a tile of a and of b to shared memory, add up from there
    # HINT: walk k in steps of TILE. At each step the block's TILE x TILE threads fill both shared
    # tiles together, one element of each per thread: which element of a (and of b) should thread
    # (x, y) fetch, so that its own row i and column j find every term of their sum in the tiles?
    # Store 0.0 where the element lies outside its matrix, and the sum needs no bounds checks. A
    # tile may be read only once every thread has written it, and overwritten only once every
    # thread is done reading it (cuda.syncthreads()). A thread outside out still helps to copy.
    # One running sum from 0.0, one product at a time in order of q: the tests compare to the bit
    # with the simple backend and the library's register-tiled kernel, which add in that order.
    acc = 0.0
    for q0 in range(0, k, TILE):
        q = q0 + x
        a_tile[y, x] = a[p * a0 + i * a1 + q * a2] if i < n and q < k else 0.0
        q = q0 + y
        b_tile[y, x] = b[p * b0 + q * b1 + j * b2] if q < k and j < m else 0.0
        cuda.syncthreads()
        for q in range(TILE):
            acc += a_tile[y, q] * b_tile[q, x]
        cuda.syncthreads()
    if i < n and j < m:
        out[p * o0 + i * o1 + j * o2] = acc
    # END SOLUTION 3.5


_compiled_matmul: list = []  # compiled on first use (on a GPU, a stub of 3.5 then says so there, not at import)


def _matmul_kernel() -> Any:
    if not _compiled_matmul:
        _raise_if_kernel_stub(_matmul_tiles)
        _compiled_matmul.append(cuda.jit(_matmul_tiles))
    return _compiled_matmul[0]


# ---------------------------------------------------------------------------------------------
# The library's matrix multiply: register tiles. Module 3's speed, not stage 3.5's exercise.
#
# In stage 3.5's kernel each product costs two reads of shared memory (a_tile[y, q] and
# b_tile[q, x]) for one multiply-add, and shared memory, not arithmetic, sets the pace. Here each
# thread computes REG x REG outputs, holding their sums in registers across the whole k loop: at
# each step along k it reads REG values of a's tile and REG of b's from shared memory, then does
# REG * REG multiply-adds with them (16 for 8 reads, at REG = 4). A block of 16 x 16 threads so
# computes a 64 x 64 tile of out, and each value it copies from device memory serves 64 products.
#
# Thread (x, y) computes the rows y, y + REG_THREADS, ... and the columns x, x + REG_THREADS, ...
# of the block's tile (not REG neighbouring ones): at each step the 16 threads of a half-warp
# read 16 neighbouring values of b's tile (no two in one bank of shared memory) and one value of
# a's (read once, for all), and they write 16 neighbouring elements of out. a's tile is kept
# transposed ([q, row]) so that it is read along a row like b's, with one unused column so that
# the copy (neighbouring threads take neighbouring q) writes to 16 different banks.
#
# Each output is summed as in stage 3.5's kernel and the simple backend: from 0.0, in order of q,
# one multiply-add at a time (the tiles' zeros past the edge of k add 0.0 * 0.0, which changes no
# sum: x + 0.0 is x except for x = -0.0, which a sum from +0.0 never is). So this kernel equals
# stage 3.5's to the bit, on a GPU (where both compile each step to one fused multiply-add:
# benchmarks/cuda.py --ptx checks it) as in the simulator (where both also equal simple's).
#
# It takes over only large products (REGISTER_TILES_FROM), and only once stage 3.5 is written: in
# a student edition with 3.5 unwritten every product raises 3.5's stub, whichever kernel it would
# take (``_register_tiles_kernel``), and stage 3.5's tests, all small, run the student's kernel.
# ---------------------------------------------------------------------------------------------


def _register_tiles(out, a, b, n, k, m, o0, o1, o2, a0, a1, a2, b0, b1, b2):
    """Thread (x, y) of block (X, Y, p) computes out[p, i, j] for i = Y * REG_BLOCK + y + r * REG_THREADS
    and j = X * REG_BLOCK + x + c * REG_THREADS, r and c from 0 to REG - 1 (those inside out)."""
    a_shared = cuda.shared.array((REG_DEPTH, REG_PADDED), numba.float64)  # [q, row]: a's tile, transposed
    b_shared = cuda.shared.array((REG_DEPTH, REG_BLOCK), numba.float64)  # [q, column]
    sums = cuda.local.array((REG, REG), numba.float64)  # (registers: every index is known when compiled)
    a_column = cuda.local.array(REG, numba.float64)
    b_row = cuda.local.array(REG, numba.float64)
    x = cuda.threadIdx.x
    y = cuda.threadIdx.y
    top = cuda.blockIdx.y * REG_BLOCK  # the block's first row and first column of out
    left = cuda.blockIdx.x * REG_BLOCK
    a_first = cuda.blockIdx.z * a0 + top * a1  # where the block's rows of a and columns of b start
    b_first = cuda.blockIdx.z * b0 + left * b2
    for r in range(REG):
        for c in range(REG):
            sums[r, c] = 0.0
    for depth in range(0, k, REG_DEPTH):
        # The block copies both tiles, each thread every (REG_THREADS ** 2)-th value; neighbouring
        # threads take neighbouring values along k in a (usually contiguous along k), along m in b.
        for e in range(y * REG_THREADS + x, REG_DEPTH * REG_BLOCK, REG_THREADS * REG_THREADS):
            q, row = e % REG_DEPTH, e // REG_DEPTH
            inside = top + row < n and depth + q < k
            a_shared[q, row] = a[a_first + row * a1 + (depth + q) * a2] if inside else 0.0
            q, column = e // REG_BLOCK, e % REG_BLOCK
            inside = depth + q < k and left + column < m
            b_shared[q, column] = b[b_first + (depth + q) * b1 + column * b2] if inside else 0.0
        cuda.syncthreads()
        for q in range(REG_DEPTH):
            for r in range(REG):
                a_column[r] = a_shared[q, y + r * REG_THREADS]
            for c in range(REG):
                b_row[c] = b_shared[q, x + c * REG_THREADS]
            for r in range(REG):
                for c in range(REG):
                    sums[r, c] += a_column[r] * b_row[c]
        cuda.syncthreads()  # (before the next copy overwrites the tiles)
    for r in range(REG):
        row = top + y + r * REG_THREADS
        for c in range(REG):
            column = left + x + c * REG_THREADS
            if row < n and column < m:
                out[cuda.blockIdx.z * o0 + row * o1 + column * o2] = sums[r, c]


_compiled_register_tiles: list = []


def _register_tiles_kernel() -> Any:
    """The register-tiled kernel, compiled on first use, once stage 3.5's kernel is written: a
    student edition's stub of 3.5 raises its message here (on a GPU and in the simulator alike),
    so that no product runs without the student's kernel."""
    if not _compiled_register_tiles:
        message = _stub_message(_matmul_tiles)
        if message is not None:
            raise NotImplementedError(message)
        _compiled_register_tiles.append(cuda.jit(_register_tiles))
    return _compiled_register_tiles[0]


# ---------------------------------------------------------------------------------------------
# Module 4: the sliding windows of a convolution. The window arithmetic is the simple backend's row
# functions (stages 4.1 and 4.2, simple.py), compiled here as device functions: in the student
# edition this backend runs the student's. unfold: one thread per row of the columns (a sample, a
# channel and a place of the window), copying that place of every window. fold: one thread per
# channel plane, adding the plane's rows in the simple backend's order (windows overlap, so two
# threads must not add into one plane; the sums are then the same to the bit). out is given filled
# with zeros, so the places in the padding need no writing.
# ---------------------------------------------------------------------------------------------

_unfold1d_row = cuda.jit(device=True)(simple.unfold1d_row)
_fold1d_row = cuda.jit(device=True)(simple.fold1d_row)
_unfold2d_row = cuda.jit(device=True)(simple.unfold2d_row)
_fold2d_row = cuda.jit(device=True)(simple.fold2d_row)


def _unfold1d(out, o0, o1, o2, x, x0, x1, x2, channels, width, length, kernel, stride, padding, size):
    """Thread e < size copies row e of the columns: place k of channel c's windows of sample n."""
    e = cuda.grid(1)
    while e < size:
        k = e % kernel  # (places vary fastest: consecutive threads read consecutive places of x)
        c = (e // kernel) % channels
        n = e // (kernel * channels)
        row = out[n * o0 + (c * kernel + k) * o1 :]
        _unfold1d_row(row, o2, x[n * x0 + c * x1 :], x2, width, length, k, stride, padding)
        e += cuda.gridsize(1)


def _fold1d(out, o0, o1, o2, cols, c0, c1, c2, channels, width, length, kernel, stride, padding, size):
    """Thread e < size adds the rows of plane e (sample n, channel c) onto it, place by place."""
    e = cuda.grid(1)
    while e < size:
        c = e % channels
        n = e // channels
        plane = out[n * o0 + c * o1 :]
        for k in range(kernel):
            _fold1d_row(plane, o2, cols[n * c0 + (c * kernel + k) * c1 :], c2, width, length, k, stride, padding)
        e += cuda.gridsize(1)


def _unfold2d(out, o0, o1, o2, x, x0, x1, x2, x3, channels, height, width, out_h, out_w, kh, kw, sh, sw, ph, pw, size):
    """Thread e < size copies row e of the columns: place (i, j) of channel c's windows of sample n."""
    e = cuda.grid(1)
    while e < size:
        j = e % kw
        i = (e // kw) % kh
        c = (e // (kw * kh)) % channels
        n = e // (kw * kh * channels)
        row = out[n * o0 + ((c * kh + i) * kw + j) * o1 :]
        _unfold2d_row(row, o2, x[n * x0 + c * x1 :], x2, x3, height, width, out_h, out_w, i, j, sh, sw, ph, pw)
        e += cuda.gridsize(1)


def _fold2d(out, o0, o1, o2, o3, cols, c0, c1, c2, channels, height, width, out_h, out_w, kh, kw, sh, sw, ph, pw, size):
    """Thread e < size adds the rows of plane e (sample n, channel c) onto it, place by place."""
    e = cuda.grid(1)
    while e < size:
        c = e % channels
        n = e // channels
        plane = out[n * o0 + c * o1 :]
        for i in range(kh):
            for j in range(kw):
                row = cols[n * c0 + ((c * kh + i) * kw + j) * c1 :]
                _fold2d_row(plane, o2, o3, row, c2, height, width, out_h, out_w, i, j, sh, sw, ph, pw)
        e += cuda.gridsize(1)


_unfold1d_kernel = cuda.jit(_unfold1d)
_fold1d_kernel = cuda.jit(_fold1d)
_unfold2d_kernel = cuda.jit(_unfold2d)
_fold2d_kernel = cuda.jit(_fold2d)


def _conv_stub_check(kind: str, spatial: int) -> None:
    """On a GPU, a student edition's stub of the row function raises its message here (compiled, it
    would only stop each thread); the simulator runs the stub, which raises by itself."""
    if not SIMULATOR:
        fast_conv.raise_if_stub(kind, spatial)


def unfold1d_kernel(out, out_shape, out_strides, x, x_shape, x_strides, kernel, stride, padding):
    """The windows of x (N, C, W) as the columns of out (N, C * kernel, L)."""
    batch, channels, width = _ints(x_shape)
    length = int(out_shape[2])
    size = batch * channels * kernel  # rows of the columns
    if size and length:
        _conv_stub_check("unfold", 1)
        sizes = (channels, width, length, kernel, stride, padding, size)
        args = (out, *_ints(out_strides), x, *_ints(x_strides), *sizes)
        _run(_unfold1d_kernel, *_elementwise(size), *args)


def fold1d_kernel(out, out_shape, out_strides, cols, cols_shape, cols_strides, kernel, stride, padding):
    """Each column of cols (N, C * kernel, L) added onto its window of out (N, C, W)."""
    batch, channels, width = _ints(out_shape)
    length = int(cols_shape[2])
    size = batch * channels  # channel planes
    if size and width and length:
        _conv_stub_check("fold", 1)
        sizes = (channels, width, length, kernel, stride, padding, size)
        args = (out, *_ints(out_strides), cols, *_ints(cols_strides), *sizes)
        _run(_fold1d_kernel, *_elementwise(size), *args)


def unfold2d_kernel(out, out_shape, out_strides, x, x_shape, x_strides, kh, kw, sh, sw, ph, pw):
    """The kh x kw windows of x (N, C, H, W) as the columns of out (N, C * kh * kw, L)."""
    batch, channels, height, width = _ints(x_shape)
    out_h, out_w = (height + 2 * ph - kh) // sh + 1, (width + 2 * pw - kw) // sw + 1
    size = batch * channels * kh * kw  # rows of the columns
    if size and out_h * out_w:
        _conv_stub_check("unfold", 2)
        sizes = (channels, height, width, out_h, out_w, kh, kw, sh, sw, ph, pw, size)
        args = (out, *_ints(out_strides), x, *_ints(x_strides), *sizes)
        _run(_unfold2d_kernel, *_elementwise(size), *args)


def fold2d_kernel(out, out_shape, out_strides, cols, cols_shape, cols_strides, kh, kw, sh, sw, ph, pw):
    """Each column of cols (N, C * kh * kw, L) added onto its window of out (N, C, H, W)."""
    batch, channels, height, width = _ints(out_shape)
    out_h, out_w = (height + 2 * ph - kh) // sh + 1, (width + 2 * pw - kw) // sw + 1
    size = batch * channels  # channel planes
    if size and height * width and out_h * out_w:
        _conv_stub_check("fold", 2)
        sizes = (channels, height, width, out_h, out_w, kh, kw, sh, sw, ph, pw, size)
        args = (out, *_ints(out_strides), cols, *_ints(cols_strides), *sizes)
        _run(_fold2d_kernel, *_elementwise(size), *args)


def make_backend() -> TensorBackend:
    """The cuda backend: these kernels behind a TensorBackend."""
    return TensorBackend(sys.modules[__name__], "cuda")
