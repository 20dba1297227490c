"""Modules 3-4: the fast backend's fused kernels for module 4's max pooling and cross-entropy.

The taught versions are composed of generic operations (``ops/pooling.py``: ``tile``'s views and
copies, then ``max(-1)``; ``nn/functional.py``: a log-softmax of several maps, zips and reductions,
then the negative log-likelihood). On small tensors (a LeNet on 8x8 digits: windows of 4 values,
rows of 10 scores) each of those kernels costs more in its call and its per-row indexing than in
arithmetic, so the fast backend also offers these, which do the same work in one pass each.
``ops/fused_nn.py`` calls them through ``TensorBackend.fused_kernel`` where a backend has them; a
backend without them (simple, cuda) runs the taught composition.

- ``max_pool2d_blocks_kernel``: the maximum of each kh x kw block (windows side by side, no
  padding) and its position in the block; ``window_scatter_kernel`` and
  ``window_gather_kernel``: a value per block written to (or read from) that position, which is
  the max pool's backward (and the backward's backward).
- ``cross_entropy_kernel``: each row's ``-sum(dist * log_softmax(x))`` and their sum;
  ``cross_entropy_back_kernel``: its gradient, ``(softmax(x) * sum(dist) - dist) * g``.

Each computes what the taught version computes, in the same order where it says so: the max by
``scalar.max`` folded from -inf over the block row by row, exactly as the fast backend's reduction
folds ``tile``'s last dimension (so the values and positions are the same to the bit), and the
loss by the taught log-softmax's steps (``fast_math``'s exp and log, which the fast backend's maps
compile for ``scalar.exp`` and ``scalar.log``, and sums left to right from 0.0, as its reductions
add). tests/module4/test_fused_pool.py and test_fused_loss.py hold them to that; should the
reductions ever add in another order, these sums must follow it.

Threads: max pooling runs its planes in parallel for large tensors (``PARALLEL_THRESHOLD``), as
the other fast kernels do; the cross-entropy's rows are always few (a batch), so it runs serially.
Compiled code is cached on disk: the pooling kernels by numba (they call nothing outside this
file), the cross-entropy's through ``fast_cache`` (so that a change to ``fast_math.py``, which
they call, compiles them again).
"""

import math
import threading
from typing import Any, Callable, Dict, List

import numba
import numpy as np
from numba import njit, prange, types

from . import fast_cache, fast_math, fast_parallel

__all__ = [
    "cross_entropy_back_kernel",
    "cross_entropy_kernel",
    "max_pool2d_blocks_kernel",
    "window_gather_kernel",
    "window_scatter_kernel",
]

# Pooling with fewer input elements than this runs serially. Pooling reads each value once and
# does little arithmetic, so it is limited by memory more than by the processor, and a parallel
# region waits for a core (a scheduler tick or more on a busy machine): as for unfold and fold
# (fast_conv.py), only large tensors are worth the threads.
PARALLEL_THRESHOLD = 1 << 20
PARTS_PER_THREAD = 4

_storage, _ints = types.float64[::1], types.int64[::1]


# ---------------------------------------------------------------------------------------------
# Max pooling of blocks: parts over the planes (n, c), numbers part * planes // parts up to
# (part + 1) * planes // parts. Every array is indexed through its strides (x and g may be any
# view); out, pos and the scatter's result are fresh and contiguous.
# ---------------------------------------------------------------------------------------------


@njit(cache=True, error_model="numpy", inline="always")
def max_step(m, first, v, k):
    """(scalar.max(m, v), the position of the first maximum): k where v is larger than m (or the
    first nan), else ``first``. Written without a branch (both sides are computed, then chosen), so
    that the processor does not mispredict on random data, and inlined into the loop: four to six
    times faster than two ``if`` statements, measured on 64x16x8x8."""
    keep = (m > v) | (m != m)
    moves = (v > m) | ((v != v) & (m == m))
    return (m if keep else v), (k if moves else first)


