"""``scatter_``, ``scatter``, ``scatter_add_`` and ``scatter_add`` (issue 22: the "Transforms"
tutorial one-hot encodes a label with ``torch.zeros(10).scatter_(0, torch.tensor(y), value=1)``):
values and gradients against PyTorch where it is installed, the in-place rules of stage 5.2, and
second derivatives and forward mode (stage 5.4) by central differences."""

import numpy as np
import pytest

import torchlight

pytestmark = pytest.mark.task5_2

rng = np.random.default_rng(5)
INDEX = [[0, 1, 2, 0], [2, 0, 1, 1]]  # into 3 rows (dim 0) or 5 columns (dim 1): no position twice
SRC = rng.normal(size=(2, 4))
SELF = rng.normal(size=(3, 5))


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def pair(torch, values, requires_grad=False):
    return torchlight.tensor(values, requires_grad=requires_grad), torch.tensor(values, requires_grad=requires_grad)


def test_the_transforms_tutorials_one_hot():
    for label in range(10):
        hot = torchlight.zeros(10, dtype=torchlight.float).scatter_(0, torchlight.tensor(label), value=1)
        assert hot.tolist() == [1.0 if i == label else 0.0 for i in range(10)]
        again = torchlight.zeros(10).scatter_(dim=0, index=torchlight.tensor(label), value=1)
        assert again.tolist() == hot.tolist()


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("form", ["src", "value"])
def test_values_and_gradients_match_pytorch(torch, dim, form):
    index = [[0, 1, 2, 0], [2, 0, 0, 1]] if dim == 0 else [[0, 4, 2, 1], [3, 1, 2, 0]]
    a, b = pair(torch, SELF, requires_grad=True)
    ia, ib = torchlight.tensor(index, dtype=torchlight.long), torch.tensor(index)
    if form == "src":
        sa, sb = pair(torch, SRC, requires_grad=True)
        ya, yb = a.scatter(dim, ia, sa), b.scatter(dim, ib, sb)
    else:
        ya, yb = torchlight.scatter(a, dim, ia, value=2.5), torch.scatter(b, dim, ib, value=2.5)
    np.testing.assert_array_equal(ya.detach().numpy(), yb.detach().numpy())
    g = rng.normal(size=(3, 5))
    ya.backward(torchlight.tensor(g))
    yb.backward(torch.tensor(g))
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    if form == "src":
        np.testing.assert_array_equal(sa.grad.numpy(), sb.grad.numpy())


def test_only_the_part_of_src_as_large_as_index_is_used(torch):
    big = rng.normal(size=(3, 5))
    ya = torchlight.zeros(3, 5).scatter(1, torchlight.tensor([[1, 0], [4, 2]]), torchlight.tensor(big))
    yb = torch.zeros(3, 5, dtype=torch.float64).scatter(1, torch.tensor([[1, 0], [4, 2]]), torch.tensor(big))
    np.testing.assert_array_equal(ya.numpy(), yb.numpy())


@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_add_sums_a_position_picked_twice(torch, dim):
    index = [[0, 0, 2, 0], [2, 0, 2, 1]] if dim == 0 else [[1, 1, 1, 4], [0, 3, 0, 3]]
    a, b = pair(torch, SELF, requires_grad=True)
    sa, sb = pair(torch, SRC, requires_grad=True)
    ia, ib = torchlight.tensor(index, dtype=torchlight.long), torch.tensor(index)
    ya, yb = a.scatter_add(dim, ia, sa), torch.scatter_add(b, dim, ib, sb)
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-15, atol=1e-15)
    g = rng.normal(size=(3, 5))
    ya.backward(torchlight.tensor(g))
    yb.backward(torch.tensor(g))
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    np.testing.assert_array_equal(sa.grad.numpy(), sb.grad.numpy())
    # reduce="add" is scatter_add_, for a tensor or a number
    ra = torchlight.tensor(SELF).scatter_(dim, ia, torchlight.tensor(SRC), reduce="add")
    np.testing.assert_allclose(ra.numpy(), yb.detach().numpy(), rtol=1e-15, atol=1e-15)
    va = torchlight.tensor(SELF).scatter_(dim, ia, 1.5, reduce="add")
    vb = torch.tensor(SELF).scatter_(dim, ib, 1.5, reduce="add")
    np.testing.assert_allclose(va.numpy(), vb.numpy(), rtol=1e-15, atol=1e-15)


