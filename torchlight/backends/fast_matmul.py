"""Module 3: the fast backend's matrix multiply, blocked so that it runs near the processor's peak.

The naive kernel (``simple.matmul_kernel`` compiled: three loops and a dot product) reaches about
1-2 GFLOP/s: every multiply-add waits for two loads, mostly from main memory. Three changes, each
measured in ``notebooks/module3_fast_backend.ipynb``, make it some fifty times faster:

1. Packing. Copy A's rows and Bᵀ's rows (B's columns) so that each runs contiguously along k, in
   panels of ``KC`` values (numbers that fit the fast L1 cache). Every later load is then a
   contiguous, vectorizable one, whatever the strides of the inputs (transposed, broadcast, sliced).
2. Register tiles. Compute a 4 x 4 tile of C at a time: 16 running sums, fed by 4 rows of A and 4
   rows of Bᵀ. Each value loaded is used four times, so the processor multiplies instead of waiting
   for memory. The sums run along k, which LLVM vectorizes once it may reassociate additions
   (``fastmath={"reassoc", "contract"}``; ``contract`` fuses multiply-adds). Only this kernel
   reorders its sums, so it differs from the simple backend by rounding, as numpy's does.
3. Blocks and threads. C is cut into ``MC`` x ``NC`` blocks that keep their panels in cache; the
   blocks of all batch elements are shared out among the threads.

Like map, zip and reduce (``fast.py``), the work is written as *parts*: ``pack_part`` packs, then
``block_part`` computes blocks, each doing part ``p`` of ``parts``. A small product calls each
once; a large one hands them to parallel launchers (``fast_parallel.py``). Compiling the tiles is
the slow part of the first use, and this way they are compiled once, not once more inside every
parallel loop.

Stage 3.3 asks for the blocked kernel, ``_block``, and the dot product of the edges, ``_dot``;
the unrolled 4 x 4 tile, ``_tile``, is given (the notebook's exercise writes a 2 x 2 one), and so
are the packing and the parts. numpy's own matmul is never called: this kernel is what it teaches.

Once that kernel has run (``_first_use``), products with at least ``fast_tiles.TILES_FROM`` rows
and columns take the library's own kernel instead (compiled on the first such product,
``_first_tiles``), ``fast_tiles.py``: 4 x 8 tiles that add outer
products in registers, about twice as fast where AVX2 has 16 vector registers (the 16 sums of a
4 x 4 tile along k, and the values they need, do not fit in them). Smaller products, and every
product of stage 3.3's tests, take stage 3.3's kernel; the thin path below takes a convolution's.
"""

import threading

import numba
import numpy as np
from numba import njit, prange, types, uint64

from . import fast_cache, fast_parallel, fast_tiles

__all__ = ["matmul_kernel", "MATMUL_PARALLEL_THRESHOLD"]

PARTS_PER_THREAD = 4  # parts per thread on the parallel path: uneven parts then balance out

KC = 256  # panel depth: 4 rows of A and 4 of Bᵀ, 256 values each, fill 16 KiB of the 48 KiB L1
MC = 64  # rows of C per block
NC = 64  # columns of C per block
TILE = 4  # a register tile is TILE x TILE
ROWS_PER_TRANSPOSE = 8  # rows packed together when the source is not contiguous along k

# Products with fewer multiply-adds (batch * n * m * k) than this run serially: threads pay from
# about 96 x 96 x 96 (benchmarks/threshold.py, 2 idle cores); a parallel region costs microseconds,
# and can stall for milliseconds when another process holds a core.
MATMUL_PARALLEL_THRESHOLD = 1 << 20

_flags = dict(fastmath={"reassoc", "contract"}, error_model="numpy")
_inline = njit(inline="always", **_flags)
_helper = njit(**_flags)


@_inline
def _in_place(row_stride, k_stride):
    """True when rows can be read where they are: contiguous along k, and not 4 KiB apart.

    Rows exactly a multiple of 4 KiB apart fall into the same cache sets and evict each other.
    """
    return k_stride == 1 and row_stride % 512 != 0


