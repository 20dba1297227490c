"""Task 2.1: storage, strides, index arithmetic, views and indexing; creating tensors."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import torchlight
from torchlight import indexing
from torchlight.tensor_data import IndexingError, TensorData, index_to_position, strides_from_shape, to_index

from .strategies import arrays, layout_of, shapes

pytestmark = pytest.mark.task2_1


# -- index arithmetic ----------------------------------------------------------------------


def test_the_indexing_functions_are_the_ones_tensor_data_exports():
    # one copy of the index arithmetic, shared by TensorData and every backend
    assert index_to_position is indexing.index_to_position
    assert to_index is indexing.to_index


def test_contiguous_strides():
    assert strides_from_shape((2, 3, 4)) == (12, 4, 1)
    assert strides_from_shape((5,)) == (1,)
    assert strides_from_shape(()) == ()
    # as PyTorch (torch.empty(2, 0, 3).stride()): a dimension of size 0 counts as 1 for the strides before it
    assert strides_from_shape((2, 0, 3)) == (3, 3, 1)
    assert strides_from_shape([4, 1, 2]) == (2, 2, 1)  # a list works too; the result is a tuple


@given(shapes(max_dims=4))
def test_to_index_then_position_is_the_ordinal_for_contiguous_strides(shape):
    strides = strides_from_shape(shape)
    index = np.zeros(len(shape), np.int64)
    seen = set()
    for ordinal in range(int(np.prod(shape))):
        to_index(ordinal, np.array(shape, np.int64), index)
        assert all(0 <= i < n for i, n in zip(index, shape, strict=True))
        assert index_to_position(index, np.array(strides, np.int64)) == ordinal
        seen.add(tuple(index))
    assert len(seen) == int(np.prod(shape))


@given(shapes(min_dims=1, max_dims=4), st.data())
def test_to_index_follows_numpy_row_major_order(shape, data):
    ordinal = data.draw(st.integers(0, int(np.prod(shape)) - 1))
    index = [0] * len(shape)
    to_index(ordinal, shape, index)
    assert tuple(index) == np.unravel_index(ordinal, shape)


@given(arrays(shapes(min_dims=1)), st.sampled_from(["contiguous", "permuted", "strided"]), st.data())
def test_every_element_sits_where_its_strides_say(values, layout, data):
    order = data.draw(st.permutations(range(values.ndim)))
    td = layout_of(values, layout, order)
    for index in td.indices():
        assert td.get(index) == values[index]
        assert td.storage[td.offset + index_to_position(index, td.strides)] == values[index]


def test_tensor_data_index_checks_bounds_and_counts_from_the_end():
    td = TensorData(np.arange(6.0), (2, 3))
    assert td.index((1, -1)) == 5
    with pytest.raises(IndexingError, match="out of bounds for dimension 1 with size 3"):
        td.index((0, 3))
    with pytest.raises(IndexingError, match="must have 2 entries"):
        td.index((0,))


def test_storage_too_small_for_the_shape_is_an_error():
    with pytest.raises(IndexingError, match="too small"):
        TensorData(np.zeros(5), (2, 3))
    with pytest.raises(IndexingError, match="too small"):
        TensorData(np.zeros(6), (2, 3), strides=(3, 2))


# -- views -------------------------------------------------------------------------------


@given(arrays(shapes(min_dims=1, max_dims=4)), st.data())
def test_permute_matches_numpy_transpose_and_shares_storage(values, data):
    order = data.draw(st.permutations(range(values.ndim)))
    td = TensorData(values.reshape(-1).copy(), values.shape)
    p = td.permute(*order)
    assert p.storage is td.storage
    np.testing.assert_array_equal(p.to_numpy(), values.transpose(order))
    assert p.is_contiguous() == (values.transpose(order).flags.c_contiguous or values.size <= 1)


def test_is_contiguous():
    td = TensorData(np.arange(6.0), (2, 3))
    assert td.is_contiguous()
    assert not td.permute(1, 0).is_contiguous()
    assert not td.getitem((slice(None), slice(0, 2))).is_contiguous()
    assert td.getitem((slice(0, 1), slice(None))).is_contiguous()  # a block of whole rows
    assert td.unsqueeze(0).is_contiguous()  # the stride of a size-1 dimension does not matter


def test_permute_errors_name_the_order_and_shape():
    td = TensorData(np.arange(6.0), (2, 3))
    with pytest.raises(RuntimeError, match=r"order \(0, 1, 2\) has 3 dimensions but the tensor has 2"):
        td.permute(0, 1, 2)
    with pytest.raises(RuntimeError, match="repeats a dimension"):
        td.permute(0, 0)


@given(arrays(shapes(min_dims=1)), st.data())
def test_view_matches_numpy_reshape(values, data):
    td = TensorData(values.reshape(-1).copy(), values.shape)
    target = data.draw(st.sampled_from([(-1,), (values.size, 1), (1, -1), values.shape[::-1]]))
    if -1 not in target and np.prod(target) != values.size:
        target = (values.size,)
    np.testing.assert_array_equal(td.view(*target).to_numpy(), values.reshape(target))


def test_view_errors():
    td = TensorData(np.arange(6.0), (2, 3))
    with pytest.raises(RuntimeError, match=r"shape '\[4\]' is invalid for input of size 6"):
        td.view(4)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        td.view(-1, -1)
    with pytest.raises(RuntimeError, match=r"view size is not compatible.*\.reshape"):
        td.permute(1, 0).view(6)


@given(arrays(shapes(min_dims=1, max_dims=4)), st.data())
def test_getitem_matches_numpy_basic_indexing(values, data):
    key = []
    for n in values.shape[: data.draw(st.integers(0, values.ndim))]:
        kind = data.draw(st.sampled_from(["int", "slice", "none"]))
        if kind == "int":
            key.append(data.draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            start = data.draw(st.none() | st.integers(-n - 1, n + 1))
            stop = data.draw(st.none() | st.integers(-n - 1, n + 1))
            step = data.draw(st.none() | st.integers(1, 3))
            key.append(slice(start, stop, step))
        else:
            key.append(None)
    key = tuple(key)
    layout = data.draw(st.sampled_from(["contiguous", "permuted", "strided"]))
    td = layout_of(values, layout)
    view = td.getitem(key)
    assert view.storage is td.storage
    np.testing.assert_array_equal(view.to_numpy(), values[key])


def test_getitem_with_ellipsis():
    values = np.arange(24.0).reshape(2, 3, 4)
    td = TensorData(values.reshape(-1), values.shape)
    np.testing.assert_array_equal(td.getitem((Ellipsis, 1)).to_numpy(), values[..., 1])
    np.testing.assert_array_equal(td.getitem((1, Ellipsis, None)).to_numpy(), values[1, ..., None])


def test_bad_indices_give_pytorch_errors():
    td = TensorData(np.arange(6.0), (2, 3))
    with pytest.raises(IndexError, match="index 2 is out of bounds for dimension 0 with size 2"):
        td.getitem(2)
    with pytest.raises(IndexError, match="index -4 is out of bounds for dimension 1 with size 3"):
        td.getitem((0, -4))
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        td.getitem((0, 0, 0))
    with pytest.raises(ValueError, match="step must be greater than zero"):
        td.getitem(slice(None, None, -1))
    with pytest.raises(TypeError, match="only integers, slices"):
        td.getitem([0, 1])
    with pytest.raises(TypeError, match="only integers, slices"):
        td.getitem(1.5)


@given(arrays(shapes(min_dims=1, max_dims=3)), st.data())
def test_expand_matches_numpy_broadcast_to_without_copying(values, data):
    target = tuple(data.draw(st.sampled_from([n, 2])) if n == 1 else n for n in values.shape)
    target = (data.draw(st.integers(1, 3)),) + target
    td = TensorData(values.reshape(-1).copy(), values.shape)
    expanded = td.expand(*target)
    assert expanded.storage is td.storage
    np.testing.assert_array_equal(expanded.to_numpy(), np.broadcast_to(values, target))


def test_expand_error_names_sizes():
    td = TensorData(np.arange(6.0), (2, 3))
    with pytest.raises(RuntimeError, match=r"expanded size of the tensor \(4\) must match the existing size \(3\)"):
        td.expand(2, 4)
    with pytest.raises(RuntimeError, match="must be greater or equal"):
        td.expand(6)


def test_unsqueeze_and_squeeze():
    td = TensorData(np.arange(6.0), (2, 3))
    assert td.unsqueeze(0).shape == (1, 2, 3)
    assert td.unsqueeze(-1).shape == (2, 3, 1)
    assert td.unsqueeze(1).squeeze(1).shape == (2, 3)
    with pytest.raises(RuntimeError, match="has size 2, not 1"):
        td.squeeze(0)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        td.squeeze(2)


# -- creating tensors ---------------------------------------------------------------------


def test_tensor_from_nested_lists(backend_name):
    t = torchlight.tensor([[1, 2, 3], [4, 5, 6]], backend=backend_name)
    assert t.shape == (2, 3) and t.size() == (2, 3) and t.size(1) == 3 and t.size(-2) == 2
    assert t.dims == 2 and t.numel() == 6
    assert t.backend.name == backend_name
    assert t.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert t.to_numpy().dtype == np.float64
    assert not t.requires_grad and t.is_leaf and t.grad is None and t.grad_fn is None


def test_tensor_from_a_number_is_0d():
    t = torchlight.tensor(2.5)
    assert t.shape == () and t.dims == 0 and t.item() == 2.5 and float(t) == 2.5


def test_ragged_lists_are_a_clear_error():
    with pytest.raises(
        ValueError, match=r"rectangular: expected a sequence of length 2 at dim 1 \(element 1 has length 1\)"
    ):
        torchlight.tensor([[1, 2], [3]])
    with pytest.raises(ValueError, match="expected a number at dim 2"):
        torchlight.tensor([[1, 2], [3, [4]]])
    with pytest.raises(TypeError, match="expected numbers"):  # not numbers: a TypeError, as PyTorch's
        torchlight.tensor(["a", "b"])


def test_from_numpy_shares_memory_and_to_numpy_copies():
    a = np.arange(6.0).reshape(2, 3)
    t = torchlight.Tensor.from_numpy(a)
    a[0, 0] = 100.0
    assert t.to_numpy()[0, 0] == 100.0
    out = t.to_numpy()
    out[1, 1] = -1.0
    assert t.to_numpy()[1, 1] == 4.0
    ints = torchlight.Tensor.from_numpy(np.arange(3))  # other dtypes are converted
    assert ints.to_numpy().dtype == np.float64


def test_zeros_ones_rand(backend_name):
    assert torchlight.zeros(2, 3, backend=backend_name).tolist() == [[0.0] * 3] * 2
    assert torchlight.ones((2,), backend=backend_name).tolist() == [1.0, 1.0]
    r = torchlight.rand(3, 4, seed=7, backend=backend_name)
    assert r.shape == (3, 4) and np.all((r.to_numpy() >= 0) & (r.to_numpy() < 1))
    np.testing.assert_array_equal(r.to_numpy(), torchlight.rand(3, 4, seed=7).to_numpy())
    assert not np.array_equal(r.to_numpy(), torchlight.rand(3, 4, seed=8).to_numpy())
    assert torchlight.rand(2, requires_grad=True).requires_grad


def test_item_of_many_elements_is_an_error():
    with pytest.raises(RuntimeError, match="a Tensor with 6 elements cannot be converted to Scalar"):
        torchlight.zeros(2, 3).item()
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(torchlight.zeros(2))


def test_tensor_needs_tensor_data():
    with pytest.raises(TypeError, match=r"torchlight.tensor\(data\)"):
        torchlight.Tensor([1.0, 2.0])


# Indexing, views and copies of Tensors go through the tensor Functions (Index, View, Permute,
# Copy), whose forwards task 2.3 asks for: their tests are in test_tensor_operations.py.


def test_repr_shows_values_and_history():
    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    assert repr(torchlight.tensor([[1.0, 2.0], [3.0, 4.0]])) == "tensor([[1., 2.],\n        [3., 4.]])"
    # the repr of a result (grad_fn=<MulBackward>) is in test_tensor_operations.py (task 2.3)
