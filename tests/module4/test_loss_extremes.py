"""Task 4.4 at the extremes: the softmax losses and binary_cross_entropy against PyTorch (float64)
where their inputs are masked, huge or saturated, values and gradients.

- masked logits: a non-target logit of -inf counts for nothing (``-inf * 0`` must not enter a sum);
- huge logits: equal logits of 1e16 give log C, not what rounding 1e16 + log C leaves;
- saturated probabilities: binary_cross_entropy at exactly 0 or 1 has PyTorch's gradient
  ``(q - t) / max(q (1 - q), 1e-12)``, not 0.
"""

import numpy as np
import pytest

import torchlight
import torchlight.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

pytestmark = pytest.mark.task4_4

BACKENDS = ["simple", "fast"]
INF = float("inf")


def both(array, backend):
    """The same leaf in torchlight and in PyTorch (float64)."""
    return (
        torchlight.tensor(array, backend=backend, requires_grad=True),
        torch.tensor(array, dtype=torch.float64, requires_grad=True),
    )


def same(ours, theirs, **kw):
    np.testing.assert_allclose(np.asarray(ours), theirs.detach().numpy(), rtol=1e-12, atol=1e-12, **kw)


def check(fn_tl, fn_torch, arrays, backend):
    """fn's value and the gradient of its sum, in torchlight and PyTorch, equal (nan and inf included)."""
    pairs = [both(a, backend) for a in arrays]
    ours = fn_tl(*[p[0] for p in pairs])
    theirs = fn_torch(*[p[1] for p in pairs])
    same(ours.to_numpy(), theirs)
    ours.sum().backward()
    theirs.sum().backward()
    for x, tx in pairs:
        same(x.grad.to_numpy(), tx.grad)


MASKED = [[1.0, -INF, 0.5], [2.0, 0.3, -INF]]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_with_masked_logits_is_finite(backend_name, reduction):
    # the case: PyTorch gives a finite loss, torchlight gave nan
    check(
        lambda x: F.cross_entropy(x, [0, 1], reduction=reduction),
        lambda x: TF.cross_entropy(x, torch.tensor([0, 1]), reduction=reduction),
        [MASKED],
        backend_name,
    )


def test_cross_entropy_masked_with_weight_and_ignore_index(backend_name):
    w = [1.0, 2.0, 3.0]
    check(
        lambda x: F.cross_entropy(x, [0, -100], torchlight.tensor(w, backend=backend_name)),
        lambda x: TF.cross_entropy(x, torch.tensor([0, -100]), torch.tensor(w, dtype=torch.float64)),
        [MASKED],
        backend_name,
    )


def test_cross_entropy_masked_with_label_smoothing(backend_name):
    # every class gets some of the target here: the loss is inf, as PyTorch's, with its finite gradient
    check(
        lambda x: F.cross_entropy(x, [0, 1], label_smoothing=0.1),
        lambda x: TF.cross_entropy(x, torch.tensor([0, 1]), label_smoothing=0.1),
        [MASKED],
        backend_name,
    )


def test_nll_loss_with_masked_log_probabilities(backend_name):
    check(
        lambda x: F.nll_loss(F.log_softmax(x, 1), [0, 1]),
        lambda x: TF.nll_loss(TF.log_softmax(x, 1), torch.tensor([0, 1])),
        [MASKED],
        backend_name,
    )
    check(lambda x: F.nll_loss(x, [0, 1]), lambda x: TF.nll_loss(x, torch.tensor([0, 1])), [MASKED], backend_name)


def test_log_softmax_with_masked_logits(backend_name):
    check(lambda x: F.log_softmax(x, 1), lambda x: TF.log_softmax(x, 1), [MASKED], backend_name)


@pytest.mark.parametrize("big", [1e16, -1e16, 1e300])
def test_equal_huge_logits_give_log_c(backend_name, big):
    check(lambda x: F.log_softmax(x, 1), lambda x: TF.log_softmax(x, 1), [[[big] * 3]], backend_name)
    check(
        lambda x: F.cross_entropy(x, [0]),
        lambda x: TF.cross_entropy(x, torch.tensor([0])),
        [[[big] * 3]],
        backend_name,
    )
    loss = F.cross_entropy(torchlight.tensor([[big] * 3], backend=backend_name), [0])
    assert loss.item() == pytest.approx(np.log(3), rel=1e-15)


def test_huge_unequal_logits(backend_name):
    x = [[1e16, 1e16 + 4.0, 1e16 - 2.0], [3e15, -1e16, 2.5e15]]
    check(lambda x: F.log_softmax(x, 1), lambda x: TF.log_softmax(x, 1), [x], backend_name)
    check(lambda x: F.cross_entropy(x, [1, 2]), lambda x: TF.cross_entropy(x, torch.tensor([1, 2])), [x], backend_name)


SATURATED_Q = [0.0, 1.0, 0.0, 1.0, 1e-13, 1 - 1e-13, 0.3, 1e-50]
SATURATED_T = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.4, 0.0]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_saturated_gradient_as_pytorch(backend_name, reduction):
    t = torch.tensor(SATURATED_T, dtype=torch.float64)
    check(
        lambda q: F.binary_cross_entropy(q, torchlight.tensor(SATURATED_T, backend=backend_name), reduction=reduction),
        lambda q: TF.binary_cross_entropy(q, t, reduction=reduction),
        [SATURATED_Q],
        backend_name,
    )


def test_binary_cross_entropy_wrong_sure_answer_pulls_towards_the_target(backend_name):
    q = torchlight.tensor([0.0, 1.0], backend=backend_name, requires_grad=True)
    F.binary_cross_entropy(q, torchlight.tensor([1.0, 0.0], backend=backend_name), reduction="sum").backward()
    assert q.grad.to_numpy().tolist() == pytest.approx([-1e12, 1e12], rel=1e-8)  # (1e-12 as a float32)


def test_binary_cross_entropy_saturated_with_weight_and_target_gradient(backend_name):
    w = [0.5, 2.0, 1.0, 3.0, 1.0, 2.0, 0.7, 1.0]
    q, tq = both(SATURATED_Q[:], backend_name)
    t, tt = both([0.2, 0.9, 0.5, 0.5, 1.0, 1.0, 0.4, 0.0], backend_name)
    loss = F.binary_cross_entropy(q, t, torchlight.tensor(w, backend=backend_name))
    tloss = TF.binary_cross_entropy(tq, tt, torch.tensor(w, dtype=torch.float64))
    same(loss.to_numpy(), tloss)
    loss.backward()
    tloss.backward()
    same(q.grad.to_numpy(), tq.grad)
    # the target's gradient: PyTorch's log(1 - q) - log(q), except that torchlight keeps each log
    # at least -100 where q is exactly 0 or 1 (PyTorch: +-inf there), so finite everywhere
    sure = np.isin(np.asarray(SATURATED_Q), [0.0, 1.0])
    same(t.grad.to_numpy()[~sure], tt.grad[torch.tensor(~sure)])
    assert np.isfinite(t.grad.to_numpy()).all()