@_inline
def _pack_rows(src, row_stride, k_stride, r0, r1, cols, dst, rows):
    """Copy rows r0..r1-1 of src (rows x cols) into dst as panels of KC columns, rows contiguous."""
    for p0 in range(0, cols, KC):
        kc = min(KC, cols - p0)
        panel = dst[p0 * rows :]
        if k_stride == 1:
            for r in range(r0, r1):
                into = panel[r * kc : r * kc + kc]
                start = r * row_stride + p0
                src_row = src[start : start + kc]
                for c in range(kc):
                    into[c] = src_row[c]
        else:  # a transpose: read each k along a short run of rows, write ROWS_PER_TRANSPOSE rows
            for g in range(r0, r1, ROWS_PER_TRANSPOSE):
                g1 = min(r1, g + ROWS_PER_TRANSPOSE)
                for c in range(kc):
                    src_k = src[(p0 + c) * k_stride :]
                    for r in range(g, g1):
                        # Unsigned indices: no negative-index check (see fast.py); 2-3x faster here.
                        panel[uint64(r * kc + c)] = src_k[uint64(r * row_stride)]


@_inline
def _tile(a, ia, lda, b, ib, ldb, kc, out, io, so_r, so_c):
    """out[4 x 4 tile at io] += (4 rows of a at ia) . (4 rows of b at ib), each kc long.

    out[io + r * so_r + c * so_c] gets row r of a (at ia + r * lda) times row c of b (at
    ib + c * ldb), for r and c in 0..3: sixteen dot products, as ``_dot`` computes each. This is the
    library's own speed-up, not a stage's code: the notebook's ``matmul_2x2_tiles`` at 4 x 4,
    written out so that the 16 running sums are local variables (registers) and the loop along k
    is one that LLVM vectorizes. ``_block`` calls it for every whole tile; tests/module3/
    test_fast_matmul.py checks it equal to sixteen ``_dot``s.
    """
    a0, a1, a2, a3 = (
        a[ia : ia + kc],
        a[ia + lda : ia + lda + kc],
        a[ia + 2 * lda : ia + 2 * lda + kc],
        a[ia + 3 * lda : ia + 3 * lda + kc],
    )
    b0, b1, b2, b3 = (
        b[ib : ib + kc],
        b[ib + ldb : ib + ldb + kc],
        b[ib + 2 * ldb : ib + 2 * ldb + kc],
        b[ib + 3 * ldb : ib + 3 * ldb + kc],
    )
    c00 = c01 = c02 = c03 = c10 = c11 = c12 = c13 = 0.0
    c20 = c21 = c22 = c23 = c30 = c31 = c32 = c33 = 0.0
    for p in range(kc):
        x0, x1, x2, x3 = a0[p], a1[p], a2[p], a3[p]
        y0, y1, y2, y3 = b0[p], b1[p], b2[p], b3[p]
        c00 += x0 * y0
        c01 += x0 * y1
        c02 += x0 * y2
        c03 += x0 * y3
        c10 += x1 * y0
        c11 += x1 * y1
        c12 += x1 * y2
        c13 += x1 * y3
        c20 += x2 * y0
        c21 += x2 * y1
        c22 += x2 * y2
        c23 += x2 * y3
        c30 += x3 * y0
        c31 += x3 * y1
        c32 += x3 * y2
        c33 += x3 * y3
    r0, r1, r2, r3 = io, io + so_r, io + 2 * so_r, io + 3 * so_r
    out[r0] += c00
    out[r0 + so_c] += c01
    out[r0 + 2 * so_c] += c02
    out[r0 + 3 * so_c] += c03
    out[r1] += c10
    out[r1 + so_c] += c11
    out[r1 + 2 * so_c] += c12
    out[r1 + 3 * so_c] += c13
    out[r2] += c20
    out[r2 + so_c] += c21
    out[r2 + 2 * so_c] += c22
    out[r2 + 3 * so_c] += c23
    out[r3] += c30
    out[r3 + so_c] += c31
    out[r3 + 2 * so_c] += c32
    out[r3 + 3 * so_c] += c33


