"""Module 2: the simple backend, a kernel set in plain Python loops: the executable specification.

Each kernel walks every element of ``out`` by its ordinal, turns the ordinal into an index, maps
that index to each input (broadcasting) and reads and writes through the strides. The ``fast``
backend computes the same thing with the same index arithmetic (``torchlight/indexing.py``), only
compiled and in parallel; the tests hold it to this one.
"""

from typing import Callable

import numpy as np

from ..indexing import broadcast_index, index_to_position, to_index


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
        out_index = [0] * len(out_shape)
        in_index = [0] * len(in_shape)
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
        out_index = [0] * len(out_shape)
        a_index = [0] * len(a_shape)
        b_index = [0] * len(b_shape)
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
        n = int(a_shape[reduce_dim])
        index = [0] * len(out_shape)
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
    k = int(a_shape[2])
    o0, o1, o2 = out_strides.tolist()
    a0, a1, a2 = a_strides.tolist()
    b0, b1, b2 = b_strides.tolist()
    # BEGIN SOLUTION 2.3
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
    # END SOLUTION 2.3
