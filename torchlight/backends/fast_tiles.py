"""Module 3: the library's own register-tiled matrix multiply for the fast backend.

Stage 3.3's kernel (``fast_matmul._block``) computes each value of C as a dot product along k, four
by four, and LLVM vectorizes it along k. This kernel, which takes over products with at least
``TILES_FROM`` rows and columns once stage 3.3 is written (``fast_matmul.matmul_kernel``), turns
the loops around, as BLAS libraries do: a tile of MR x NR = 4 x 8 values of C stays in registers
for the whole panel along k, and each step p adds an outer product, column p of A's 4 rows times
row p of B's 8 columns. B's 8 values of a step are contiguous, so they are two vector loads (four
float64 each, AVX2) that serve 4 x 8 multiply-adds, and A's 4 values are each broadcast to a vector.

Each value of C starts from what C holds and adds its products in order p = 0, 1, ..., as the
simple backend does: the results differ from it by fused multiply-adds only (``contract``; no
sum is reordered).

Operands are read in place where that is cheap and safe: A wherever its rows run contiguously along
k (any tile reads its 4 rows as 4 streams), B wherever its rows run contiguously along m and m is a
multiple of NR (a tile reads 8 contiguous values). Otherwise, and where rows are a multiple of 4 KiB
apart (they would evict each other from the cache), ``tiles_pack_part`` copies them into
*micro-panels*: for A, MR rows interleaved (step p's 4 values together), for B, NR columns (step
p's 8 values together), panels of KC steps, padded with zeros to whole tiles.

numba leaves LLVM's SLP vectorizer (which packs like scalar operations into vector ones) off; the 32
running sums of a tile are 32 scalars to it, so ``compile_vectorized`` compiles the parts with it on.
"""

import numpy as np
from numba import njit, uint64
from numba.core import config
from numba.core.compiler_lock import global_compiler_lock

from . import fast_cache

__all__ = ["MR", "NR", "TILES_FROM", "compile_vectorized", "tiles_block_part", "tiles_pack_part", "tiles_plan"]

MR, NR = 4, 8  # a tile of C: 8 vector sums of 4 float64 and 3 more vectors for A and B fit AVX2's 16
KC = 256  # steps per panel: a micro-panel of B (256 x 8 values, 16 KiB) stays in L1 while A's pass
MC = 64  # rows of C per block (A's micro-panels of a block, 128 KiB, stay in L2)
NC = 64  # columns of C per block (a multiple of NR)
B_IN_PLACE = 64 * 64  # values: a B at most this large is read in place (if its rows are contiguous)
TILES_FROM = 16  # products with at least this many rows and columns of C take this kernel

_flags = dict(fastmath={"contract"}, error_model="numpy")  # fused multiply-adds, sums in order
_inline = njit(inline="always", **_flags)


def compile_vectorized(part, signature) -> None:
    """Compile ``part`` (or load it from the disk cache) for ``signature`` with the SLP vectorizer on.

    numba reads the setting (``NUMBA_SLP_VECTORIZE``) when it optimizes; numba's compiler lock keeps
    any other compilation from running meanwhile with it changed. Nothing else changes: the
    vectorizer only packs operations that were there, in the same order.
    """
    with global_compiler_lock:
        saved = config.SLP_VECTORIZE
        config.SLP_VECTORIZE = 1
        try:
            if tuple(signature.args) not in part.overloads:
                part.compile(signature)
        finally:
            config.SLP_VECTORIZE = saved
    part.disable_compile()