@_inline
def _dot(a, ia, b, ib, kc):
    """The dot product of a[ia : ia + kc] and b[ib : ib + kc]: one value of C, for the edges of a
    block that a whole tile does not fit."""
    # BEGIN SOLUTION 3.3
    # HINT: sum in a local variable; a loop over slices that start at 0 is one LLVM vectorizes.
    x = a[ia : ia + kc]
    y = b[ib : ib + kc]
    acc = 0.0
    for p in range(kc):
        acc += x[p] * y[p]
    return acc
    # END SOLUTION 3.3


@_helper
def _block(a, a_packed, lda, b, b_packed, ldb, n, m, k, out, so_r, so_c, i0, i1, j0, j1):
    """out[i0:i1, j0:j1] += a[i0:i1, :] @ b[j0:j1, :]ᵀ, one panel of KC at a time: the blocked kernel.

    Row i of a (a row of A) and row j of b (a row of Bᵀ, a column of B) are each k long. Each
    operand is either its packed copy (``a_packed``: ``pack_part`` laid it out as panels of KC
    columns; panel p0, columns p0 to p0 + kc - 1, starts at p0 * n in a's copy and at p0 * m in
    b's, its rows kc apart) or the operand itself, read in place (its rows ``lda`` apart,
    contiguous along k). out's element (i, j) is at i * so_r + j * so_c and already holds the sums
    of earlier panels (or zero): add to it. ``n`` and ``m`` are the numbers of rows of a and of b;
    ``block_part`` picks the block (rows i0..i1-1, columns j0..j1-1).
    """
    # BEGIN SOLUTION 3.3
    # HINT: along k one panel at a time (the last may be shorter than KC). Inside a panel, cover
    # the block with TILE x TILE tiles, each one call of _tile; the rows and columns left over
    # where a side of the block is not a multiple of TILE take one _dot per value.
    for p0 in range(0, k, KC):
        kc = min(KC, k - p0)
        # Where panel p0 starts and how far apart its rows are: packed, or the source itself.
        pa, ra = (p0 * n, kc) if a_packed else (p0, lda)
        pb, rb = (p0 * m, kc) if b_packed else (p0, ldb)
        i = i0
        while i + TILE <= i1:
            j = j0
            while j + TILE <= j1:
                _tile(a, pa + i * ra, ra, b, pb + j * rb, rb, kc, out, i * so_r + j * so_c, so_r, so_c)
                j += TILE
            for jj in range(j, j1):
                for ii in range(i, i + TILE):
                    out[ii * so_r + jj * so_c] += _dot(a, pa + ii * ra, b, pb + jj * rb, kc)
            i += TILE
        for ii in range(i, i1):
            for jj in range(j0, j1):
                out[ii * so_r + jj * so_c] += _dot(a, pa + ii * ra, b, pb + jj * rb, kc)
    # END SOLUTION 3.3


# The parts' signatures: explicit, so that a part can be handed to a parallel launcher as a value.
_storage, _ints = types.float64[::1], types.int64[::1]
PACK_SIGNATURE = types.void(
    types.int64,
    types.int64,
    _storage,
    _ints,
    _ints,
    _storage,
    _ints,
    _ints,
    _storage,
    _storage,
    types.boolean,
    types.boolean,
)
BLOCK_SIGNATURE = types.void(
    types.int64,
    types.int64,
    _storage,
    _ints,
    _ints,
    _storage,
    _ints,
    _ints,
    _storage,
    _ints,
    _ints,
    types.boolean,
    types.boolean,
)


