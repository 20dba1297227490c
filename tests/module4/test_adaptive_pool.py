"""Task 4.3: adaptive pooling (issue 22): ``F.adaptive_avg_pool2d``/``adaptive_max_pool2d`` and
``nn.AdaptiveAvgPool2d``/``AdaptiveMaxPool2d`` pool any image to a fixed size, with PyTorch's
windows, values and gradients; checked against PyTorch where it is installed, and against
windows computed here (floor(i * H / H_out) to ceil((i + 1) * H / H_out)) everywhere."""

import math

import numpy as np
import pytest

import torchlight
import torchlight.nn.functional as F
from torchlight import nn
from torchlight.autograd import gradcheck

pytestmark = pytest.mark.task4_3

CASES = [
    ((2, 3, 5, 7), (2, 3)),  # windows of two sizes, overlapping
    ((2, 3, 5, 7), 3),
    ((3, 6, 8), (None, 2)),  # 3-D input; None keeps the height
    ((1, 2, 4, 4), 1),  # global pooling
    ((2, 1, 6, 9), (3, 3)),  # multiples: blocks side by side
    ((1, 1, 3, 5), (5, 7)),  # larger than the input: windows repeat rows
]


def reference(x, out, reduce):
    """Pooling by the definition of PyTorch's adaptive windows, in numpy."""
    h, w = x.shape[-2:]
    oh, ow = (out, out) if not isinstance(out, tuple) else out
    oh, ow = h if oh is None else oh, w if ow is None else ow
    result = np.empty(x.shape[:-2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            r0, r1 = (i * h) // oh, math.ceil((i + 1) * h / oh)
            c0, c1 = (j * w) // ow, math.ceil((j + 1) * w / ow)
            result[..., i, j] = reduce(x[..., r0:r1, c0:c1], axis=(-2, -1))
    return result


@pytest.mark.parametrize("shape, out", CASES)
@pytest.mark.parametrize("kind", ["avg", "max"])
def test_values_follow_pytorchs_windows(shape, out, kind):
    x = np.random.default_rng(0).normal(size=shape)
    fn = F.adaptive_avg_pool2d if kind == "avg" else F.adaptive_max_pool2d
    got = fn(torchlight.tensor(x), out).to_numpy()
    np.testing.assert_allclose(got, reference(x, out, np.mean if kind == "avg" else np.max), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("shape, out", CASES)
@pytest.mark.parametrize("kind", ["avg", "max"])
def test_values_and_gradients_match_pytorch(shape, out, kind):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x = rng.normal(size=shape)
    name = f"adaptive_{kind}_pool2d"
    a, b = torchlight.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = getattr(F, name)(a, out), getattr(torch.nn.functional, name)(b, out)
    assert ya.shape == tuple(yb.shape)
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-12, atol=1e-14)
    g = rng.normal(size=tuple(yb.shape))
    ya.backward(torchlight.tensor(g))
    yb.backward(torch.tensor(g))
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_max_gives_the_gradient_to_the_first_maximum_in_row_major_order():
    # Every element equal: PyTorch's kernel keeps the first maximum it meets, row by row.
    x = torchlight.ones(1, 1, 4, 5, requires_grad=True)
    F.adaptive_max_pool2d(x, (2, 2)).sum().backward()
    expected = np.zeros((4, 5))
    for r, c in [(0, 0), (0, 2), (2, 0), (2, 2)]:  # windows start at rows 0, 2 and columns 0, 2
        expected[r, c] = 1.0
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], expected)


def test_gradcheck_second_order_and_modules():
    x = torchlight.tensor(np.random.default_rng(2).normal(size=(1, 2, 5, 4)), requires_grad=True)
    assert gradcheck(lambda t: F.adaptive_avg_pool2d(t, (3, 2)), (x,))
    assert gradcheck(lambda t: F.adaptive_max_pool2d(t, (2, 3)), (x,))
    for layer, fn in [
        (nn.AdaptiveAvgPool2d((3, 2)), F.adaptive_avg_pool2d),
        (nn.AdaptiveMaxPool2d((3, 2)), F.adaptive_max_pool2d),
    ]:
        np.testing.assert_array_equal(layer(x).detach().numpy(), fn(x, (3, 2)).detach().numpy())
        assert not list(layer.parameters())
    assert repr(nn.AdaptiveAvgPool2d((5, 7))) == "AdaptiveAvgPool2d(output_size=(5, 7))"
    assert repr(nn.AdaptiveMaxPool2d((None, 3))) == "AdaptiveMaxPool2d(output_size=(None, 3))"
    assert repr(nn.AdaptiveAvgPool2d(1)) == "AdaptiveAvgPool2d(output_size=1)"


def test_bad_arguments_say_what_is_wrong():
    x = torchlight.zeros(1, 1, 4, 4)
    with pytest.raises(RuntimeError, match="output_size must be 2"):
        F.adaptive_avg_pool2d(x, (2, 2, 2))
    with pytest.raises(RuntimeError, match="greater than or equal to 0"):
        nn.AdaptiveAvgPool2d(-1)
    with pytest.raises(RuntimeError, match="Expected 3D or 4D tensor"):
        F.adaptive_avg_pool2d(torchlight.zeros(4, 4), 2)
    with pytest.raises(RuntimeError, match="non-zero size for non-batch dimensions"):
        F.adaptive_max_pool2d(torchlight.zeros(1, 1, 0, 4), 2)


def test_a_classifier_head_on_two_image_sizes():
    # The reason the layer exists: one model for images of any size.
    torchlight.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d((2, 2)), nn.Flatten(), nn.Linear(16, 3)
    )
    for size in (6, 9):
        assert model(torchlight.randn(2, 1, size, size)).shape == (2, 3)