@fast_cache.recovering
@njit(cache=True, error_model="numpy")
def max_pool_part(part, parts, out, out_shape, pos, x, x_shape, x_strides, kh, kw):
    """out[n, c, r, s] = the maximum of x[n, c, r*kh : r*kh + kh, s*kw : s*kw + kw] and pos[n, c, r, s]
    its first position in the block (i * kw + j), for the planes of this part.

    The maximum is ``scalar.max`` folded from -inf over the block row by row, exactly as the taught
    max(-1): nan if any value is nan, and of 0.0 and -0.0 the later. The position is that of the
    first value equal to it (the first nan where it is nan), as ``MaxDim``'s indices: a value
    moves it only where it is larger than the maximum so far (or the first nan). 2 x 2 blocks,
    the usual ones, take a path of their own with the four steps written out.
    """
    channels, out_h, out_w = x_shape[1], out_shape[2], out_shape[3]
    x0, x1, x2, x3 = x_strides[0], x_strides[1], x_strides[2], x_strides[3]
    planes = x_shape[0] * channels
    for t in range(part * planes // parts, (part + 1) * planes // parts):
        n, c = t // channels, t % channels
        base = n * x0 + c * x1
        o = t * out_h * out_w
        for r in range(out_h):
            for s in range(out_w):
                corner = base + r * kh * x2 + s * kw * x3
                m = x[corner]  # scalar.max(-inf, v) is v, nan included
                first = 0
                if kh == 2 and kw == 2:
                    m, first = max_step(m, first, x[corner + x3], 1)
                    m, first = max_step(m, first, x[corner + x2], 2)
                    m, first = max_step(m, first, x[corner + x2 + x3], 3)
                else:
                    for i in range(kh):
                        for j in range(kw):  # (the first step, v = m, changes nothing)
                            m, first = max_step(m, first, x[corner + i * x2 + j * x3], i * kw + j)
                out[o] = m
                pos[o] = first
                o += 1


@fast_cache.recovering
@njit(cache=True, error_model="numpy")
def window_scatter_part(part, parts, out, out_shape, g, g_shape, g_strides, pos, kh, kw):
    """out[n, c, r*kh + i, s*kw + j] = g[n, c, r, s] * (1.0 at pos[n, c, r, s], else 0.0), for the
    planes of this part: the gradient times the one-hot of the maximum's position, as the taught
    backward multiplies (so a gradient of -1 leaves -0.0, and one of inf leaves nan, beside the
    maximum). out is contiguous and starts at zeros: what no block covers stays 0."""
    channels, height, width = out_shape[1], out_shape[2], out_shape[3]
    out_h, out_w = g_shape[2], g_shape[3]
    g0, g1, g2, g3 = g_strides[0], g_strides[1], g_strides[2], g_strides[3]
    planes = out_shape[0] * channels
    for t in range(part * planes // parts, (part + 1) * planes // parts):
        n, c = t // channels, t % channels
        base = n * g0 + c * g1
        plane = t * height * width
        p = t * out_h * out_w
        for r in range(out_h):
            for s in range(out_w):
                gv = g[base + r * g2 + s * g3]
                at = pos[p]
                p += 1
                corner = plane + r * kh * width + s * kw
                if kh == 2 and kw == 2:  # written out: 2.5 times faster, measured
                    out[corner] = gv * (1.0 if at == 0.0 else 0.0)
                    out[corner + 1] = gv * (1.0 if at == 1.0 else 0.0)
                    out[corner + width] = gv * (1.0 if at == 2.0 else 0.0)
                    out[corner + width + 1] = gv * (1.0 if at == 3.0 else 0.0)
                else:
                    for i in range(kh):
                        for j in range(kw):
                            out[corner + i * width + j] = gv * (1.0 if i * kw + j == at else 0.0)


@fast_cache.recovering
@njit(cache=True, error_model="numpy")
def window_gather_part(part, parts, out, out_shape, t, t_shape, t_strides, pos, kh, kw):
    """out[n, c, r, s] = t[n, c, r*kh + i, s*kw + j] at the block's position i * kw + j = pos[n, c, r, s],
    for the planes of this part (the scatter's adjoint: each is the other's backward)."""
    channels, out_h, out_w = out_shape[1], out_shape[2], out_shape[3]
    t0, t1, t2, t3 = t_strides[0], t_strides[1], t_strides[2], t_strides[3]
    planes = out_shape[0] * channels
    for q in range(part * planes // parts, (part + 1) * planes // parts):
        n, c = q // channels, q % channels
        base = n * t0 + c * t1
        o = q * out_h * out_w
        for r in range(out_h):
            for s in range(out_w):
                at = int(pos[o])
                i, j = (at >> 1, at & 1) if kw == 2 else (at // kw, at % kw)  # (a division is slow)
                out[o] = t[base + (r * kh + i) * t2 + (s * kw + j) * t3]
                o += 1


_POOL_SIGNATURE = types.void(
    types.int64, types.int64, _storage, _ints, _storage, _storage, _ints, _ints, types.int64, types.int64
)


def parallel_pool(part, parts, out, out_shape, a, b, b_shape, b_strides, kh, kw):
    """Run part(p, parts, ...) for every part p, in parallel (max_pool_part's arguments: ``a`` is pos)."""
    for p in prange(parts):
        part(np.int64(p), parts, out, out_shape, a, b, b_shape, b_strides, kh, kw)


def parallel_windows(part, parts, out, out_shape, a, a_shape, a_strides, b, kh, kw):
    """Run part(p, parts, ...) for every part p, in parallel (the scatter's and the gather's arguments)."""
    for p in prange(parts):
        part(np.int64(p), parts, out, out_shape, a, a_shape, a_strides, b, kh, kw)


_WINDOWS_SIGNATURE = types.void(
    types.int64, types.int64, _storage, _ints, _storage, _ints, _ints, _storage, types.int64, types.int64
)

_pointers: Dict[Any, fast_parallel.PartPointer] = {}
_pointers_lock = threading.Lock()


def _run(part, launcher_template, signature, work: int, *args) -> None:
    """part(0, 1, *args) for small work; all of numba's threads on its parts for large."""
    if work < PARALLEL_THRESHOLD or numba.get_num_threads() == 1:
        part(0, 1, *args)
        return
    with _pointers_lock:
        pointer = _pointers.get(part)
        if pointer is None:
            part.compile(signature)  # (or loaded from the disk cache) before its address is taken
            pointer = _pointers[part] = fast_parallel.PartPointer(part, signature)
    launcher = fast_parallel.launcher(launcher_template, fast_parallel.launcher_signature(signature))
    fast_parallel.launch(launcher, pointer, numba.get_num_threads() * PARTS_PER_THREAD, *args)


def max_pool2d_blocks_kernel(out, out_shape, out_strides, pos, x, x_shape, x_strides, kh, kw):
    """out (N, C, H // kh, W // kw), contiguous: the maximum of each kh x kw block of x (N, C, H, W);
    pos (storage only, laid out as out): its first position in the block, i * kw + j."""
    _run(
        max_pool_part,
        parallel_pool,
        _POOL_SIGNATURE,
        len(out) * kh * kw,
        out,
        out_shape,
        pos,
        x,
        x_shape,
        x_strides,
        kh,
        kw,
    )


def window_scatter_kernel(out, out_shape, out_strides, g, g_shape, g_strides, pos, kh, kw):
    """out (N, C, H, W), contiguous, zeros: g (N, C, H // kh, W // kw) written into each block at pos."""
    _run(
        window_scatter_part,
        parallel_windows,
        _WINDOWS_SIGNATURE,
        len(out),
        out,
        out_shape,
        g,
        g_shape,
        g_strides,
        pos,
        kh,
        kw,
    )


def window_gather_kernel(out, out_shape, out_strides, t, t_shape, t_strides, pos, kh, kw):
    """out (N, C, H // kh, W // kw), contiguous: t (N, C, H, W) read from each block at pos."""
    _run(
        window_gather_part,
        parallel_windows,
        _WINDOWS_SIGNATURE,
        len(out) * kh * kw,
        out,
        out_shape,
        t,
        t_shape,
        t_strides,
        pos,
        kh,
        kw,
    )


# ---------------------------------------------------------------------------------------------
# The cross-entropy of rows: x (N, C) scores, dist (N, C) the target's weights. fast_cache
# compiles the two templates below in a module of their own, with ``fn`` = log_softmax_shift.
# ---------------------------------------------------------------------------------------------

_exp = fast_math.exp  # (compiled inline: fast_math registers it with numba)
_log = njit(error_model="numpy")(fast_math.log)


def log_softmax_shift(row, step, n):
    """(m, l) for a row of n scores ``step`` apart: log_softmax(row) = (row - m) - l.

    m is the row's maximum (``scalar.max`` folded from -inf), or 0.0 where that is not finite,
    as the taught log_softmax's ``_finite``; l = log(sum(exp(row - m))), summed left to right
    from 0.0, with the exp and log that the fast backend's maps compile (``fast_math``).
    """
    m = -math.inf
    for k in range(n):
        v = row[k * step]
        if not (m > v or m != m):
            m = v
    if not math.isfinite(m):
        m = 0.0
    s = 0.0
    for k in range(n):
        s = s + _exp(row[k * step] - m)
    return m, _log(s)


def fn(*args):
    """Stands for log_softmax_shift in the templates below; the generated module binds it."""
    raise RuntimeError("the cross-entropy templates run only inside a module generated by fast_cache")


def cross_entropy_rows(losses, x, x_shape, x_strides, dist, d_shape, d_strides, mask, masked):
    """losses[r] = -sum_c(where(mask, log_softmax(x)[r, c], 0.0) * dist[r, c]) for each row r, and
    their sum (left to right from 0.0). ``mask`` (N * C, contiguous, 1.0 or 0.0) is read only when
    ``masked``: it is where the taught loss keeps the log-probabilities (``_on_support``), so that a
    class the target never picks counts for nothing even at a log-probability of -inf."""
    rows, classes = x_shape[0], x_shape[1]
    xr, xc, dr, dc = x_strides[0], x_strides[1], d_strides[0], d_strides[1]
    total = 0.0
    for r in range(rows):
        row = x[r * xr :]
        weights = dist[r * dr :]
        m, lse = fn(row, xc, classes)
        acc = 0.0
        for c in range(classes):
            log_p = (row[c * xc] - m) - lse
            if masked:  # as where(support, log_p, 0.0): one side's value plus an exact 0.0
                log_p = (log_p if mask[r * classes + c] != 0.0 else 0.0) + 0.0
            acc = acc + log_p * weights[c * dc]
        losses[r] = -acc
        total = total + losses[r]
    return total


def cross_entropy_rows_back(out, x, x_shape, x_strides, dist, d_shape, d_strides, scale, scale_strides, divisor):
    """out[r, c] = (softmax(x)[r, c] * sum(dist[r]) - dist[r, c]) * (scale[r] / divisor): the gradient
    of the rows' losses, each times its row's scale (out contiguous; scale's stride 0 where one
    scale serves all), divided as ``scalar.div`` divides (the mean's total weight, or 1)."""
    rows, classes = x_shape[0], x_shape[1]
    xr, xc, dr, dc, sr = x_strides[0], x_strides[1], d_strides[0], d_strides[1], scale_strides[0]
    for r in range(rows):
        row = x[r * xr :]
        weights = dist[r * dr :]
        m, lse = fn(row, xc, classes)
        total = 0.0
        for c in range(classes):
            total = total + weights[c * dc]
        sv = scale[r * sr]
        sv = sv / divisor if divisor != 0.0 else sv * math.copysign(math.inf, divisor)
        o = out[r * classes :]
        for c in range(classes):
            o[c] = (_exp((row[c * xc] - m) - lse) * total - weights[c * dc]) * sv


_CE_TEMPLATES: List[Callable[..., Any]] = [cross_entropy_rows, cross_entropy_rows_back]
_CE_HELPERS = ["math", "_exp"]
_CE_SOURCES = [__file__, fast_math.__file__]
_CE_SIGNATURES = {
    "cross_entropy_rows": types.float64(
        _storage, _storage, _ints, _ints, _storage, _ints, _ints, _storage, types.boolean
    ),
    "cross_entropy_rows_back": types.void(
        _storage, _storage, _ints, _ints, _storage, _ints, _ints, _storage, _ints, types.float64
    ),
}
_ce_parts: Dict[str, Any] = {}
_ce_lock = threading.Lock()


def _ce_part(name: str):
    part = _ce_parts.get(name)
    if part is None:
        with _ce_lock:
            part = _ce_parts.get(name)
            if part is None:
                module = fast_cache.kernels_for(log_softmax_shift, _CE_TEMPLATES, _CE_HELPERS, _CE_SOURCES)
                part = getattr(module, name)
                fast_cache.compile_part(part, _CE_SIGNATURES[name], log_softmax_shift)
                _ce_parts[name] = part
    return part


def cross_entropy_kernel(losses, x, x_shape, x_strides, dist, d_shape, d_strides, mask, masked) -> float:
    """losses (N,): each row's -sum(dist * log_softmax(x)) (mask: see cross_entropy_rows); returns their sum."""
    return _ce_part("cross_entropy_rows")(losses, x, x_shape, x_strides, dist, d_shape, d_strides, mask, masked)


def cross_entropy_back_kernel(
    out, x, x_shape, x_strides, dist, d_shape, d_strides, scale, scale_strides, divisor
) -> None:
    """out (N, C), contiguous: (softmax(x) * sum(dist, 1) - dist) * (scale / divisor), one scale a row."""
    part = _ce_part("cross_entropy_rows_back")
    part(out, x, x_shape, x_strides, dist, d_shape, d_strides, scale, scale_strides, float(divisor))
