"""Module 2: the simple backend, a kernel set in plain Python loops: the executable specification.

Each kernel walks every element of ``out`` by its ordinal, turns the ordinal into an index, maps
that index to each input (broadcasting) and reads and writes through the strides. The ``fast``
backend computes the same thing with the same index arithmetic (``torchlight/indexing.py``), only
compiled and in parallel; the tests hold it to this one.
"""

from typing import Callable

import numpy as np

from ..indexing import broadcast_index, index_to_position, to_index  # noqa: F401  (the kernels of stage 2.3 use them)


def _size(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def map_kernel(fn: Callable[[float], float]) -> Callable:
    """out[i] = fn(in[i]) for every index i of out (``in`` broadcasts to ``out``)."""

    def kernel(out, out_shape, out_strides, in_storage, in_shape, in_strides):
        # Python lists index much faster than numpy arrays in a pure-Python loop.
        out_shape, out_strides = out_shape.tolist(), out_strides.tolist()
        in_shape, in_strides = in_shape.tolist(), in_strides.tolist()
        out_index = [0] * len(out_shape)  # noqa: F841  (stage 2.3's code uses it)
        in_index = [0] * len(in_shape)  # noqa: F841  (stage 2.3's code uses it)
        with np.errstate(all="ignore"):  # inf and nan, not warnings, as the compiled backends
            # BEGIN SOLUTION 2.3: the map kernel's loop over every element of out
            # HINT: for each ordinal of out: its index (to_index), the input's index that it reads
            # (broadcast_index), and a position in each storage (index_to_position).
            for ordinal in range(_size(out_shape)):
                to_index(ordinal, out_shape, out_index)
                broadcast_index(out_index, out_shape, in_shape, in_index)
                x = in_storage[index_to_position(in_index, in_strides)]
                out[index_to_position(out_index, out_strides)] = fn(x)
            # END SOLUTION 2.3

    return kernel


def zip_kernel(fn: Callable[[float, float], float]) -> Callable:
    """out[i] = fn(a[i], b[i]) for every index i of out (a and b broadcast to out)."""

    def kernel(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides):
        out_shape, out_strides = out_shape.tolist(), out_strides.tolist()
        a_shape, a_strides = a_shape.tolist(), a_strides.tolist()
        b_shape, b_strides = b_shape.tolist(), b_strides.tolist()
        out_index = [0] * len(out_shape)  # noqa: F841  (stage 2.3's code uses it)
        a_index = [0] * len(a_shape)  # noqa: F841  (stage 2.3's code uses it)
        b_index = [0] * len(b_shape)  # noqa: F841  (stage 2.3's code uses it)
        with np.errstate(all="ignore"):
            # BEGIN SOLUTION 2.3: the zip kernel's loop over every element of out
            for ordinal in range(_size(out_shape)):
                to_index(ordinal, out_shape, out_index)
                broadcast_index(out_index, out_shape, a_shape, a_index)
                broadcast_index(out_index, out_shape, b_shape, b_index)
                x = a[index_to_position(a_index, a_strides)]
                y = b[index_to_position(b_index, b_strides)]
                out[index_to_position(out_index, out_strides)] = fn(x, y)
            # END SOLUTION 2.3

    return kernel


def reduce_kernel(fn: Callable[[float, float], float]) -> Callable:
    """out[i] = fn(...fn(fn(start, a[i with 0 at reduce_dim]), a[i with 1 ...])...) along reduce_dim."""

    def kernel(out, out_shape, out_strides, a, a_shape, a_strides, reduce_dim, start):
        out_shape, out_strides = out_shape.tolist(), out_strides.tolist()
        a_strides = a_strides.tolist()
        n = int(a_shape[reduce_dim])  # noqa: F841  (stage 2.3's code uses it)
        index = [0] * len(out_shape)  # noqa: F841  (stage 2.3's code uses it)
        with np.errstate(all="ignore"):
            # BEGIN SOLUTION 2.3: the reduce kernel's loop over every element of out
            # HINT: out's index is a's index with 0 at reduce_dim; set index[reduce_dim] to each
            # position along it in turn to read a (after finding out's position).
            for ordinal in range(_size(out_shape)):
                to_index(ordinal, out_shape, index)
                position = index_to_position(index, out_strides)
                acc = start
                for j in range(n):
                    index[reduce_dim] = j
                    acc = fn(acc, a[index_to_position(index, a_strides)])
                out[position] = acc
            # END SOLUTION 2.3

    return kernel


def matmul_kernel(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides):
    """out[p, i, j] = sum over q of a[p, i, q] * b[p, q, j]; a batch of size 1 broadcasts."""
    batch, n, m = out_shape.tolist()
    k = int(a_shape[2])  # noqa: F841  (stage 2.5's code uses it)
    o0, o1, o2 = out_strides.tolist()
    a0, a1, a2 = a_strides.tolist()
    b0, b1, b2 = b_strides.tolist()
    # BEGIN SOLUTION 2.5
    # HINT: a batch of size 1 broadcasts: give its batch dimension stride 0.
    if a_shape[0] == 1:
        a0 = 0
    if b_shape[0] == 1:
        b0 = 0
    for p in range(batch):
        for i in range(n):
            for j in range(m):
                acc = 0.0
                for q in range(k):
                    acc += a[p * a0 + i * a1 + q * a2] * b[p * b0 + q * b1 + j * b2]
                out[p * o0 + i * o1 + j * o2] = acc
    # END SOLUTION 2.5


# -- Module 4: the sliding windows of a convolution ------------------------------------------
# unfold copies every window of the input into a column of out, so that a convolution becomes one
# matrix multiply (weight @ columns). fold is its adjoint (its transpose as a linear map): it adds
# every column back onto the input positions its window covers, and is unfold's backward.
# out is given filled with zeros, so the positions of a window that fall in the zero padding need
# no writing. The input and the columns may have any strides.
#
# The kernels below only walk the rows of the columns (one sample, one channel, one place of the
# window); what a stage asks is the work on one row, in the *_row functions. Those are the one copy
# of the window arithmetic: the fast backend compiles them with numba (fast_conv.py) and the cuda
# backend as device functions (cuda.py), so, like torchlight/indexing.py's functions, they use
# only integers, arithmetic and indexing into the arrays they are given.


def unfold1d_kernel(out, out_shape, out_strides, x, x_shape, x_strides, kernel, stride, padding):
    """out[n, c * kernel + k, s] = x[n, c, s * stride - padding + k] (0 in the padding), for x (N, C, W)."""
    batch, channels, width = x_shape.tolist()
    length = int(out_shape[2])
    o0, o1, o2 = out_strides.tolist()
    x0, x1, x2 = x_strides.tolist()
    for n in range(batch):
        for c in range(channels):
            for k in range(kernel):  # row c * kernel + k of sample n's columns
                unfold1d_row(
                    out[n * o0 + (c * kernel + k) * o1 :],
                    o2,
                    x[n * x0 + c * x1 :],
                    x2,
                    width,
                    length,
                    k,
                    stride,
                    padding,
                )


def unfold1d_row(row, row_step, x, x_step, width, length, k, stride, padding):
    """Place k of every window of one channel ``x`` (``width`` values, ``x_step`` apart), copied into
    ``row`` (``length`` values, one per window, ``row_step`` apart): row c * kernel + k of the columns.

    Window s covers the positions s * stride - padding, ... of x, so element s of the row is x at
    position s * stride - padding + k, or stays 0 where that position is in the padding.
    """
    # BEGIN SOLUTION 4.1: copy place k of each window of x into the row
    # HINT: a position outside 0 .. width - 1 is padding. Element s of the row is row[s * row_step].
    for s in range(length):
        j = s * stride - padding + k
        if 0 <= j < width:
            row[s * row_step] = x[j * x_step]
    # END SOLUTION 4.1


def fold1d_kernel(out, out_shape, out_strides, cols, cols_shape, cols_strides, kernel, stride, padding):
    """out[n, c, s * stride - padding + k] += cols[n, c * kernel + k, s] (padding dropped): unfold1d's adjoint."""
    batch, channels, width = out_shape.tolist()
    length = int(cols_shape[2])
    o0, o1, o2 = out_strides.tolist()
    c0, c1, c2 = cols_strides.tolist()
    with np.errstate(all="ignore"):  # inf - inf is nan, not a warning, as the compiled backends
        for n in range(batch):
            for c in range(channels):
                for k in range(kernel):  # (in this order: the sums are the same on every backend)
                    fold1d_row(
                        out[n * o0 + c * o1 :],
                        o2,
                        cols[n * c0 + (c * kernel + k) * c1 :],
                        c2,
                        width,
                        length,
                        k,
                        stride,
                        padding,
                    )


def fold1d_row(out, out_step, row, row_step, width, length, k, stride, padding):
    """unfold1d_row turned around: each element s of ``row`` (place k of window s) added onto channel
    ``out`` (``width`` values, ``out_step`` apart) at the position it was copied from; the padding
    is dropped. Windows overlap, so a position may receive several values."""
    # BEGIN SOLUTION 4.1: add place k of each window back onto the channel
    for s in range(length):
        j = s * stride - padding + k
        if 0 <= j < width:
            out[j * out_step] += row[s * row_step]
    # END SOLUTION 4.1


def unfold2d_kernel(out, out_shape, out_strides, x, x_shape, x_strides, kh, kw, sh, sw, ph, pw):
    """out[n, (c * kh + i) * kw + j, r * out_w + s] = x[n, c, r * sh - ph + i, s * sw - pw + j]
    (0 in the padding), for x (N, C, H, W) and windows of kh x kw, out_w windows to a row."""
    batch, channels, height, width = x_shape.tolist()
    out_h = (height + 2 * ph - kh) // sh + 1
    out_w = (width + 2 * pw - kw) // sw + 1
    o0, o1, o2 = out_strides.tolist()
    x0, x1, x2, x3 = x_strides.tolist()
    for n in range(batch):
        for c in range(channels):
            plane = x[n * x0 + c * x1 :]
            for i in range(kh):
                for j in range(kw):  # row (c * kh + i) * kw + j of sample n's columns
                    row = out[n * o0 + ((c * kh + i) * kw + j) * o1 :]
                    unfold2d_row(row, o2, plane, x2, x3, height, width, out_h, out_w, i, j, sh, sw, ph, pw)


def unfold2d_row(row, row_step, x, x_step_h, x_step_w, height, width, out_h, out_w, i, j, sh, sw, ph, pw):
    """Place (i, j) of every kh x kw window of one channel ``x`` (height x width, ``x_step_h`` apart
    down and ``x_step_w`` across), copied into ``row`` (``row_step`` apart): row (c * kh + i) * kw + j
    of the columns.

    Window (r, s), for r < out_h and s < out_w, is element r * out_w + s of the row; its top left
    corner is x's position (r * sh - ph, s * sw - pw). Places in the padding stay 0.
    """
    # BEGIN SOLUTION 4.2: copy place (i, j) of each window of x into the row
    # HINT: unfold1d_row in both directions. A window row r whose row of x is in the padding can
    # be skipped whole.
    for r in range(out_h):
        y = r * sh - ph + i
        if 0 <= y < height:
            for s in range(out_w):
                z = s * sw - pw + j
                if 0 <= z < width:
                    row[(r * out_w + s) * row_step] = x[y * x_step_h + z * x_step_w]
    # END SOLUTION 4.2


def fold2d_kernel(out, out_shape, out_strides, cols, cols_shape, cols_strides, kh, kw, sh, sw, ph, pw):
    """out[n, c, r * sh - ph + i, s * sw - pw + j] += cols[n, (c * kh + i) * kw + j, r * out_w + s]
    (padding dropped): unfold2d's adjoint, for out (N, C, H, W)."""
    batch, channels, height, width = out_shape.tolist()
    out_h = (height + 2 * ph - kh) // sh + 1
    out_w = (width + 2 * pw - kw) // sw + 1
    o0, o1, o2, o3 = out_strides.tolist()
    c0, c1, c2 = cols_strides.tolist()
    with np.errstate(all="ignore"):  # inf - inf is nan, not a warning, as the compiled backends
        for n in range(batch):
            for c in range(channels):
                plane = out[n * o0 + c * o1 :]
                for i in range(kh):
                    for j in range(kw):  # (in this order: the sums are the same on every backend)
                        row = cols[n * c0 + ((c * kh + i) * kw + j) * c1 :]
                        fold2d_row(plane, o2, o3, row, c2, height, width, out_h, out_w, i, j, sh, sw, ph, pw)


def fold2d_row(out, out_step_h, out_step_w, row, row_step, height, width, out_h, out_w, i, j, sh, sw, ph, pw):
    """unfold2d_row turned around: each element of ``row`` (place (i, j) of a window) added onto
    channel ``out`` (height x width, ``out_step_h`` apart down and ``out_step_w`` across) at the
    position it was copied from; the padding is dropped."""
    # BEGIN SOLUTION 4.2: add place (i, j) of each window back onto the channel
    for r in range(out_h):
        y = r * sh - ph + i
        if 0 <= y < height:
            for s in range(out_w):
                z = s * sw - pw + j
                if 0 <= z < width:
                    out[y * out_step_h + z * out_step_w] += row[(r * out_w + s) * row_step]
    # END SOLUTION 4.2