@fast_cache.recovering
@njit(cache=True, **_flags)
def plan(a_shape, a_strides, b_shape, b_strides):
    """(a_packed, b_packed, size_a, size_b): which operands must be packed, and their packed sizes.

    An operand whose rows are already contiguous along k (and not 4 KiB apart) is read in place.
    """
    n, k, m = a_shape[1], a_shape[2], b_shape[2]
    a_packed = not _in_place(a_strides[1], a_strides[2])
    b_packed = not _in_place(b_strides[2], b_strides[1])  # Bᵀ's rows are B's columns
    return a_packed, b_packed, a_shape[0] * n * k if a_packed else 0, b_shape[0] * m * k if b_packed else 0


@fast_cache.recovering
@njit(cache=True, **_flags)
def pack_part(part, parts, a, a_shape, a_strides, b, b_shape, b_strides, ap, bp, a_packed, b_packed):
    """Pack part number ``part`` of ``parts`` of the work: groups of rows of A, then of Bᵀ."""
    n, k, m = a_shape[1], a_shape[2], b_shape[2]
    groups_a, groups_b = (n + MC - 1) // MC, (m + NC - 1) // NC
    tasks_a = a_shape[0] * groups_a if a_packed else 0
    tasks = tasks_a + (b_shape[0] * groups_b if b_packed else 0)
    for t in range(part * tasks // parts, (part + 1) * tasks // parts):
        if t < tasks_a:
            e, g = t // groups_a, t % groups_a
            _pack_rows(
                a[e * a_strides[0] :], a_strides[1], a_strides[2], g * MC, min(n, g * MC + MC), k, ap[e * n * k :], n
            )
        else:
            e, g = (t - tasks_a) // groups_b, (t - tasks_a) % groups_b
            # Bᵀ's rows are B's columns: row stride b_strides[2], stride along k b_strides[1].
            _pack_rows(
                b[e * b_strides[0] :], b_strides[2], b_strides[1], g * NC, min(m, g * NC + NC), k, bp[e * m * k :], m
            )


@fast_cache.recovering
@njit(cache=True, **_flags)
def block_part(
    part, parts, out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides, a_packed, b_packed
):
    """Compute part number ``part`` of ``parts`` of the MC x NC blocks of C, of every batch element.

    ``a`` and ``b`` are the packed copies where ``a_packed`` and ``b_packed`` say so, else the operands.
    """
    batch, n, m = out_shape[0], out_shape[1], out_shape[2]
    k = a_shape[2]
    a_batch, lda = (n * k, k) if a_packed else (a_strides[0], a_strides[1])
    b_batch, ldb = (m * k, k) if b_packed else (b_strides[0], b_strides[2])
    if a_shape[0] == 1:  # one matrix for the whole batch
        a_batch = 0
    if b_shape[0] == 1:
        b_batch = 0
    blocks_i, blocks_j = (n + MC - 1) // MC, (m + NC - 1) // NC
    blocks = batch * blocks_i * blocks_j
    for t in range(part * blocks // parts, (part + 1) * blocks // parts):
        e, bi, bj = t // (blocks_i * blocks_j), (t // blocks_j) % blocks_i, t % blocks_j
        _block(
            a[e * a_batch :],
            a_packed,
            lda,
            b[e * b_batch :],
            b_packed,
            ldb,
            n,
            m,
            k,
            out[e * out_strides[0] :],
            out_strides[1],
            out_strides[2],
            bi * MC,
            min(n, bi * MC + MC),
            bj * NC,
            min(m, bj * NC + NC),
        )


# Thin products: the fast path for a convolution's products (a small inner dimension k, as the
# 9 or 16 values of a 3x3 kernel's windows, or few rows n, as a conv's 8 or 16 output channels,
# against long rows m of windows). There a 4 x 4 tile sums only k products before it writes its
# 16 values back, and packing copies more than it saves: about 6 GFLOP/s (docs/performance.md).
# This kernel adds each k-row of B, scaled by A's value, straight onto C's row (vectorized along
# m), four k-rows per pass over C's row. Each value of C still sums its k products in order
# p = 0, 1, ..., as the simple backend does: the results differ from it by fused multiply-adds only.
THIN_MIN_COLUMNS = 32  # rows of C shorter than this vectorize poorly: the tiles are faster
THIN_MAX_INNER = 16  # thin when k or n is at most this (benchmarks/conv.py's shapes; measured)


@_inline
def _thin_row(row, m, a, ia, sa, b, ib, sb, k):
    """row[0:m] += sum over p of a[ia + p * sa] * b[ib + p * sb : ... + m], p in order."""
    p = 0
    while p + 4 <= k:
        x0, x1, x2, x3 = a[ia + p * sa], a[ia + (p + 1) * sa], a[ia + (p + 2) * sa], a[ia + (p + 3) * sa]
        b0 = b[ib + p * sb : ib + p * sb + m]
        b1 = b[ib + (p + 1) * sb : ib + (p + 1) * sb + m]
        b2 = b[ib + (p + 2) * sb : ib + (p + 2) * sb + m]
        b3 = b[ib + (p + 3) * sb : ib + (p + 3) * sb + m]
        for j in range(m):  # one expression, summed left to right: the order of p is kept
            row[j] = row[j] + x0 * b0[j] + x1 * b1[j] + x2 * b2[j] + x3 * b3[j]
        p += 4
    while p < k:
        x = a[ia + p * sa]
        bp = b[ib + p * sb : ib + p * sb + m]
        for j in range(m):
            row[j] += x * bp[j]
        p += 1


@fast_cache.recovering
@njit(cache=True, fastmath={"contract"}, error_model="numpy")
def thin_part(part, parts, out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides):
    """Part ``part`` of ``parts`` of the rows of C (all batch elements) for a thin product; B's
    and C's rows must be contiguous (stride 1 along m). C starts at zero."""
    batch, n, m = out_shape[0], out_shape[1], out_shape[2]
    k = a_shape[2]
    a_batch = a_strides[0] if a_shape[0] > 1 else 0
    b_batch = b_strides[0] if b_shape[0] > 1 else 0
    rows = batch * n
    for t in range(part * rows // parts, (part + 1) * rows // parts):
        e, i = t // n, t % n
        start = e * out_strides[0] + i * out_strides[1]
        row = out[start : start + m]
        _thin_row(row, m, a, e * a_batch + i * a_strides[1], a_strides[2], b, e * b_batch, b_strides[1], k)


def is_thin(out_strides, a_shape, b_shape, b_strides) -> bool:
    """Whether a product takes the thin path: rows of B and C contiguous, long enough, and k or n small."""
    return (
        b_strides[2] == 1
        and out_strides[2] == 1
        and b_shape[2] >= THIN_MIN_COLUMNS
        and min(a_shape[1], a_shape[2]) <= THIN_MAX_INNER
    )


THIN_SIGNATURE = types.void(types.int64, types.int64, *([_storage, _ints, _ints] * 3))


def parallel_thin(thin_part, parts, out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides):
    """Run thin_part(p, parts, ...) for every part p, in parallel."""
    for p in prange(parts):
        thin_part(np.int64(p), parts, out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides)


# The parallel launcher (see fast_parallel.py): packing must finish before any block starts, so
# two prange loops, in one function so that a product costs one call from Python.


def parallel_matmul(
    pack_part,
    block_part,
    parts,
    out,
    out_shape,
    out_strides,
    a,
    a_shape,
    a_strides,
    b,
    b_shape,
    b_strides,
    ap,
    bp,
    a_packed,
    b_packed,
):
    """Run pack_part(p, parts, ...) for every part p in parallel, then block_part(p, parts, ...)."""
    for p in prange(parts):
        pack_part(np.int64(p), parts, a, a_shape, a_strides, b, b_shape, b_strides, ap, bp, a_packed, b_packed)
    a_src = ap if a_packed else a
    b_src = bp if b_packed else b
    for p in prange(parts):
        block_part(
            np.int64(p),
            parts,
            out,
            out_shape,
            out_strides,
            a_src,
            a_shape,
            a_strides,
            b_src,
            b_shape,
            b_strides,
            a_packed,
            b_packed,
        )


PARALLEL_SIGNATURE = types.void(
    types.FunctionType(PACK_SIGNATURE),
    types.FunctionType(BLOCK_SIGNATURE),
    types.int64,
    *BLOCK_SIGNATURE.args[2:5],
    *PACK_SIGNATURE.args[2:],
)


_pointers: dict = {}
_lock = threading.Lock()


def _first_use() -> None:
    """Compile (or load) stage 3.3's parts for their signatures, and only those; once, whatever the threads.

    In the student edition, an unwritten ``_dot`` (whose result ``_block`` uses) is called in
    Python first, so that its stub says what to write instead of numba failing to type the kernel;
    then one small product runs serially, so that any other stub (or bug) raises here rather than
    inside the parallel launcher's threads, where numba cannot pass an exception on. The library's
    tiles (``fast_tiles.py``) are compiled later, by ``_first_tiles``: no product runs before stage
    3.3's kernel has.
    """
    with _lock:
        if "block" in _pointers:
            return
        fast_parallel.raise_if_stub(_dot, np.ones(1), 0, np.ones(1), 0, 1)
        for part, signature in ((pack_part, PACK_SIGNATURE), (block_part, BLOCK_SIGNATURE)):
            if tuple(signature.args) not in part.overloads:
                part.compile(signature)
                part.disable_compile()
        # (1, 5, 1) @ (1, 1, 5): one tile and its edges, b packed (a column read across rows).
        out_shape, a_shape, b_shape = np.array([1, 5, 5]), np.array([1, 5, 1]), np.array([1, 1, 5])
        out_strides, a_strides, b_strides = np.array([25, 5, 1]), np.array([5, 1, 1]), np.array([5, 5, 1])
        _serial(np.zeros(25), out_shape, out_strides, np.ones(5), a_shape, a_strides, np.ones(5), b_shape, b_strides)
        _pointers["pack"] = fast_parallel.PartPointer(pack_part, PACK_SIGNATURE)
        _pointers["block"] = fast_parallel.PartPointer(block_part, BLOCK_SIGNATURE)  # (last: the parts are ready)


def _first_tiles() -> None:
    """Compile (or load) the library's tiles, on the first product large enough for them; once.

    A process whose products are all small never waits for them (about 11 s where nothing is
    cached yet, as in a fresh checkout or a grader's own cache).
    """
    with _lock:
        if "tiles_block" in _pointers:
            return
        fast_tiles.compile_vectorized(fast_tiles.tiles_pack_part, PACK_SIGNATURE)
        fast_tiles.compile_vectorized(fast_tiles.tiles_block_part, BLOCK_SIGNATURE)
        _pointers["tiles_pack"] = fast_parallel.PartPointer(fast_tiles.tiles_pack_part, PACK_SIGNATURE)
        _pointers["tiles_block"] = fast_parallel.PartPointer(fast_tiles.tiles_block_part, BLOCK_SIGNATURE)


# Which parts compute a product: stage 3.3's blocked kernel, or the library's register tiles.
STAGE = (plan, pack_part, block_part, "pack", "block")
TILES = (fast_tiles.tiles_plan, fast_tiles.tiles_pack_part, fast_tiles.tiles_block_part, "tiles_pack", "tiles_block")


def matmul_kernel(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides):
    """out[p] = a[p] @ b[p] for 3-D shapes (batch, n, k) @ (batch, k, m); a batch of 1 broadcasts.

    Thin products take the thin path; those with at least ``fast_tiles.TILES_FROM`` rows and
    columns the library's register tiles; the others (every product of stage 3.3's tests, unless a
    test says otherwise) stage 3.3's blocked kernel.
    """
    if "block" not in _pointers:
        _first_use()
    args = (out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides)
    if is_thin(out_strides, a_shape, b_shape, b_strides):
        _thin(args)
        return
    tiles = min(out_shape[1], out_shape[2]) >= fast_tiles.TILES_FROM
    if tiles and "tiles_block" not in _pointers:
        _first_tiles()
    kernel = TILES if tiles else STAGE
    try:
        # out is fresh (TensorBackend allocates it): its length is batch * n * m.
        if len(out) * a_shape[2] < MATMUL_PARALLEL_THRESHOLD or numba.get_num_threads() == 1:
            _serial(*args, kernel=kernel)
        else:
            _parallel(*args, parts=numba.get_num_threads() * PARTS_PER_THREAD, kernel=kernel)
    except TypeError:
        fast_parallel.run_on_plain_arrays(lambda *xs: _serial(*xs, kernel=kernel), args, out=0)


# The packed copies live in buffers kept from one product to the next (one set per thread). A
# fresh buffer of megabytes costs a page fault per 4 KiB on first touch, which can double the time
# of a large product (measured: 41 against 127 GFLOP/s for 16 x 256 x 256).
WORKSPACE_LIMIT = 1 << 23  # values (64 MiB); a larger packed copy is allocated afresh each time
_workspace = threading.local()


def _buffer(name: str, size: int) -> np.ndarray:
    """``size`` float64 values of this thread's buffer ``name`` (grown when too small)."""
    buffer = getattr(_workspace, name, None)
    if buffer is None or len(buffer) < size:
        buffer = np.empty(max(size, 1))
        if size <= WORKSPACE_LIMIT:
            setattr(_workspace, name, buffer)
    return buffer[:size]


def _prepare(plan, a_shape, a_strides, b_shape, b_strides):
    a_packed, b_packed, size_a, size_b = plan(a_shape, a_strides, b_shape, b_strides)
    return a_packed, b_packed, _buffer("a", size_a), _buffer("b", size_b)


def _serial(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides, kernel=STAGE):
    plan, pack, block = kernel[:3]
    a_packed, b_packed, ap, bp = _prepare(plan, a_shape, a_strides, b_shape, b_strides)
    if a_packed or b_packed:  # (a call into compiled code costs a microsecond even with nothing to do)
        pack(0, 1, a, a_shape, a_strides, b, b_shape, b_strides, ap, bp, a_packed, b_packed)
    block(
        0,
        1,
        out,
        out_shape,
        out_strides,
        ap if a_packed else a,
        a_shape,
        a_strides,
        bp if b_packed else b,
        b_shape,
        b_strides,
        a_packed,
        b_packed,
    )


def _parallel(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides, parts, kernel=STAGE):
    a_packed, b_packed, ap, bp = _prepare(kernel[0], a_shape, a_strides, b_shape, b_strides)
    fast_parallel.launch(
        fast_parallel.launcher(parallel_matmul, PARALLEL_SIGNATURE),
        _pointers[kernel[3]],
        _pointers[kernel[4]],
        parts,
        out,
        out_shape,
        out_strides,
        a,
        a_shape,
        a_strides,
        b,
        b_shape,
        b_strides,
        ap,
        bp,
        a_packed,
        b_packed,
    )


_thin_pointer: dict = {}


def _thin(args) -> None:
    """A thin product (``is_thin``): serially when small, else its rows shared out among the threads."""
    try:
        if len(args[0]) * args[4][2] < MATMUL_PARALLEL_THRESHOLD or numba.get_num_threads() == 1:
            thin_part(0, 1, *args)
        else:
            pointer = _thin_pointer.get("thin")
            if pointer is None:
                pointer = _thin_pointer["thin"] = fast_parallel.PartPointer(thin_part, THIN_SIGNATURE)
            launcher = fast_parallel.launcher(parallel_thin, fast_parallel.launcher_signature(THIN_SIGNATURE))
            parts = numba.get_num_threads() * PARTS_PER_THREAD
            fast_parallel.launch(launcher, pointer, parts, *args)
    except TypeError:
        fast_parallel.run_on_plain_arrays(lambda *xs: thin_part(0, 1, *xs), args, out=0)
