"""Task 2.3: Tensor operations through a backend, continued: operations that broadcast, and
indexing, views and copies of Tensors (the Index, View, Permute, BroadcastView and Copy Functions
and the backend's map and zip under them)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import torchlight
from torchlight import scalar

from .strategies import arrays, broadcast_shapes, layout_of, shapes

pytestmark = pytest.mark.task2_3


# -- operations that broadcast (moved from test_broadcast.py: they run task 2.3's code) -----------


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


# -- indexing, views and copies of Tensors (moved from test_tensor_data.py) -------------------------


def test_indexing_a_tensor_gives_views_sharing_storage(backend_name):
    t = torchlight.tensor(np.arange(12.0).reshape(3, 4), backend=backend_name)
    row = t[1]
    assert row.tolist() == [4.0, 5.0, 6.0, 7.0]
    assert t[1:, ::2].tolist() == [[4.0, 6.0], [8.0, 10.0]]
    assert t[-1, -1].item() == 11.0 and t[-1, -1].shape == ()
    assert t[:, None].shape == (3, 1, 4)
    assert row._data.storage is t._data.storage
    # that a view shares its base's version counter is tested with the in-place ops (task 5.2)
    assert [r.tolist() for r in t[:2]] == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]
    assert len(t) == 3
    with pytest.raises(IndexError, match="out of bounds"):
        t[3]


def test_tensor_view_permute_and_contiguous(backend_name):
    t = torchlight.tensor(np.arange(6.0).reshape(2, 3), backend=backend_name)
    p = t.permute(1, 0)
    assert p.shape == (3, 2) and not p.is_contiguous()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        p.view(6)
    c = p.contiguous()
    assert c.is_contiguous() and c._data.storage is not t._data.storage
    assert c.view(6).tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    assert t.contiguous() is t
    assert p.reshape(-1).tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]


def test_repr_of_a_result_names_its_function():
    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x * 2.0) == "tensor([2., 4.], grad_fn=<MulBackward>)"
