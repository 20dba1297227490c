"""Modules 3-4: the fast backend's unfold and fold, the windows of a convolution, compiled and parallel.

They compute what the simple backend's ``unfold1d_kernel``, ``fold1d_kernel`` (stage 4.1),
``unfold2d_kernel`` and ``fold2d_kernel`` (stage 4.2) compute; a convolution's speed then comes
from the fast matrix multiply that follows (``ops/conv.py``, docs/performance.md). Three changes
from the simple loops:

1. One kernel for both: a 1-D input (N, C, W) is a 2-D one of height 1 (a view with stride 0).
2. No test per element: for each kernel offset the windows that fall in the padding are skipped by
   computing the range of windows that stay inside the input, so the inner loop is a plain copy.
3. Threads: the work is cut into parts, rows of windows for unfold and channel planes for fold
   (fold adds into out, so no two parts may touch the same plane), run in parallel when large, as
   the other fast kernels are (``fast_parallel.py``).

These kernels are module 3's speed path, not what stages 4.1 and 4.2 ask a student to write. So
that a stub there is not silently bypassed, the first use of each runs the simple backend's kernel
of the same kind once on a tiny input: in the student edition a stub raises its own "Task 4.N"
message on this backend too.
"""

import threading
from typing import Any, Dict, Tuple

import numba
import numpy as np
from numba import njit, prange, types, uint64

from . import fast_cache, fast_parallel, simple

__all__ = ["fold1d_kernel", "fold2d_kernel", "unfold1d_kernel", "unfold2d_kernel"]

# Operations with fewer elements (of the columns) than this run serially. unfold and fold copy and
# add: they are limited by memory more than by arithmetic, so a second thread buys less than for
# map or zip, and a parallel region waits for a core, which on a busy machine is a scheduler tick
# or more. Measured on 2 cores with another process running (best / median of 30):
# 451,584 columns (64x1x28x28, 3x3): unfold serial 0.52 / 0.58 ms, parallel 6.3 / 12.0 ms;
# 1,806,336 (256x1x28x28): serial 2.3 / 3.2 ms, parallel 7.9 / 12.0 ms.
PARALLEL_THRESHOLD = 1 << 21
PARTS_PER_THREAD = 4

_flags = dict(cache=True, error_model="numpy", boundscheck=False)


