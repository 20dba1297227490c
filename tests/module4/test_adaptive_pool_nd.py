"""Task 4.3: adaptive pooling in 1 and 3 dimensions, and ``return_indices`` of the adaptive max
(issue 22): ``F.adaptive_{avg,max}_pool{1,2,3}d`` and ``nn.Adaptive{Avg,Max}Pool{1,2,3}d``, with
PyTorch's windows, values, gradients and indices; checked against PyTorch where it is installed,
and against the windows' definition (floor(i * L / L_out) to ceil((i + 1) * L / L_out)) everywhere.
The 2-D forms' own tests are in test_adaptive_pool.py; second derivatives and forward mode are
module 5's (tests/module5/test_pooling_norm_higher_order.py)."""

import itertools
import math

import numpy as np
import pytest

import torchlight
import torchlight.nn.functional as F
from torchlight import nn
from torchlight.autograd import gradcheck

pytestmark = pytest.mark.task4_3

CASES = [
    (1, (2, 3, 7), 3),  # windows of two sizes, overlapping
    (1, (3, 7), (5,)),  # no batch; a 1-tuple
    (1, (2, 3, 5), 8),  # larger than the input: windows repeat positions
    (1, (2, 1, 6), 1),  # global pooling
    (2, (2, 3, 5, 7), (2, 3)),
    (2, (3, 6, 8), (None, 2)),
    (3, (2, 2, 5, 6, 7), (2, 3, 4)),
    (3, (2, 4, 5, 3), (None, 2, 5)),  # no batch; None keeps the depth
    (3, (1, 2, 4, 4, 4), 2),  # multiples: blocks side by side
    (3, (1, 1, 3, 2, 5), (4, 1, 5)),
]


def sizes(n, shape, out):
    outs = out if isinstance(out, tuple) else (out,) * n
    return tuple(size if o is None else o for size, o in zip(shape[-n:], outs, strict=True))


def reference(x, n, out, reduce):
    """Pooling by the definition of PyTorch's adaptive windows, in numpy: the values, and the
    row-major position (within the pooled dimensions) of each window's first maximum."""
    spatial, outs = x.shape[-n:], sizes(n, x.shape, out)
    values = np.empty(x.shape[:-n] + outs)
    where = np.empty(x.shape[:-n] + outs, dtype=np.int64)
    for cell in itertools.product(*(range(o) for o in outs)):
        box = [((i * s) // o, math.ceil((i + 1) * s / o)) for i, s, o in zip(cell, spatial, outs, strict=True)]
        block = x[(Ellipsis,) + tuple(slice(a, b) for a, b in box)]
        flat = block.reshape(block.shape[:-n] + (-1,))
        values[(Ellipsis,) + cell] = reduce(flat, axis=-1)
        local = np.unravel_index(np.argmax(flat, axis=-1), tuple(b - a for a, b in box))
        global_ = tuple(c + a for c, (a, _) in zip(local, box, strict=True))
        where[(Ellipsis,) + cell] = np.ravel_multi_index(global_, spatial)
    return values, where


@pytest.mark.parametrize("n, shape, out", CASES)
@pytest.mark.parametrize("kind", ["avg", "max"])
def test_values_and_indices_follow_the_windows(n, shape, out, kind):
    x = np.random.default_rng(0).normal(size=shape)
    values, where = reference(x, n, out, np.mean if kind == "avg" else np.max)
    fn = getattr(F, f"adaptive_{kind}_pool{n}d")
    if kind == "avg":
        np.testing.assert_allclose(fn(torchlight.tensor(x), out).numpy(), values, rtol=1e-12, atol=1e-14)
    else:
        got, indices = fn(torchlight.tensor(x), out, return_indices=True)
        np.testing.assert_array_equal(got.numpy(), values)
        assert indices.dtype == torchlight.int64 and indices.shape == where.shape
        np.testing.assert_array_equal(indices.numpy(), where)
        np.testing.assert_array_equal(fn(torchlight.tensor(x), out).numpy(), values)  # without indices


@pytest.mark.parametrize("n, shape, out", CASES)
@pytest.mark.parametrize("kind", ["avg", "max"])
def test_values_gradients_and_indices_match_pytorch(n, shape, out, kind):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x = rng.normal(size=shape)
    name = f"adaptive_{kind}_pool{n}d"
    a, b = torchlight.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    if kind == "max":
        (ya, ia), (yb, ib) = getattr(F, name)(a, out, True), getattr(torch.nn.functional, name)(b, out, True)
        np.testing.assert_array_equal(ia.numpy(), ib.numpy())
    else:
        ya, yb = getattr(F, name)(a, out), getattr(torch.nn.functional, name)(b, out)
    assert ya.shape == tuple(yb.shape)
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-12, atol=1e-14)
    g = rng.normal(size=tuple(yb.shape))
    ya.backward(torchlight.tensor(g))
    yb.backward(torch.tensor(g))
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_ties_give_the_gradient_and_the_index_to_the_first_maximum_in_row_major_order():
    x = torchlight.ones(1, 1, 2, 4, 5, requires_grad=True)
    values, indices = F.adaptive_max_pool3d(x, (1, 2, 2), return_indices=True)
    values.sum().backward()
    expected = np.zeros((2, 4, 5))
    for r, c in [(0, 0), (0, 2), (2, 0), (2, 2)]:  # windows start at rows 0, 2 and columns 0, 2, depth 0
        expected[0, r, c] = 1.0
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], expected)
    assert indices.tolist() == [[[[[0, 2], [10, 12]]]]]
    ones = torchlight.ones(1, 6, requires_grad=True)
    v, i = F.adaptive_max_pool1d(ones, 4, return_indices=True)
    assert i.tolist() == [[0, 1, 3, 4]]  # windows [0, 2), [1, 3), [3, 5), [4, 6)


