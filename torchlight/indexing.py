"""Module 2: index arithmetic, beside ``tensor_data.py``: the one copy that every backend's kernels share.

A tensor's elements live in a flat 1-D storage. An element's multidimensional index
``(i0, i1, ...)`` sits at position ``i0 * strides[0] + i1 * strides[1] + ...`` of that storage.

These functions are plain Python loops over integer arrays, with no Python objects, so that the
``fast`` and ``cuda`` backends compile them unchanged with numba. They run on int64 numpy arrays
inside kernels (and on lists or tuples in the simple backend and at the Python level). They write
into ``out_index`` instead of returning a new index, so a kernel allocates its index buffers once.

The layers: ``tensor_data`` and the backends import this file; it imports nothing of torchlight.
"""


def index_to_position(index, strides):
    """The storage position of the element at ``index``: the dot product of index and strides.

    :param index: one index per dimension.
    :param strides: the tensor's strides.
    """
    # BEGIN SOLUTION 2.1
    position = 0
    for i in range(len(strides)):
        position += index[i] * strides[i]
    return position
    # END SOLUTION 2.1


def to_index(ordinal, shape, out_index):
    """Fill ``out_index`` with the index of the ``ordinal``-th element of ``shape`` in row-major order.

    Row-major ("C") order counts the last dimension fastest: for shape (2, 3) ordinal 4 is (1, 1).

    :param ordinal: the element's number, from 0 to the size - 1.
    :param shape: the tensor's shape.
    :param out_index: an array of len(shape) ints, filled in.
    """
    # BEGIN SOLUTION 2.1
    # HINT: walk the dimensions from the last to the first, as digits of a number whose
    # digit i counts up to shape[i]: % gives the digit, // what is left for the others.
    rest = ordinal
    for i in range(len(shape) - 1, -1, -1):
        out_index[i] = rest % shape[i]
        rest = rest // shape[i]
    # END SOLUTION 2.1


def is_contiguous(shape, strides):
    """True when the elements of ``shape`` lie at positions 0, 1, 2, ... in row-major order: the
    last dimension has stride 1 and each dimension's stride is the size of one step in it (the
    product of the sizes after it). The stride of a dimension of size 1 does not matter: it is
    never stepped along.

    ``TensorData.is_contiguous`` asks this of a view, and the fast backend of its kernels' inputs.
    """
    # BEGIN SOLUTION 2.1
    expected = 1
    for i in range(len(shape) - 1, -1, -1):
        if shape[i] != 1 and strides[i] != expected:
            return False
        expected *= shape[i]
    return True
    # END SOLUTION 2.1


def broadcast_index(big_index, big_shape, shape, out_index):
    """Fill ``out_index`` with the index into ``shape`` that broadcasting maps ``big_index`` to.

    ``shape`` broadcasts to ``big_shape``: it is aligned with the trailing dimensions of
    ``big_shape``, and each of its dimensions of size 1 is read at index 0 whatever the big index.

    :param big_index: an index into big_shape.
    :param big_shape: the shape broadcast to.
    :param shape: the shape that broadcasts to big_shape.
    :param out_index: an array of len(shape) ints, filled in.
    """
    # BEGIN SOLUTION 2.2
    extra = len(big_shape) - len(shape)
    for i in range(len(shape)):
        if shape[i] == 1:
            out_index[i] = 0
        else:
            out_index[i] = big_index[extra + i]
    # END SOLUTION 2.2