@njit(inline="always")
def _inside(offset, step, count, size):
    """The windows w in [lo, hi) of 0 .. count - 1 whose position w * step + offset lies in 0 .. size - 1."""
    lo = 0 if offset >= 0 else (-offset + step - 1) // step
    hi = 0 if offset >= size else min(count, (size - 1 - offset) // step + 1)
    return lo, max(lo, hi)


@fast_cache.recovering  # a damaged cache file is rebuilt, not fatal
@njit(**_flags)
def unfold_part(part, parts, out, out_shape, out_strides, x, x_shape, x_strides, kh, kw, sh, sw, ph, pw):
    """out[n, (c * kh + i) * kw + j, r * out_w + s] = x[n, c, r * sh - ph + i, s * sw - pw + j] for the
    rows of windows (n, r) in part number ``part`` of ``parts``; out holds zeros in the padding."""
    batch, channels, height, width = x_shape[0], x_shape[1], x_shape[2], x_shape[3]
    out_h = (height + 2 * ph - kh) // sh + 1
    out_w = (width + 2 * pw - kw) // sw + 1
    o0, o1, o2 = out_strides[0], out_strides[1], out_strides[2]
    x0, x1, x2, x3 = x_strides[0], x_strides[1], x_strides[2], x_strides[3]
    rows = batch * out_h
    for t in range(part * rows // parts, (part + 1) * rows // parts):
        n, r = t // out_h, t % out_h
        for i in range(kh):
            y = r * sh - ph + i
            if y < 0 or y >= height:
                continue
            for j in range(kw):
                s_lo, s_hi = _inside(j - pw, sw, out_w, width)
                z = s_lo * sw - pw + j  # the input column of the first window inside
                for c in range(channels):
                    dst = out[n * o0 + ((c * kh + i) * kw + j) * o1 + (r * out_w + s_lo) * o2 :]
                    src = x[n * x0 + c * x1 + y * x2 + z * x3 :]
                    for s in range(s_hi - s_lo):
                        dst[uint64(s * o2)] = src[uint64(s * sw * x3)]


@fast_cache.recovering
@njit(**_flags)
def fold_part(part, parts, out, out_shape, out_strides, cols, cols_shape, cols_strides, kh, kw, sh, sw, ph, pw):
    """out[n, c, r * sh - ph + i, s * sw - pw + j] += cols[n, (c * kh + i) * kw + j, r * out_w + s] for
    the planes (n, c) in part number ``part`` of ``parts`` (no two parts add into the same plane)."""
    batch, channels, height, width = out_shape[0], out_shape[1], out_shape[2], out_shape[3]
    out_h = (height + 2 * ph - kh) // sh + 1
    out_w = (width + 2 * pw - kw) // sw + 1
    o0, o1, o2, o3 = out_strides[0], out_strides[1], out_strides[2], out_strides[3]
    c0, c1, c2 = cols_strides[0], cols_strides[1], cols_strides[2]
    planes = batch * channels
    for t in range(part * planes // parts, (part + 1) * planes // parts):
        n, c = t // channels, t % channels
        for i in range(kh):
            r_lo, r_hi = _inside(i - ph, sh, out_h, height)
            for j in range(kw):
                s_lo, s_hi = _inside(j - pw, sw, out_w, width)
                row = n * c0 + ((c * kh + i) * kw + j) * c1
                z = s_lo * sw - pw + j
                for r in range(r_lo, r_hi):
                    dst = out[n * o0 + c * o1 + (r * sh - ph + i) * o2 + z * o3 :]
                    src = cols[row + (r * out_w + s_lo) * c2 :]
                    for s in range(s_hi - s_lo):
                        dst[uint64(s * sw * o3)] += src[uint64(s * c2)]


_storage, _ints = types.float64[::1], types.int64[::1]
PART_SIGNATURE = types.void(
    types.int64, types.int64, _storage, _ints, _ints, _storage, _ints, _ints, *([types.int64] * 6)
)


def parallel_windows(part, parts, out, out_shape, out_strides, x, x_shape, x_strides, kh, kw, sh, sw, ph, pw):
    """Run part(p, parts, ...) for every part p, in parallel (unfold's parts or fold's: one signature)."""
    for p in prange(parts):
        part(np.int64(p), parts, out, out_shape, out_strides, x, x_shape, x_strides, kh, kw, sh, sw, ph, pw)


# The simple backend's kernel of each kind, and a tiny call of it: the stub check of the first use.
_TAUGHT = {
    ("unfold", 1): lambda: simple.unfold1d_kernel(*_tiny((1, 2, 2), (1, 1, 3)), 2, 1, 0),
    ("fold", 1): lambda: simple.fold1d_kernel(*_tiny((1, 1, 3), (1, 2, 2)), 2, 1, 0),
    ("unfold", 2): lambda: simple.unfold2d_kernel(*_tiny((1, 1, 1), (1, 1, 1, 1)), 1, 1, 1, 1, 0, 0),
    ("fold", 2): lambda: simple.fold2d_kernel(*_tiny((1, 1, 1, 1), (1, 1, 1)), 1, 1, 1, 1, 0, 0),
}


def _tiny(out_shape: tuple, in_shape: tuple) -> Tuple[Any, Any, Any, Any, Any, Any]:
    """(out, out_shape, out_strides, a, a_shape, a_strides) for small contiguous arrays."""

    def tensor(shape: tuple, fill: float) -> tuple:
        strides = [int(np.prod(shape[d + 1 :])) for d in range(len(shape))]
        return np.full(int(np.prod(shape)), fill), np.array(shape, np.int64), np.array(strides, np.int64)

    return tensor(out_shape, 0.0) + tensor(in_shape, 0.5)


class _Kernel:
    """unfold or fold for 1-D or 2-D windows: checks the taught loop once, then runs the part."""

    def __init__(self, kind: str, spatial: int):
        self.kind, self.spatial = kind, spatial
        self.part = unfold_part if kind == "unfold" else fold_part
        self._ready = False
        self._lock = threading.Lock()

    def _first_use(self) -> None:
        with self._lock:
            if self._ready:
                return
            fast_parallel.raise_if_stub(_TAUGHT[(self.kind, self.spatial)])
            if tuple(PART_SIGNATURE.args) not in self.part.overloads:
                self.part.compile(PART_SIGNATURE)
                self.part.disable_compile()  # an odd array is then a TypeError, handled below
            self._ready = True

    def __call__(self, out, out_shape, out_strides, a, a_shape, a_strides, *window):
        if not self._ready:
            self._first_use()
        if self.spatial == 1:  # a 1-D tensor (N, C, W) is a 2-D one of height 1: window (1, k)
            k, s, p = window
            window = (1, k, 1, s, 0, p)
            if self.kind == "unfold":
                a_shape, a_strides = _height_one(a_shape, a_strides)
            else:
                out_shape, out_strides = _height_one(out_shape, out_strides)
        args = (out, out_shape, out_strides, a, a_shape, a_strides) + tuple(int(v) for v in window)
        try:
            columns = len(out) if self.kind == "unfold" else int(np.prod(a_shape))
            if columns < PARALLEL_THRESHOLD or numba.get_num_threads() == 1:
                self.part(0, 1, *args)
            else:
                _launch(self.part, numba.get_num_threads() * PARTS_PER_THREAD, *args)
        except TypeError:
            fast_parallel.run_on_plain_arrays(self.part, (0, 1) + args, out=2)


def _height_one(shape: np.ndarray, strides: np.ndarray) -> tuple:
    """(N, C, W) shape and strides as (N, C, 1, W)."""
    return (
        np.array([shape[0], shape[1], 1, shape[2]], np.int64),
        np.array([strides[0], strides[1], 0, strides[2]], np.int64),
    )


_pointers: Dict[object, fast_parallel.PartPointer] = {}


def _launch(part, parts: int, *args) -> None:
    pointer = _pointers.get(part)
    if pointer is None:
        pointer = _pointers[part] = fast_parallel.PartPointer(part, PART_SIGNATURE)
    launcher = fast_parallel.launcher(parallel_windows, fast_parallel.launcher_signature(PART_SIGNATURE))
    fast_parallel.launch(launcher, pointer, parts, *args)  # takes turns where the threading layer needs it


unfold1d_kernel = _Kernel("unfold", 1)
fold1d_kernel = _Kernel("fold", 1)
unfold2d_kernel = _Kernel("unfold", 2)
fold2d_kernel = _Kernel("fold", 2)