@_inline
def _tile(a, a0, a1, a2, a3, ak, b, ib, bk, kc, out, io, so_r):
    """out[4 x 8 tile at io] += rows a0..a3 of a (steps ak apart) times 8 columns of b at ib (steps bk apart).

    out[io + r * so_r + c] += sum over p < kc of a[a_r + p * ak] * b[ib + p * bk + c], in order of
    p, for r in 0..3 and c in 0..7 (the tile's rows are contiguous). The 32 sums are local
    variables (registers) for the whole loop; each step reads 4 values of a and 8 contiguous of b.
    """
    # Rows as slices, read and written at constant indices: LLVM then sees 8 neighbouring values.
    row0, row1 = out[io : io + NR], out[io + so_r : io + so_r + NR]
    row2, row3 = out[io + 2 * so_r : io + 2 * so_r + NR], out[io + 3 * so_r : io + 3 * so_r + NR]
    c00, c01, c02, c03, c04, c05, c06, c07 = row0[0], row0[1], row0[2], row0[3], row0[4], row0[5], row0[6], row0[7]
    c10, c11, c12, c13, c14, c15, c16, c17 = row1[0], row1[1], row1[2], row1[3], row1[4], row1[5], row1[6], row1[7]
    c20, c21, c22, c23, c24, c25, c26, c27 = row2[0], row2[1], row2[2], row2[3], row2[4], row2[5], row2[6], row2[7]
    c30, c31, c32, c33, c34, c35, c36, c37 = row3[0], row3[1], row3[2], row3[3], row3[4], row3[5], row3[6], row3[7]
    for p in range(kc):
        # Unsigned indices: no negative-index checks (see fast.py) in the loop that does the work.
        x0, x1, x2, x3 = a[uint64(a0 + p * ak)], a[uint64(a1 + p * ak)], a[uint64(a2 + p * ak)], a[uint64(a3 + p * ak)]
        y = uint64(ib + p * bk)
        y0, y1, y2, y3 = b[y], b[y + uint64(1)], b[y + uint64(2)], b[y + uint64(3)]
        y4, y5, y6, y7 = b[y + uint64(4)], b[y + uint64(5)], b[y + uint64(6)], b[y + uint64(7)]
        c00 += x0 * y0
        c01 += x0 * y1
        c02 += x0 * y2
        c03 += x0 * y3
        c04 += x0 * y4
        c05 += x0 * y5
        c06 += x0 * y6
        c07 += x0 * y7
        c10 += x1 * y0
        c11 += x1 * y1
        c12 += x1 * y2
        c13 += x1 * y3
        c14 += x1 * y4
        c15 += x1 * y5
        c16 += x1 * y6
        c17 += x1 * y7
        c20 += x2 * y0
        c21 += x2 * y1
        c22 += x2 * y2
        c23 += x2 * y3
        c24 += x2 * y4
        c25 += x2 * y5
        c26 += x2 * y6
        c27 += x2 * y7
        c30 += x3 * y0
        c31 += x3 * y1
        c32 += x3 * y2
        c33 += x3 * y3
        c34 += x3 * y4
        c35 += x3 * y5
        c36 += x3 * y6
        c37 += x3 * y7
    row0[0], row0[1], row0[2], row0[3], row0[4], row0[5], row0[6], row0[7] = c00, c01, c02, c03, c04, c05, c06, c07
    row1[0], row1[1], row1[2], row1[3], row1[4], row1[5], row1[6], row1[7] = c10, c11, c12, c13, c14, c15, c16, c17
    row2[0], row2[1], row2[2], row2[3], row2[4], row2[5], row2[6], row2[7] = c20, c21, c22, c23, c24, c25, c26, c27
    row3[0], row3[1], row3[2], row3[3], row3[4], row3[5], row3[6], row3[7] = c30, c31, c32, c33, c34, c35, c36, c37


@_inline
def _padded(size, multiple):
    """size rounded up to a multiple of ``multiple``."""
    return (size + multiple - 1) // multiple * multiple


@_inline
def _in_place(row_stride, k_stride):
    """True when rows can be read where they are: contiguous, and not 4 KiB apart (the same cache sets)."""
    return k_stride == 1 and row_stride % 512 != 0


@fast_cache.recovering
@njit(cache=True, **_flags)
def tiles_plan(a_shape, a_strides, b_shape, b_strides):
    """(a_packed, b_packed, size_a, size_b): which operands must be packed, and their packed sizes."""
    n, k, m = a_shape[1], a_shape[2], b_shape[2]
    a_packed = not _in_place(a_strides[1], a_strides[2])
    # B in place only when small: a tile reads 8 values from each of kc rows of B, and rows a
    # power of two apart share few cache sets, so a large B is read from memory again and again.
    b_packed = not _in_place(b_strides[1], b_strides[2]) or m % NR != 0 or k * m > B_IN_PLACE
    size_a = a_shape[0] * _padded(n, MR) * k if a_packed else 0
    size_b = b_shape[0] * _padded(m, NR) * k if b_packed else 0
    return a_packed, b_packed, size_a, size_b


@_inline
def _pack(src, line_stride, k_stride, l0, l1, lines, width, k, dst):
    """Copy lines l0..l1-1 (l0 a multiple of ``width``) of src, each k long, into dst as micro-panels.

    A *line* is a row of A or a column of B. dst holds panels of KC steps; panel p0 starts at
    p0 * lines rounded up to ``width``; in it the micro-panel of lines l..l + width - 1 starts at
    l * kc, with step p's ``width`` values together. Lines past ``lines`` are zeros.
    """
    padded = _padded(lines, width)
    for p0 in range(0, k, KC):
        kc = min(KC, k - p0)
        panels = dst[p0 * padded :]
        if line_stride == 1:  # a step's values are contiguous (a row of B): read step by step
            for p in range(kc):
                source = src[p0 * k_stride + p * k_stride :]
                for g in range(l0, l1, width):
                    into = panels[g * kc + p * width : g * kc + p * width + width]
                    for c in range(min(width, lines - g)):
                        into[c] = source[g + c]
                    for c in range(min(width, lines - g), width):
                        into[c] = 0.0
        else:  # each line is read along k (a row of A, or a column of B read across its rows)
            for g in range(l0, l1, width):
                into = panels[g * kc : (g + width) * kc]
                for c in range(width):
                    if g + c < lines:
                        line = src[(g + c) * line_stride + p0 * k_stride :]
                        for p in range(kc):
                            # Unsigned indices: no negative-index check (see fast.py).
                            into[uint64(p * width + c)] = line[uint64(p * k_stride)]
                    else:
                        for p in range(kc):
                            into[p * width + c] = 0.0


