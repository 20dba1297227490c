"""Module 5 on module 4's functions: torchlight.nn.functional is composed of differentiable tensor
operations, so its softmax family, dropout and losses have second derivatives (stage 5.3) and
forward-mode derivatives (stage 5.4) without a Function of their own; in-place dropout is stage
5.2's. (Their values and first derivatives are stage 4.4's: tests/module4/test_softmax_losses.py.)
"""

import numpy as np
import pytest

import torchlight
import torchlight.nn.functional as F
from torchlight.autograd import forward_ad, gradcheck, gradgradcheck

BACKENDS = ["simple", "fast"]

rng = np.random.default_rng(53)
SCORES = rng.normal(0, 2, (2, 3))
PROBS = rng.dirichlet(np.ones(3), 2)
Y = rng.uniform(0, 1, (2, 3))
WEIGHTS = np.array([0.5, 2.0, 1.0])


def _dropout(x):
    torchlight.manual_seed(4)  # the same mask at every evaluation
    return F.dropout(x, 0.4)


def cases(backend):
    """(name, function, inputs): each function of nn.functional with the inputs it is checked at."""

    def leaf(a):
        return torchlight.tensor(a, backend=backend, requires_grad=True)

    w = torchlight.tensor(WEIGHTS, backend=backend)
    x, p, y = leaf(SCORES), leaf(PROBS), leaf(Y)
    probs = leaf(1 / (1 + np.exp(-SCORES)))
    return [
        ("softmax", lambda x: F.softmax(x, 1), [x]),
        ("log_softmax", lambda x: F.log_softmax(x, 0), [x]),
        ("logsumexp", lambda x: F.logsumexp(x, 1), [x]),
        ("cross_entropy", lambda x: F.cross_entropy(x, [2, 0], w, label_smoothing=0.1), [x]),
        ("cross_entropy_probs", lambda x, p: F.cross_entropy(x, p, reduction="none"), [x, p]),
        ("nll_loss", lambda x: F.nll_loss(F.log_softmax(x, 1), [1, 2], reduction="sum"), [x]),
        ("mse_loss", lambda x, y: F.mse_loss(x, y), [x, y]),
        ("binary_cross_entropy", lambda q, y: F.binary_cross_entropy(q, y, reduction="none"), [probs, y]),
        ("bce_with_logits", lambda x, y: F.binary_cross_entropy_with_logits(x, y, reduction="none"), [x, y]),
        # at 0, where the stable formula's max(x, 0) has its kink
        ("bce_with_logits_at_0", lambda x: F.binary_cross_entropy_with_logits(x, x.detach() * 0 + 0.3), [leaf([0.0])]),
        ("dropout", _dropout, [x]),
    ]


# Spelled out rather than taken from cases(): importing this file must build no tensor, so that in
# a student edition it is collected (and fails at its own stubs) whatever stage the student is at.
NAMES = [
    "softmax",
    "log_softmax",
    "logsumexp",
    "cross_entropy",
    "cross_entropy_probs",
    "nll_loss",
    "mse_loss",
    "binary_cross_entropy",
    "bce_with_logits",
    "bce_with_logits_at_0",
    "dropout",
]


@pytest.mark.task5_3
@pytest.mark.parametrize("name", NAMES)
def test_second_derivatives(backend_name, name):
    fn, inputs = next((f, i) for n, f, i in cases(backend_name) if n == name)
    assert gradgradcheck(fn, inputs)


@pytest.mark.task5_4
@pytest.mark.parametrize("name", NAMES)
def test_forward_mode(backend_name, name):
    fn, inputs = next((f, i) for n, f, i in cases(backend_name) if n == name)
    assert gradcheck(fn, inputs, check_forward_ad=True)


@pytest.mark.task5_3
def test_cross_entropy_hessian_vector_product_matches_torch(backend_name, torch):
    v = rng.normal(size=SCORES.shape)
    x = torchlight.tensor(SCORES, backend=backend_name, requires_grad=True)
    (g,) = torchlight.autograd.grad(F.cross_entropy(x, [2, 0], label_smoothing=0.2), [x], create_graph=True)
    (g * torchlight.tensor(v, backend=backend_name)).sum().backward()
    t = torch.tensor(SCORES, requires_grad=True)
    (gt,) = torch.autograd.grad(
        torch.nn.functional.cross_entropy(t, torch.tensor([2, 0]), label_smoothing=0.2), [t], create_graph=True
    )
    (gt * torch.tensor(v)).sum().backward()
    np.testing.assert_allclose(x.grad.to_numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.task5_4
def test_log_softmax_tangent(backend_name):
    # d log_softmax(x) . u = u - sum(softmax(x) * u) along the dim
    u = rng.normal(size=SCORES.shape)
    with forward_ad.dual_level():
        x = forward_ad.make_dual(
            torchlight.tensor(SCORES, backend=backend_name), torchlight.tensor(u, backend=backend_name)
        )
        tangent = forward_ad.unpack_dual(F.log_softmax(x, 1)).tangent
    s = np.exp(SCORES) / np.exp(SCORES).sum(1, keepdims=True)
    np.testing.assert_allclose(tangent.to_numpy(), u - (s * u).sum(1, keepdims=True), rtol=1e-10, atol=1e-12)


@pytest.mark.task5_2
def test_inplace_dropout_changes_its_input(backend_name):
    x = torchlight.tensor(np.ones((4, 5)), backend=backend_name, requires_grad=True)
    h = x * 2.0  # not a leaf: it may change in place
    torchlight.manual_seed(6)
    out = F.dropout(h, 0.5, inplace=True)
    assert out is h
    values = h.to_numpy()
    assert set(np.unique(values)) <= {0.0, 4.0} and (values == 0).any() and (values == 4).any()
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.to_numpy(), values)  # d/dx of 2x * mask * 2
    with pytest.raises(RuntimeError, match="leaf"):
        F.dropout(torchlight.tensor([1.0, 2.0], backend=backend_name, requires_grad=True), 0.5, inplace=True)


def test_names_list_every_case():
    assert NAMES == [name for name, _, _ in cases("simple")]
