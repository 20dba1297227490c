"""Module 5 on module 4's fused max pooling and cross-entropy (ops/fused_nn.py, the fast backend's
one-kernel paths of ``F.max_pool2d``, ``nn.MaxPool2d`` and ``F.cross_entropy``): their backwards are
Functions with backwards and jvps of their own, so they have second derivatives (stage 5.3) and
forward-mode derivatives (stage 5.4), checked by central differences and against the taught
path's, which is composed of differentiable operations. (Values and first derivatives:
tests/module4/test_fused_pool.py and test_fused_loss.py.)
"""

import numpy as np
import pytest

import torchlight
from torchlight.autograd import forward_ad, gradcheck, gradgradcheck
from torchlight.nn import functional as F
from torchlight.ops import fused_nn

rng = np.random.default_rng(57)
POOLED = (rng.permutation(2 * 2 * 4 * 6) * 0.1 - 4.8).reshape(2, 2, 4, 6)  # distinct: each maximum stays put
SCORES = rng.normal(0, 2, (3, 4))
LABELS = [3, 0, 1]
WEIGHTS = np.array([0.5, 2.0, 1.0, 1.5])


def _leaf(a):
    return torchlight.tensor(a, backend="fast", requires_grad=True)


def _losses():
    w = torchlight.tensor(WEIGHTS, backend="fast")
    return {
        "mean": lambda x: F.cross_entropy(x, LABELS),
        "sum, weights": lambda x: F.cross_entropy(x, LABELS, w, reduction="sum"),
        "none, smoothing": lambda x: F.cross_entropy(x, LABELS, reduction="none", label_smoothing=0.2),
        "mean, ignored, weights": lambda x: F.cross_entropy(x, LABELS, w, ignore_index=0),
    }


LOSSES = ["mean", "sum, weights", "none, smoothing", "mean, ignored, weights"]


def _pools():
    return {
        "F.max_pool2d": lambda x: F.max_pool2d(x, 2),
        "oblong, cropped": lambda x: F.max_pool2d(x[:, :, :, :5], (2, 1)),
        "after relu": lambda x: F.max_pool2d(x.relu(), (1, 3)),
    }


POOLS = ["F.max_pool2d", "oblong, cropped", "after relu"]


def test_the_fused_paths_are_the_ones_checked():
    assert F.max_pool2d(_leaf(POOLED), 2).grad_fn is fused_nn.MaxPool2dBlocks
    for name in LOSSES:
        assert _losses()[name](_leaf(SCORES)).grad_fn is fused_nn.CrossEntropy


@pytest.mark.task5_3
@pytest.mark.parametrize("name", POOLS)
def test_pool_second_derivatives(name):
    assert gradgradcheck(_pools()[name], [_leaf(POOLED)])


@pytest.mark.task5_3
@pytest.mark.parametrize("name", LOSSES)
def test_loss_second_derivatives(name):
    assert gradgradcheck(_losses()[name], [_leaf(SCORES)])


@pytest.mark.task5_3
@pytest.mark.parametrize("name", LOSSES)
def test_loss_hessian_vector_product_is_the_taught_one(monkeypatch, name):
    v = rng.normal(size=SCORES.shape)
    results = []
    for fused in (True, False):
        with monkeypatch.context() as m:
            if not fused:
                m.setattr(torchlight.backends.get("fast"), "fused_kernel", lambda kernel: None)
            x = _leaf(SCORES)
            (g,) = torchlight.autograd.grad(_losses()[name](x).sum(), [x], create_graph=True)
            (g * torchlight.tensor(v, backend="fast")).sum().backward()
            results.append(x.grad.to_numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12, atol=1e-14)


@pytest.mark.task5_4
@pytest.mark.parametrize("name", POOLS)
def test_pool_forward_mode(name):
    assert gradcheck(_pools()[name], [_leaf(POOLED)], check_forward_ad=True)


@pytest.mark.task5_4
@pytest.mark.parametrize("name", LOSSES)
def test_loss_forward_mode(name):
    assert gradcheck(_losses()[name], [_leaf(SCORES)], check_forward_ad=True)


@pytest.mark.task5_4
def test_tangents_are_the_taught_ones(monkeypatch):
    u_pool, u_scores = rng.normal(size=POOLED.shape), rng.normal(size=SCORES.shape)
    results = []
    for fused in (True, False):
        with monkeypatch.context() as m:
            if not fused:
                m.setattr(torchlight.backends.get("fast"), "fused_kernel", lambda kernel: None)
            with forward_ad.dual_level():
                x = forward_ad.make_dual(
                    torchlight.tensor(POOLED, backend="fast"), torchlight.tensor(u_pool, backend="fast")
                )
                pooled = forward_ad.unpack_dual(F.max_pool2d(x, 2)).tangent.to_numpy()
                y = forward_ad.make_dual(
                    torchlight.tensor(SCORES, backend="fast"), torchlight.tensor(u_scores, backend="fast")
                )
                losses = [forward_ad.unpack_dual(_losses()[n](y)).tangent.to_numpy() for n in LOSSES]
            results.append((pooled, losses))
    np.testing.assert_array_equal(results[0][0], results[1][0])  # a gather: exactly the taught sum's value
    for fused_tangent, taught_tangent in zip(results[0][1], results[1][1], strict=True):
        np.testing.assert_allclose(fused_tangent, taught_tangent, rtol=1e-12, atol=1e-14)