def test_empty_outputs_and_inputs_as_pytorch():
    x = torchlight.randn(1, 2, 3, 4, 5, requires_grad=True)
    y = F.adaptive_avg_pool3d(x, 0)
    assert y.shape == (1, 2, 0, 0, 0)
    assert F.adaptive_max_pool1d(torchlight.randn(2, 3, 4), 0).shape == (2, 3, 0)
    values, indices = F.adaptive_max_pool2d(torchlight.randn(0, 2, 3, 4), 2, return_indices=True)
    assert values.shape == indices.shape == (0, 2, 2, 2)
    with pytest.raises(RuntimeError, match="non-zero size for non-batch dimensions"):
        F.adaptive_avg_pool1d(torchlight.randn(1, 2, 0), 2)
    with pytest.raises(RuntimeError, match="non-zero size for non-batch dimensions"):
        F.adaptive_max_pool3d(torchlight.randn(1, 2, 3, 0, 5), 2)


def test_first_derivatives_by_central_differences():
    # (second derivatives and forward mode are module 5's: tests/module5/test_pooling_norm_higher_order.py)
    x = torchlight.tensor(np.random.default_rng(2).normal(size=(1, 2, 4, 3, 5)), requires_grad=True)
    assert gradcheck(lambda t: F.adaptive_avg_pool3d(t, (3, 2, 2)), (x,))
    assert gradcheck(lambda t: F.adaptive_max_pool3d(t, (3, 2, 2)), (x,))
    s = torchlight.tensor(np.random.default_rng(3).normal(size=(2, 3, 7)), requires_grad=True)
    assert gradcheck(lambda t: F.adaptive_avg_pool1d(t, 3), (s,))
    assert gradcheck(lambda t: F.adaptive_max_pool1d(t, 3), (s,))


def test_the_modules_call_their_functions_and_print_as_pytorch():
    signal, volume = torchlight.randn(2, 3, 9), torchlight.randn(1, 2, 5, 6, 7)
    for layer, fn, x in [
        (nn.AdaptiveAvgPool1d(4), F.adaptive_avg_pool1d, signal),
        (nn.AdaptiveMaxPool1d(4), F.adaptive_max_pool1d, signal),
        (nn.AdaptiveAvgPool3d(4), F.adaptive_avg_pool3d, volume),
        (nn.AdaptiveMaxPool3d(4), F.adaptive_max_pool3d, volume),
    ]:
        np.testing.assert_array_equal(layer(x).numpy(), fn(x, 4).numpy())
        assert not list(layer.parameters())
    for layer, x in [
        (nn.AdaptiveMaxPool1d(3, return_indices=True), signal),
        (nn.AdaptiveMaxPool2d((2, None), return_indices=True), volume[0]),
        (nn.AdaptiveMaxPool3d((None, 2, 3), return_indices=True), volume),
    ]:
        values, indices = layer(x)
        assert values.shape == indices.shape and indices.dtype == torchlight.int64
    assert repr(nn.AdaptiveAvgPool3d((None, 2, 3))) == "AdaptiveAvgPool3d(output_size=(None, 2, 3))"
    assert repr(nn.AdaptiveAvgPool1d(3)) == "AdaptiveAvgPool1d(output_size=3)"
    assert repr(nn.AdaptiveMaxPool1d(3)) == "AdaptiveMaxPool1d(output_size=3)"
    assert repr(nn.AdaptiveMaxPool3d(2, return_indices=True)) == "AdaptiveMaxPool3d(output_size=2)"


def test_bad_arguments_say_what_is_wrong():
    with pytest.raises(RuntimeError, match="should contain one int"):
        F.adaptive_avg_pool1d(torchlight.zeros(1, 1, 4), (2, 2))
    with pytest.raises(TypeError, match="output_size must be ints"):
        nn.AdaptiveAvgPool1d(None)
    with pytest.raises(RuntimeError, match="Expected 2D or 3D tensor"):
        F.adaptive_max_pool1d(torchlight.zeros(4), 2)
    with pytest.raises(RuntimeError, match="Expected 4D or 5D tensor"):
        F.adaptive_avg_pool3d(torchlight.zeros(2, 3, 4), 2)
    with pytest.raises(RuntimeError, match="output_size must be 3"):
        F.adaptive_max_pool3d(torchlight.zeros(1, 2, 3, 4, 5), (2, 2))
    with pytest.raises(RuntimeError, match="greater than or equal to 0"):
        nn.AdaptiveMaxPool3d((1, -1, 2))