def test_scatter_underscore_changes_the_tensor_itself_and_bumps_its_version():
    x = torchlight.zeros(3, 5)
    before = x._version
    out = x.scatter_(0, torchlight.tensor(INDEX), torchlight.tensor(SRC))
    assert out is x and x._version > before
    assert x[2, 2].item() == SRC[0, 2] and x[1, 3].item() == SRC[1, 3]
    y = torchlight.zeros(3, 5)
    y.scatter_add_(0, torchlight.tensor(INDEX), torchlight.tensor(SRC))
    np.testing.assert_array_equal(y.numpy(), x.numpy())  # no position twice: adding is writing
    # an int64 tensor keeps its dtype: a written value is truncated toward zero, as PyTorch does
    labels = torchlight.zeros(2, dtype=torchlight.long).scatter_(0, torchlight.tensor([0]), 2.7)
    assert labels.dtype == torchlight.int64 and labels.tolist() == [2, 0]


def test_in_place_on_a_leaf_and_on_a_saved_value_follows_the_rules():
    leaf = torchlight.zeros(3, 5, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.scatter_(0, torchlight.tensor(INDEX), 1.0)
    w = torchlight.tensor(SELF, requires_grad=True)
    e = w * 1.0
    saved = (e * e).sum()  # saves e for its backward
    e.scatter_(0, torchlight.tensor(INDEX), 0.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        saved.backward()
    # on a non-leaf, the gradient flows to the leaf where e kept its values, and nowhere else
    e.sum().backward()
    kept = np.ones((3, 5))
    kept[np.array(INDEX), np.arange(4)] = 0.0
    np.testing.assert_array_equal(w.grad.numpy(), kept)


def test_errors_say_what_is_wrong(torch):
    x = torchlight.zeros(3, 5)
    with pytest.raises(RuntimeError, match="index 5 is out of bounds for dimension 1 with size 5"):
        x.scatter(1, torchlight.tensor([[5]]), 1.0)
    with pytest.raises(RuntimeError, match="index -1 is out of bounds"):
        x.scatter(0, torchlight.tensor([[-1]]), 1.0)
    with pytest.raises(RuntimeError, match="same number of dimensions as self"):
        x.scatter(0, torchlight.tensor([1, 0]), 1.0)
    with pytest.raises(RuntimeError, match="no larger than self"):
        x.scatter(1, torchlight.tensor([[0, 1]] * 4), 1.0)
    with pytest.raises(RuntimeError, match="no larger size than src"):
        x.scatter(0, torchlight.tensor([[0, 1]]), torchlight.ones(1, 1))
    with pytest.raises(RuntimeError, match="Expected dtype int32/int64 for index"):
        x.scatter(0, torchlight.tensor([[True]], dtype=torchlight.bool), 1.0)
    with pytest.raises(RuntimeError, match="Expected dtype int32/int64 for index"):
        x.scatter(0, torchlight.tensor([[0.5]]), 1.0)
    with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply"):
        x.scatter(0, torchlight.tensor([[0]]), 1.0, reduce="max")
    with pytest.raises(NotImplementedError, match="multiply"):
        x.scatter(0, torchlight.tensor([[0]]), 1.0, reduce="multiply")
    with pytest.raises(TypeError, match="not both"):
        x.scatter(0, torchlight.tensor([[0]]), torchlight.ones(1, 1), value=2.0)
    with pytest.raises(TypeError, match="src"):
        x.scatter(0, torchlight.tensor([[0]]))
    # PyTorch refuses the same (its messages are the ones matched above)
    with pytest.raises(RuntimeError, match="index 5 is out of bounds for dimension 1 with size 5"):
        torch.zeros(3, 5).scatter(1, torch.tensor([[5]]), 1.0)
    with pytest.raises(RuntimeError, match="Expected dtype int32/int64 for index"):
        torch.zeros(3, 5).scatter(0, torch.tensor([[True]]), 1.0)


@pytest.mark.task5_4
def test_second_derivatives_and_forward_mode_by_central_differences():
    index = torchlight.tensor([[0, 1, 2, 0], [2, 0, 2, 1]])  # (2, 2) picked twice along dim 0: the last write stays

    def write(a, s):
        return (a * a).scatter(0, index, s * s)

    def add(a, s):
        return (a * a).scatter_add(0, index, s * s)

    a = torchlight.tensor(SELF, requires_grad=True)
    s = torchlight.tensor(SRC, requires_grad=True)
    for fn in (write, add):
        assert torchlight.autograd.gradcheck(fn, (a, s))
        assert torchlight.autograd.gradgradcheck(fn, (a, s))
        assert torchlight.autograd.gradcheck(fn, (a, s), check_forward_ad=True)
    assert write(a, s)[2, 2].item() == SRC[1, 2] ** 2  # the last value written there
