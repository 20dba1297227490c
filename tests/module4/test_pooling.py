"""Task 4.3: pooling. ``tile`` (blocks of an image along a last dimension, with views), and
avg_pool2d and max_pool2d as the mean and the maximum over it; the MaxPool2d and AvgPool2d layers.

Values against direct numpy loops and PyTorch (float64, where installed), gradients by central
differences and against PyTorch (max: the gradient goes to the first maximum), strides and
padding (those windows come from 4.2's unfold), permuted inputs, both backends, and errors.
"""

import numpy as np
import pytest

import torchlight
from torchlight.autograd import gradcheck
from torchlight.nn.pooling import AvgPool2d, MaxPool2d
from torchlight.ops.pooling import avg_pool2d, max_pool2d, tile

from . import conv_reference as ref

pytestmark = pytest.mark.task4_3

BACKENDS = ["simple", "fast"]


def _distinct(shape, seed=0):
    """Values at least 0.1 apart: the maximum of a window stays where it is under small nudges."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.1 - 0.05 * n).reshape(shape)


def test_tile_lays_each_block_along_the_last_dimension(backend_name):
    x = np.arange(2 * 3 * 4 * 6, dtype=float).reshape(2, 3, 4, 6)
    t = tile(torchlight.tensor(x, backend=backend_name), (2, 3))
    assert t.shape == (2, 3, 2, 2, 6), f"tile of a (2, 3, 4, 6) image in (2, 3) blocks has shape {t.shape}"
    expected = x.reshape(2, 3, 2, 2, 2, 3).transpose(0, 1, 2, 4, 3, 5).reshape(2, 3, 2, 2, 6)
    np.testing.assert_array_equal(t.to_numpy(), expected)
    # block (i, j) of channel c holds x[c, 2i:2i+2, 3j:3j+3] row by row
    np.testing.assert_array_equal(t.to_numpy()[1, 2, 1, 0], x[1, 2, 2:4, 0:3].reshape(-1))
    # a permuted (non-contiguous) input gives the same blocks
    np.testing.assert_array_equal(tile(ref.permuted(x, backend_name), (2, 3)).to_numpy(), expected)


def test_tile_gradient(backend_name):
    x = torchlight.tensor(
        np.random.default_rng(1).standard_normal((1, 2, 4, 2)), backend=backend_name, requires_grad=True
    )
    assert gradcheck(lambda a: tile(a, (2, 1)), [x])


def test_tile_errors(backend_name):
    x = torchlight.tensor(np.ones((1, 1, 5, 4)), backend=backend_name)
    with pytest.raises(RuntimeError, match=r"\(5, 4\) must be multiples of the kernel \(2, 2\)"):
        tile(x, (2, 2))
    with pytest.raises(RuntimeError, match="4-D input"):
        tile(torchlight.tensor(np.ones((5, 4)), backend=backend_name), (1, 1))
    with pytest.raises(ValueError, match="positive"):
        tile(x, (0, 1))


# (input shape, kernel_size, stride, padding): default strides (tile), uneven sizes (cropped),
# overlapping and padded windows (unfold).
CASES = [
    ((2, 2, 4, 6), 2, None, 0),
    ((1, 2, 6, 6), (3, 2), None, 0),
    ((1, 2, 5, 7), 2, None, 0),  # what no window reaches is left out
    ((1, 2, 5, 5), 3, 1, 0),  # overlapping windows
    ((2, 1, 5, 6), (3, 2), (2, 1), (1, 1)),  # padded: -inf for max, counted zeros for avg
    ((1, 2, 4, 4), 2, 2, 1),
]
IDS = [f"{s}-k{k}-s{st}-p{p}" for s, k, st, p in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pooling_matches_a_direct_loop(backend_name, case, kind):
    shape, kernel, stride, padding = case
    x = _distinct(shape) if kind == "max" else np.random.default_rng(2).standard_normal(shape)
    fn = max_pool2d if kind == "max" else avg_pool2d
    out = fn(torchlight.tensor(x, backend=backend_name), kernel, stride, padding)
    np.testing.assert_allclose(out.to_numpy(), ref.pool(x, kernel, stride, padding, kind), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pooling_values_and_gradients_match_torch(backend_name, case, kind):
    torch = pytest.importorskip("torch")
    shape, kernel, stride, padding = case
    x = np.random.default_rng(3).standard_normal(shape)
    x[0, 0, 0, :2] = x[0, 0, 1, 0] = 5.0  # ties: PyTorch gives the gradient to the first maximum
    fn, tfn = (
        (max_pool2d, torch.nn.functional.max_pool2d) if kind == "max" else (avg_pool2d, torch.nn.functional.avg_pool2d)
    )
    leaf, tleaf = torchlight.tensor(x, backend=backend_name, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, tout = fn(leaf, kernel, stride, padding), tfn(tleaf, kernel, stride, padding)
    np.testing.assert_allclose(out.to_numpy(), tout.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = np.random.default_rng(4).standard_normal(out.shape)
    out.backward(torchlight.tensor(g, backend=backend_name))
    tout.backward(torch.tensor(g))
    np.testing.assert_allclose(leaf.grad.to_numpy(), tleaf.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "kernel, stride, padding",
    [(2, None, 0), (2, 1, 1), ((3, 2), (1, 2), (1, 0))],
    ids=["k2-s_default-p0", "k2-s1-p1", "k(3, 2)-s(1, 2)-p(1, 0)"],
)
def test_pooling_gradcheck(backend_name, kernel, stride, padding):
    x = torchlight.tensor(_distinct((1, 2, 4, 4), seed=5), backend=backend_name, requires_grad=True)
    assert gradcheck(lambda a: max_pool2d(a, kernel, stride, padding), [x])
    assert gradcheck(lambda a: avg_pool2d(a, kernel, stride, padding), [x])


def test_max_pool_sends_the_gradient_to_the_maximum_only(backend_name):
    x = np.array([[[[1.0, 4.0], [3.0, 2.0]]]])
    leaf = torchlight.tensor(x, backend=backend_name, requires_grad=True)
    max_pool2d(leaf, 2).sum().backward()
    np.testing.assert_array_equal(leaf.grad.to_numpy(), [[[[0.0, 1.0], [0.0, 0.0]]]])
    leaf.grad = None
    avg_pool2d(leaf, 2).sum().backward()
    np.testing.assert_array_equal(leaf.grad.to_numpy(), np.full((1, 1, 2, 2), 0.25))


def test_pooling_permuted_and_unbatched_inputs(backend_name):
    x = _distinct((2, 3, 4, 6), seed=6)
    for fn, kind in ((max_pool2d, "max"), (avg_pool2d, "avg")):
        expected = ref.pool(x, 2, None, 0, kind)
        np.testing.assert_allclose(fn(ref.permuted(x, backend_name), 2).to_numpy(), expected, atol=1e-12)
        unbatched = fn(torchlight.tensor(x[0], backend=backend_name), (2, 3), 1, 1)
        assert unbatched.shape == (3, 5, 6), (
            f"{kind} pooling of a (3, 4, 6) input, (2, 3) windows, stride 1, padding 1: shape {unbatched.shape}"
        )
        np.testing.assert_allclose(unbatched.to_numpy(), ref.pool(x[:1], (2, 3), 1, 1, kind)[0], atol=1e-12)


def test_pooling_errors(backend_name):
    x = torchlight.tensor(np.ones((1, 2, 3, 3)), backend=backend_name)
    for fn in (max_pool2d, avg_pool2d):
        name = fn.__name__
        with pytest.raises(RuntimeError, match=r"Given input size: \(2x3x3\)\. Calculated output size: \(2x0x0\)"):
            fn(x, 4)
        with pytest.raises(RuntimeError, match="stride should be greater than zero"):
            fn(x, 2, 0)
        with pytest.raises(RuntimeError, match="kernel_size must be greater than zero"):
            fn(x, 0)
        with pytest.raises(RuntimeError, match="pad should be at least 0 and at most half of effective kernel size"):
            fn(x, 2, 1, 2)
        with pytest.raises(RuntimeError, match=f"{name}.*3D or 4D"):
            fn(torchlight.tensor(np.ones((3, 3)), backend=backend_name), 2)
        with pytest.raises(TypeError, match="must be Tensor"):
            fn(np.ones((1, 1, 2, 2)), 2)
        with pytest.raises(RuntimeError, match="a list of 2 values"):
            fn(x, (1, 1, 1))
        with pytest.raises(NotImplementedError, match="ceil_mode"):
            fn(x, 2, ceil_mode=True)


def test_pooling_layers(backend_name):
    x = torchlight.tensor(_distinct((1, 2, 4, 4), seed=7), backend=backend_name)
    np.testing.assert_array_equal(MaxPool2d(2)(x).to_numpy(), max_pool2d(x, 2).to_numpy())
    np.testing.assert_array_equal(AvgPool2d(2, 1, 1)(x).to_numpy(), avg_pool2d(x, 2, 1, 1).to_numpy())
    assert repr(MaxPool2d(2)) == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(AvgPool2d((2, 3), 1)) == "AvgPool2d(kernel_size=(2, 3), stride=1, padding=0)"
    assert list(MaxPool2d(2).parameters()) == []
    with pytest.raises(RuntimeError, match="stride should be greater than zero"):
        MaxPool2d(2, stride=0)
    with pytest.raises(RuntimeError, match="pad should be"):
        AvgPool2d(2, padding=3)


def test_pooling_layers_print_as_torch():
    torch = pytest.importorskip("torch")
    for ours, theirs in [
        (MaxPool2d(2), torch.nn.MaxPool2d(2)),
        (MaxPool2d((3, 2), 1, 1), torch.nn.MaxPool2d((3, 2), 1, 1)),
        (AvgPool2d(2), torch.nn.AvgPool2d(2)),
        (AvgPool2d(3, (1, 2), 1), torch.nn.AvgPool2d(3, (1, 2), 1)),
    ]:
        assert repr(ours) == repr(theirs)