@fast_cache.recovering
@njit(cache=True, **_flags)
def tiles_pack_part(part, parts, a, a_shape, a_strides, b, b_shape, b_strides, ap, bp, a_packed, b_packed):
    """Pack part number ``part`` of ``parts`` of the work: groups of MC rows of A, then of NC columns of B."""
    n, k, m = a_shape[1], a_shape[2], b_shape[2]
    groups_a, groups_b = (n + MC - 1) // MC, (m + NC - 1) // NC
    tasks_a = a_shape[0] * groups_a if a_packed else 0
    tasks = tasks_a + (b_shape[0] * groups_b if b_packed else 0)
    for t in range(part * tasks // parts, (part + 1) * tasks // parts):
        if t < tasks_a:
            e, g = t // groups_a, t % groups_a
            r0, r1 = g * MC, min(n, g * MC + MC)
            _pack(a[e * a_strides[0] :], a_strides[1], a_strides[2], r0, r1, n, MR, k, ap[e * _padded(n, MR) * k :])
        else:
            e, g = (t - tasks_a) // groups_b, (t - tasks_a) % groups_b
            c0, c1 = g * NC, min(m, g * NC + NC)
            # B's columns are its lines: b_strides[2] apart, their steps along k b_strides[1] apart.
            _pack(b[e * b_strides[0] :], b_strides[2], b_strides[1], c0, c1, m, NR, k, bp[e * _padded(m, NR) * k :])


@_inline
def _block(a, a_packed, lda, ak, b, b_packed, ldb, n, m, k, out, so_r, so_c, i0, i1, j0, j1, scratch):
    """out[i0:i1, j0:j1] += A[i0:i1, :] @ B[:, j0:j1], one panel of KC steps at a time, in tiles.

    A packed (``_pack``): panel p0 at p0 * (n rounded up to MR), the micro-panel of rows i..i + 3
    at i * kc in it, step p of row i + r at p * MR + r; in place: row i at i * lda, its steps ak
    apart. B packed likewise (NR columns to a micro-panel); in place: column j at j, steps ldb
    apart. For each micro-panel of B (which then stays in L1), the tiles go down the block's rows.
    A tile that reaches past C's last row or column (or a C whose rows are not contiguous) is
    computed in ``scratch``, 4 x 8 with zeros past the edge, and copied back, so that nothing
    outside C is written.
    """
    n_padded, m_padded = _padded(n, MR), _padded(m, NR)
    for p0 in range(0, k, KC):
        kc = min(KC, k - p0)
        for j in range(j0, j1, NR):
            ib, bk = (p0 * m_padded + j * kc, NR) if b_packed else (p0 * ldb + j, ldb)
            columns = min(NR, j1 - j)
            for i in range(i0, i1, MR):
                rows = min(MR, i1 - i)
                if a_packed:
                    first, ar, step = p0 * n_padded + i * kc, 1, MR
                else:
                    first, ar, step = i * lda + p0 * ak, lda, ak
                # (rows past C's last are read again from the tile's last row: their sums are dropped)
                a0, a1 = first, first + ar * min(1, rows - 1)
                a2, a3 = first + ar * min(2, rows - 1), first + ar * (rows - 1)
                io = i * so_r + j * so_c
                if rows == MR and columns == NR and so_c == 1:  # (C's rows contiguous: as vectors)
                    _tile(a, a0, a1, a2, a3, step, b, ib, bk, kc, out, io, so_r)
                else:
                    scratch[:] = 0.0
                    for r in range(rows):
                        for c in range(columns):
                            scratch[r * NR + c] = out[io + r * so_r + c * so_c]
                    _tile(a, a0, a1, a2, a3, step, b, ib, bk, kc, scratch, 0, NR)
                    for r in range(rows):
                        for c in range(columns):
                            out[io + r * so_r + c * so_c] = scratch[r * NR + c]


@fast_cache.recovering
@njit(cache=True, **_flags)
def tiles_block_part(
    part, parts, out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides, a_packed, b_packed
):
    """Compute part number ``part`` of ``parts`` of the MC x NC blocks of C, of every batch element.

    ``a`` and ``b`` are the packed copies where ``a_packed`` and ``b_packed`` say so, else the operands.
    """
    batch, n, m = out_shape[0], out_shape[1], out_shape[2]
    k = a_shape[2]
    a_batch, lda, ak = (_padded(n, MR) * k, 0, 0) if a_packed else (a_strides[0], a_strides[1], a_strides[2])
    b_batch, ldb = (_padded(m, NR) * k, 0) if b_packed else (b_strides[0], b_strides[1])
    if a_shape[0] == 1:  # one matrix for the whole batch
        a_batch = 0
    if b_shape[0] == 1:
        b_batch = 0
    scratch = np.empty(MR * NR)
    blocks_i, blocks_j = (n + MC - 1) // MC, (m + NC - 1) // NC
    blocks = batch * blocks_i * blocks_j
    for t in range(part * blocks // parts, (part + 1) * blocks // parts):
        e, bi, bj = t // (blocks_i * blocks_j), (t // blocks_j) % blocks_i, t % blocks_j
        _block(
            a[e * a_batch :],
            a_packed,
            lda,
            ak,
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
            scratch,
        )
