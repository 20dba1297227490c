"""Task 2.2: broadcasting: the broadcast shape of two shapes, and where a broadcast index reads."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from torchlight.tensor_data import broadcast_index, shape_broadcast, to_index

from .strategies import broadcast_shapes

pytestmark = pytest.mark.task2_2


@given(broadcast_shapes(max_dims=4))
def test_shape_broadcast_matches_numpy(pair):
    a, b = pair
    assert shape_broadcast(a, b) == np.broadcast_shapes(a, b)
    assert shape_broadcast(b, a) == np.broadcast_shapes(a, b)


def test_shape_broadcast_examples():
    assert shape_broadcast((2, 1), (3,)) == (2, 3)
    assert shape_broadcast((), (4, 5)) == (4, 5)
    assert shape_broadcast((5, 1, 3), (4, 1)) == (5, 4, 3)


def test_shapes_that_do_not_broadcast_name_both_shapes():
    with pytest.raises(
        RuntimeError, match=r"shapes \(2, 3\) and \(4,\) cannot be broadcast.*\(3\).*\(4\) at non-singleton dimension 1"
    ):
        shape_broadcast((2, 3), (4,))


@given(broadcast_shapes(max_dims=4), st.data())
def test_broadcast_index_reads_what_numpy_broadcasting_reads(pair, data):
    small, other = pair
    big = shape_broadcast(small, other)
    values = np.arange(float(np.prod(small))).reshape(small)
    expected = np.broadcast_to(values, big)
    ordinal = data.draw(st.integers(0, int(np.prod(big)) - 1))
    big_index = [0] * len(big)
    to_index(ordinal, big, big_index)
    index = [0] * len(small)
    broadcast_index(big_index, big, small, index)
    assert values[tuple(index)] == expected[tuple(big_index)]


@given(broadcast_shapes(max_dims=4))
def test_broadcast_index_for_every_element(pair):
    # Every element of the broadcast result, not one drawn at random: a mapping that is wrong
    # only for some indices (misaligned dimensions, a size-1 dimension not read at 0) shows.
    for small, other in (pair, pair[::-1]):
        big = shape_broadcast(small, other)
        values = np.arange(float(np.prod(small))).reshape(small)
        expected = np.broadcast_to(values, big)
        big_index = [0] * len(big)
        index = [0] * len(small)
        for ordinal in range(int(np.prod(big))):
            to_index(ordinal, big, big_index)
            broadcast_index(big_index, big, small, index)
            call = f"broadcast_index({big_index}, {big}, {small}, out)"
            assert all(0 <= i < n for i, n in zip(index, small, strict=True)), f"{call} gave {index}, outside {small}"
            assert values[tuple(index)] == expected[tuple(big_index)], (
                f"{call} gave {index}; numpy's broadcasting reads "
                f"{tuple(np.argwhere(values == expected[tuple(big_index)])[0])}"
            )


@pytest.mark.parametrize(
    "big_index, big, small, expected",
    [
        ((1, 2), (2, 3), (3,), (2,)),  # fewer dimensions: aligned on the right
        ((1, 2), (2, 3), (2, 1), (1, 0)),  # a size-1 dimension is read at 0
        ((1, 2), (2, 3), (1, 3), (0, 2)),
        ((3, 0, 2), (4, 2, 3), (2, 1), (0, 0)),
        ((3, 1, 2), (4, 2, 3), (4, 1, 3), (3, 0, 2)),
        ((0, 1), (2, 2), (), ()),  # a 0-d tensor broadcasts to anything
    ],
    ids=lambda v: str(v),
)
def test_broadcast_index_examples(big_index, big, small, expected):
    index = [0] * len(small)
    broadcast_index(list(big_index), big, small, index)
    assert tuple(index) == expected, (
        f"index {big_index} of shape {big}, read in shape {small}: {tuple(index)}, not {expected}"
    )


# Operations that broadcast (backend.zip, the Tensor operators, expand + contiguous) run the kernels
# and Functions of task 2.3: their tests are in test_tensor_operations.py.
