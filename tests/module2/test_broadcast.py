"""Task 2.2: broadcasting: shapes, index mapping, and broadcast operations on every backend."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import torchlight
from torchlight import scalar
from torchlight.tensor_data import broadcast_index, shape_broadcast, to_index

from .strategies import arrays, broadcast_shapes, layout_of, shapes

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
    with pytest.raises(RuntimeError, match=r"shapes \(2, 3\) and \(4,\) cannot be broadcast.*\(3\).*\(4\) at non-singleton dimension 1"):
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


@given(broadcast_shapes(), st.data())
def test_zip_broadcasts_like_numpy(backend_name, pair, data):
    backend = torchlight.backends.get(backend_name)
    va = data.draw(arrays(pair[0]))
    vb = data.draw(arrays(pair[1]))
    layout = data.draw(st.sampled_from(["contiguous", "permuted", "strided"]))
    a = torchlight.Tensor(layout_of(va, layout), backend)
    b = torchlight.Tensor(layout_of(vb, "strided"), backend)
    out = backend.zip(scalar.add)(a, b)
    np.testing.assert_array_equal(out.to_numpy(), va + vb)
    assert out.is_contiguous()


@given(broadcast_shapes(), st.data())
def test_tensor_operators_broadcast(backend_name, pair, data):
    va = data.draw(arrays(pair[0]))
    vb = data.draw(arrays(pair[1], elements=st.floats(0.5, 2.0)))
    a = torchlight.tensor(va, backend=backend_name)
    b = torchlight.tensor(vb, backend=backend_name)
    np.testing.assert_allclose((a * b).to_numpy(), va * vb, rtol=1e-12)
    np.testing.assert_allclose((a - b).to_numpy(), va - vb, rtol=1e-12)
    np.testing.assert_allclose((a / b).to_numpy(), va / vb, rtol=1e-12)
    np.testing.assert_array_equal((a < b).to_numpy(), (va < vb).astype(float))


def test_numbers_broadcast_on_either_side(backend_name):
    a = torchlight.tensor([1.0, 2.0, 4.0], backend=backend_name)
    assert (a + 1).tolist() == [2.0, 3.0, 5.0]
    assert (1 - a).tolist() == [0.0, -1.0, -3.0]
    assert (2.0 * a).tolist() == [2.0, 4.0, 8.0]
    assert (4.0 / a).tolist() == [4.0, 2.0, 1.0]
    assert (a**2).tolist() == [1.0, 4.0, 16.0]
    assert (2.0**a).tolist() == [2.0, 4.0, 16.0]
    assert (a > 1.5).tolist() == [0.0, 1.0, 1.0]
    assert (1.5 > a).tolist() == [1.0, 0.0, 0.0]
    assert (a == 2.0).tolist() == [0.0, 1.0, 0.0]
    assert (a != 2.0).tolist() == [1.0, 0.0, 1.0]
    assert (a >= 2.0).tolist() == [0.0, 1.0, 1.0]
    assert (a <= 2.0).tolist() == [1.0, 1.0, 0.0]
    assert (np.float64(2.0) * a).tolist() == [2.0, 4.0, 8.0]  # numpy scalars too, on either side
    assert (a - np.float64(1.0)).tolist() == [0.0, 1.0, 3.0]


def test_operands_that_do_not_broadcast_name_both_shapes(backend_name):
    a = torchlight.zeros(2, 3, backend=backend_name)
    b = torchlight.zeros(4, backend=backend_name)
    with pytest.raises(RuntimeError, match=r"shapes \(2, 3\) and \(4,\) cannot be broadcast"):
        a + b


@given(arrays(shapes(min_dims=1, max_dims=2)), st.data())
def test_expand_then_contiguous_copies_the_broadcast(backend_name, values, data):
    t = torchlight.tensor(values, backend=backend_name)
    target = (data.draw(st.integers(1, 3)),) + tuple(
        data.draw(st.integers(1, 3)) if n == 1 else n for n in values.shape
    )
    e = t.expand(*target)
    assert e._data.storage is t._data.storage
    np.testing.assert_array_equal(e.contiguous().to_numpy(), np.broadcast_to(values, target))
    np.testing.assert_array_equal(t.expand_as(e).to_numpy(), np.broadcast_to(values, target))
