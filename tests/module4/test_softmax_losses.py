"""Task 4.4: softmax, log_softmax, logsumexp and the losses of torchlight.nn.functional.

Values against numpy formulas (always) and PyTorch in float64 (where installed), gradients against
central differences, numerical stability at scores of 1e3, and the errors a user meets. (Dropout is
in test_dropout.py; second derivatives and forward mode are module 5's:
tests/module5/test_nn_functional_higher_order.py.)
"""

import math

import numpy as np
import pytest

import torchlight
import torchlight.nn.functional as F
from torchlight.autograd import gradcheck

pytestmark = pytest.mark.task4_4

BACKENDS = ["simple", "fast"]

rng = np.random.default_rng(44)
SCORES = rng.normal(0, 2, (3, 4))  # 3 samples, 4 classes
SCORES_3D = rng.normal(0, 2, (2, 3, 2))  # softmax along each of its dims
TARGETS = np.array([1, 0, 3])
PROBS = rng.dirichlet(np.ones(4), 3)  # class probabilities, one row per sample
WEIGHTS = np.array([0.5, 2.0, 1.0, 3.0])


def leaf(array, backend, requires_grad=True):
    return torchlight.tensor(array, backend=backend, requires_grad=requires_grad)


def np_softmax(a, dim):
    e = np.exp(a)  # the plain formula: fine for these moderate scores
    return e / e.sum(dim, keepdims=True)


def np_log_softmax(a, dim):
    return np.log(np_softmax(a, dim))


def close(tensor, expected, tol=1e-12, what=""):
    np.testing.assert_allclose(tensor.to_numpy(), expected, rtol=tol, atol=tol, err_msg=what)


# -- softmax, log_softmax, logsumexp ----------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_softmax_family_values(backend_name, dim):
    x = leaf(SCORES_3D, backend_name)
    close(F.softmax(x, dim), np_softmax(SCORES_3D, dim))
    close(F.log_softmax(x, dim), np_log_softmax(SCORES_3D, dim))
    close(F.logsumexp(x, dim), np.log(np.exp(SCORES_3D).sum(dim)))
    close(F.logsumexp(x, dim, keepdim=True), np.log(np.exp(SCORES_3D).sum(dim, keepdims=True)))


def test_softmax_of_a_permuted_view(backend_name):
    # a non-contiguous input: the transpose of a stored matrix
    x = leaf(SCORES.T.copy(), backend_name).permute(1, 0)
    close(F.softmax(x, 1), np_softmax(SCORES, 1))
    close(F.log_softmax(x, 0), np_log_softmax(SCORES, 0))


def test_softmax_family_matches_torch_values_and_gradients(backend_name):
    torch = pytest.importorskip("torch")
    weights = rng.normal(size=SCORES_3D.shape)
    for dim in (0, 1, -1):
        for name, ours, theirs in [
            ("softmax", F.softmax, torch.softmax),
            ("log_softmax", F.log_softmax, torch.log_softmax),
            ("logsumexp", F.logsumexp, torch.logsumexp),
        ]:
            x, t = leaf(SCORES_3D, backend_name), torch.tensor(SCORES_3D, requires_grad=True)
            out, expected = ours(x, dim), theirs(t, dim)
            close(out, expected.detach().numpy())
            w = weights if name != "logsumexp" else weights.sum(dim)
            (out * leaf(w, backend_name, False)).sum().backward()
            (expected * torch.tensor(w)).sum().backward()
            close(x.grad, t.grad.numpy())


def test_softmax_family_is_stable_for_large_scores(backend_name):
    a = np.array([[1000.0, 0.0, -1000.0], [-1000.0, -1000.0, -999.0], [1000.0, 1000.0, 1001.0]])
    x = leaf(a, backend_name)
    # the same rows shifted to moderate values give the answers: softmax ignores a shift
    shifted = a - a.max(1, keepdims=True)
    expected = np_softmax(shifted, 1)
    close(F.softmax(x, 1), expected)
    close(F.log_softmax(x, 1), shifted - np.log(np.exp(shifted).sum(1, keepdims=True)))
    close(F.logsumexp(x, 1), a.max(1) + np.log(np.exp(shifted).sum(1)))
    F.log_softmax(x, 1)[:, 0].sum().backward()  # d/dx log_softmax(x)[0] = one-hot(0) - softmax
    close(x.grad, np.eye(3)[[0, 0, 0]] - expected)


def test_logsumexp_of_infinities_as_pytorch(backend_name):
    x = leaf([[-math.inf, -math.inf], [math.inf, 0.0], [-math.inf, 1.0]], backend_name, False)
    np.testing.assert_array_equal(F.logsumexp(x, 1).to_numpy(), [-math.inf, math.inf, 1.0])


def test_softmax_family_of_a_0d_tensor(backend_name):
    # one element along the only "dimension": probability 1, as PyTorch
    x = leaf(2.5, backend_name)
    got = (F.softmax(x, 0).item(), F.log_softmax(x, -1).item(), F.logsumexp(x, 0).item())
    assert got == (1.0, 0.0, 2.5), f"softmax, log_softmax and logsumexp of the 0-d tensor 2.5: {got}"
    assert F.logsumexp(x, 0).shape == (), f"logsumexp of a 0-d tensor has shape {F.logsumexp(x, 0).shape}, not ()"


def test_softmax_family_gradcheck(backend_name):
    x = leaf(SCORES, backend_name)
    for fn in (F.softmax, F.log_softmax, F.logsumexp):
        for dim in (0, 1):
            assert gradcheck(lambda x, fn=fn, dim=dim: fn(x, dim), [x]), fn.__name__


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax, F.logsumexp], ids=lambda f: f.__name__)
def test_softmax_family_bad_dim(fn):
    x = torchlight.tensor(SCORES)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        fn(x, 2)
    with pytest.raises(TypeError, match="dim must be given"):
        fn(x, None)
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        fn([1.0, 2.0], 0)


# -- negative log-likelihood and cross-entropy ------------------------------------------------------


def np_cross_entropy(scores, targets):
    """-log softmax(scores)[i, t_i] for each sample (numpy)."""
    return -np_log_softmax(scores, 1)[np.arange(len(targets)), targets]


@pytest.mark.parametrize("target_kind", ["tensor", "list", "ndarray"])
def test_cross_entropy_with_class_indices(backend_name, target_kind):
    x = leaf(SCORES, backend_name)
    target = {
        "tensor": torchlight.tensor(TARGETS.astype(float), backend=backend_name),
        "list": TARGETS.tolist(),
        "ndarray": TARGETS,
    }[target_kind]
    losses = np_cross_entropy(SCORES, TARGETS)
    close(F.cross_entropy(x, target, reduction="none"), losses)
    close(F.cross_entropy(x, target, reduction="sum"), losses.sum())
    loss = F.cross_entropy(x, target)
    close(loss, losses.mean())
    loss.backward()  # d mean / d scores = (softmax - one_hot) / N
    close(x.grad, (np_softmax(SCORES, 1) - np.eye(4)[TARGETS]) / 3)


def test_nll_loss_picks_the_target_log_probability(backend_name):
    x = leaf(SCORES, backend_name)
    picked = SCORES[np.arange(3), TARGETS]
    close(F.nll_loss(x, TARGETS, reduction="none"), -picked)
    close(F.nll_loss(x, TARGETS, reduction="sum"), -picked.sum())
    close(F.nll_loss(x, TARGETS), -picked.mean())
    # cross-entropy is nll of log_softmax
    close(F.cross_entropy(x, TARGETS), F.nll_loss(F.log_softmax(x, 1), TARGETS).to_numpy())


def test_nll_loss_weight_and_ignore_index(backend_name):
    x = leaf(SCORES, backend_name)
    targets = np.array([1, -100, 3])
    w = torchlight.tensor(WEIGHTS, backend=backend_name)
    picked = WEIGHTS[[1, 3]] * SCORES[[0, 2], [1, 3]]
    close(F.nll_loss(x, targets, w, reduction="none"), [-picked[0], 0.0, -picked[1]])
    close(F.nll_loss(x, targets, w, reduction="sum"), -picked.sum())
    # "mean" divides by the weight of the targets counted, not by the number of samples
    close(F.nll_loss(x, targets, w), -picked.sum() / WEIGHTS[[1, 3]].sum())
    close(F.nll_loss(x, [5, 1, 5], ignore_index=5), -SCORES[1, 1])


def test_cross_entropy_with_class_probabilities(backend_name):
    x, p = leaf(SCORES, backend_name), leaf(PROBS, backend_name)
    losses = -(PROBS * np_log_softmax(SCORES, 1)).sum(1)
    close(F.cross_entropy(x, p, reduction="none"), losses)
    close(F.cross_entropy(x, p), losses.mean())
    close(F.cross_entropy(x, p, reduction="sum"), losses.sum())
    # one-hot probabilities give the class-index loss
    one_hot = F.one_hot(torchlight.tensor(TARGETS, backend=backend_name), 4)
    close(F.cross_entropy(x, one_hot), np_cross_entropy(SCORES, TARGETS).mean())
    F.cross_entropy(x, p).backward()
    close(x.grad, (np_softmax(SCORES, 1) - PROBS) / 3)
    close(p.grad, -np_log_softmax(SCORES, 1) / 3)


def test_cross_entropy_over_extra_dimensions(backend_name):
    # (N, C, d): one loss per sample and position, classes along dim 1
    targets = np.array([[0, 2], [1, 1]])
    x = leaf(SCORES_3D, backend_name)
    logp = np_log_softmax(SCORES_3D, 1)
    expected = -np.take_along_axis(logp, targets[:, None, :], 1)[:, 0, :]
    close(F.cross_entropy(x, targets, reduction="none"), expected)
    close(F.cross_entropy(x, targets), expected.mean())
    # an unbatched sample: scores (C,), a 0-d target
    close(F.cross_entropy(leaf(SCORES[0], backend_name), torchlight.tensor(1.0)), np_cross_entropy(SCORES[:1], [1])[0])


def test_losses_match_torch(backend_name):
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x, t = leaf(SCORES, backend_name), torch.tensor(SCORES, requires_grad=True)
    w, tw = torchlight.tensor(WEIGHTS, backend=backend_name), torch.tensor(WEIGHTS)
    idx, tidx = np.array([1, -100, 3]), torch.tensor([1, -100, 3])
    p, tp = torchlight.tensor(PROBS, backend=backend_name), torch.tensor(PROBS)
    targets_3d = np.array([[0, 2], [1, 1]])
    x3, t3 = leaf(SCORES_3D, backend_name), torch.tensor(SCORES_3D, requires_grad=True)
    cases = [
        (lambda: F.cross_entropy(x, TARGETS), lambda: tf.cross_entropy(t, torch.tensor(TARGETS))),
        (lambda: F.cross_entropy(x, idx, w), lambda: tf.cross_entropy(t, tidx, tw)),
        (
            lambda: F.cross_entropy(x, idx, w, label_smoothing=0.2),
            lambda: tf.cross_entropy(t, tidx, tw, label_smoothing=0.2),
        ),
        (
            lambda: F.cross_entropy(x, idx, label_smoothing=0.3, reduction="sum"),
            lambda: tf.cross_entropy(t, tidx, label_smoothing=0.3, reduction="sum"),
        ),
        (
            lambda: F.cross_entropy(x, p, w, label_smoothing=0.1),
            lambda: tf.cross_entropy(t, tp, tw, label_smoothing=0.1),
        ),
        (
            lambda: F.cross_entropy(x3, targets_3d, reduction="none"),
            lambda: tf.cross_entropy(t3, torch.tensor(targets_3d), reduction="none"),
        ),
        (lambda: F.nll_loss(x, idx, w), lambda: tf.nll_loss(t, tidx, tw)),
        (lambda: F.nll_loss(x3, targets_3d), lambda: tf.nll_loss(t3, torch.tensor(targets_3d))),
    ]
    for i, (ours, theirs) in enumerate(cases):
        for leaf_ in (x, x3, t, t3):
            leaf_.grad = None
        out, expected = ours(), theirs()
        close(out, expected.detach().numpy(), what=f"case {i}: the loss")
        g = rng.normal(size=expected.shape)
        (out * leaf(g, backend_name, False)).sum().backward()
        (expected * torch.tensor(g)).sum().backward()
        for mine, ref in ((x, t), (x3, t3)):
            if ref.grad is not None:
                close(mine.grad, ref.grad.numpy(), what=f"case {i}: the gradient of the scores")
            else:
                assert mine.grad is None, f"case {i}"


def test_cross_entropy_is_stable_for_large_scores(backend_name):
    a = np.array([[1000.0, -1000.0, 0.0], [-1000.0, -1000.0, -998.0]])
    x = leaf(a, backend_name)
    loss = F.cross_entropy(x, [1, 2], reduction="none")
    shifted = a - a.max(1, keepdims=True)
    expected = -(shifted - np.log(np.exp(shifted).sum(1, keepdims=True)))[[0, 1], [1, 2]]
    close(loss, expected, what="the losses of scores of +-1000")  # 2000 and log(1 + 2 e^-2): finite
    loss.sum().backward()
    assert np.isfinite(x.grad.to_numpy()).all(), f"the gradient of scores of +-1000: {x.grad.to_numpy()}"


def test_losses_gradcheck(backend_name):
    x, p = leaf(SCORES, backend_name), leaf(PROBS, backend_name)
    w = torchlight.tensor(WEIGHTS, backend=backend_name)
    assert gradcheck(lambda x: F.cross_entropy(x, TARGETS), [x])
    assert gradcheck(lambda x: F.cross_entropy(x, [1, -100, 3], w, label_smoothing=0.1, reduction="sum"), [x])
    assert gradcheck(lambda x, p: F.cross_entropy(x, p, reduction="none"), [x, p])
    assert gradcheck(lambda x: F.nll_loss(x, TARGETS, w), [x])
    x3 = leaf(SCORES_3D, backend_name)
    assert gradcheck(lambda x: F.cross_entropy(x, [[0, 2], [1, 1]]), [x3])


@pytest.mark.parametrize("fn", [F.nll_loss, F.cross_entropy], ids=["nll_loss", "cross_entropy"])
def test_class_target_errors(fn):
    x = torchlight.tensor(SCORES)
    name = fn.__name__
    with pytest.raises(IndexError, match=rf"{name}\(\): Target 4 is out of bounds: input has 4 classes"):
        fn(x, [1, 4, 0])
    with pytest.raises(IndexError, match="Target -1 is out of bounds"):
        fn(x, torchlight.tensor([1.0, -1.0, 0.0]))
    with pytest.raises(RuntimeError, match=r"class indices \(whole numbers\), got 0.5"):
        fn(x, [1.0, 0.5, 0.0])
    with pytest.raises(ValueError, match=r"target of shape \(2,\) does not fit input of shape \(3, 4\).*\(3,\)"):
        fn(x, [1, 2])
    with pytest.raises(ValueError, match="'avg' is not a valid value for reduction"):
        fn(x, TARGETS, reduction="avg")
    with pytest.raises(RuntimeError, match=r"weight should be defined either for all 4 classes.*\(3,\)"):
        fn(x, TARGETS, torchlight.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="class dimension"):
        fn(torchlight.tensor(1.0), [0])
    with pytest.raises(TypeError, match="argument 'input' must be Tensor, not list"):
        fn(SCORES.tolist(), TARGETS)


def test_cross_entropy_label_smoothing_errors():
    x = torchlight.tensor(SCORES)
    with pytest.raises(ValueError, match=r"label_smoothing must be between 0.0 and 1.0, got 1.5"):
        F.cross_entropy(x, TARGETS, label_smoothing=1.5)


def test_nll_loss_of_every_target_ignored_is_nan_as_pytorch(backend_name):
    x = leaf(SCORES, backend_name)
    mean = F.nll_loss(x, [-100, -100, -100]).item()
    assert math.isnan(mean), f"the mean loss of no counted target (every one ignored) is nan, 0 / 0, not {mean}"
    total = F.nll_loss(x, [-100, -100, -100], reduction="sum").item()
    assert total == 0.0, f"the summed loss of no counted target is 0.0, not {total}"


# -- regression and binary losses -----------------------------------------------------------------


def test_mse_loss(backend_name):
    y = rng.normal(size=SCORES.shape)
    x, t = leaf(SCORES, backend_name), leaf(y, backend_name)
    close(F.mse_loss(x, t, reduction="none"), (SCORES - y) ** 2)
    close(F.mse_loss(x, t, reduction="sum"), ((SCORES - y) ** 2).sum())
    loss = F.mse_loss(x, t)
    close(loss, ((SCORES - y) ** 2).mean())
    loss.backward()
    close(x.grad, 2 * (SCORES - y) / SCORES.size)
    close(t.grad, -2 * (SCORES - y) / SCORES.size)
    assert gradcheck(lambda a, b: F.mse_loss(a, b, reduction="none"), [x, t])


def test_binary_cross_entropy(backend_name):
    probs = rng.uniform(0.05, 0.95, (2, 3))
    y = rng.uniform(0, 1, (2, 3))
    w = rng.uniform(0.5, 2, (3,))
    x, t = leaf(probs, backend_name), leaf(y, backend_name)
    losses = -(y * np.log(probs) + (1 - y) * np.log(1 - probs))
    close(F.binary_cross_entropy(x, t, reduction="none"), losses)
    close(F.binary_cross_entropy(x, t), losses.mean())
    close(F.binary_cross_entropy(x, t, torchlight.tensor(w, backend=backend_name), "sum"), (losses * w).sum())
    assert gradcheck(lambda a, b: F.binary_cross_entropy(a, b, reduction="none"), [x, t])


def test_binary_cross_entropy_clamps_log_at_minus_100(backend_name):
    # as PyTorch: log(0) counts as -100, so a sure wrong answer costs 100, not inf
    x = leaf([0.0, 1.0, 0.0, 1.0], backend_name)
    t = leaf([1.0, 0.0, 0.0, 1.0], backend_name, False)
    close(F.binary_cross_entropy(x, t, reduction="none"), [100.0, 100.0, 0.0, 0.0])
    F.binary_cross_entropy(x, t).backward()
    assert np.isfinite(x.grad.to_numpy()).all()


def test_binary_cross_entropy_with_logits(backend_name):
    scores = rng.normal(0, 2, (2, 3))
    y = rng.uniform(0, 1, (2, 3))
    pw = rng.uniform(0.5, 2, (3,))
    x, t = leaf(scores, backend_name), leaf(y, backend_name)
    s = 1 / (1 + np.exp(-scores))
    close(F.binary_cross_entropy_with_logits(x, t, reduction="none"), -(y * np.log(s) + (1 - y) * np.log(1 - s)))
    pos = torchlight.tensor(pw, backend=backend_name)
    close(
        F.binary_cross_entropy_with_logits(x, t, reduction="sum", pos_weight=pos),
        -(pw * y * np.log(s) + (1 - y) * np.log(1 - s)).sum(),
    )
    loss = F.binary_cross_entropy_with_logits(x, t)
    loss.backward()
    close(x.grad, (s - y) / 6)
    assert gradcheck(lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction="none", pos_weight=pos), [x, t])


def test_binary_cross_entropy_with_logits_is_stable(backend_name):
    x = leaf([1000.0, -1000.0, 1000.0, -1000.0, 0.0, 0.0], backend_name)
    t = leaf([0.0, 1.0, 1.0, 0.0, 1.0, 0.0], backend_name, False)
    close(F.binary_cross_entropy_with_logits(x, t, reduction="none"), [1000, 1000, 0, 0, math.log(2), math.log(2)])
    F.binary_cross_entropy_with_logits(x, t, reduction="sum").backward()
    # sigmoid(x) - y, also at x = 0 where the stable formula's max(x, 0) has its kink
    close(x.grad, [1.0, -1.0, 0.0, 0.0, -0.5, 0.5])


def test_binary_losses_match_torch(backend_name):
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    scores, y, w = rng.normal(0, 3, (2, 3)), rng.uniform(0, 1, (2, 3)), rng.uniform(0.5, 2, (3,))
    for ours, theirs, a in [
        (F.binary_cross_entropy, tf.binary_cross_entropy, 1 / (1 + np.exp(-scores))),
        (F.binary_cross_entropy_with_logits, tf.binary_cross_entropy_with_logits, scores),
    ]:
        x, t = leaf(a, backend_name), torch.tensor(a, requires_grad=True)
        out = ours(x, leaf(y, backend_name, False), torchlight.tensor(w, backend=backend_name))
        expected = theirs(t, torch.tensor(y), torch.tensor(w))
        close(out, expected.detach().numpy())
        out.backward()
        expected.backward()
        close(x.grad, t.grad.numpy(), tol=1e-10)


@pytest.mark.parametrize(
    "fn", [F.mse_loss, F.binary_cross_entropy, F.binary_cross_entropy_with_logits], ids=lambda f: f.__name__
)
def test_elementwise_loss_errors(fn):
    x = torchlight.tensor([[0.2, 0.4, 0.6], [0.1, 0.3, 0.5]])
    with pytest.raises(ValueError, match=r"target of shape \(3,\) must have the shape of input, \(2, 3\)"):
        fn(x, torchlight.tensor([0.0, 1.0, 0.0]))
    with pytest.raises(ValueError, match="'elementwise' is not a valid value for reduction"):
        fn(x, x, reduction="elementwise")
    with pytest.raises(TypeError, match="argument 'target' must be Tensor, not list"):
        fn(x, [[0.0] * 3] * 2)


def test_binary_cross_entropy_rejects_values_outside_0_1():
    t = torchlight.tensor([0.0, 1.0])
    with pytest.raises(RuntimeError, match=r"between 0 and 1 \(probabilities\), got 1.5"):
        F.binary_cross_entropy(torchlight.tensor([0.5, 1.5]), t)
    with pytest.raises(RuntimeError, match="got -0.1"):
        F.binary_cross_entropy(torchlight.tensor([-0.1, 0.5]), t)


# -- one_hot, linear and activations ------------------------------------------------------------------


def test_one_hot(backend_name):
    idx = torchlight.tensor([[0.0, 2.0], [1.0, 2.0]], backend=backend_name)
    encoded = F.one_hot(idx)
    assert encoded.backend.name == backend_name
    close(encoded, np.eye(3)[[[0, 2], [1, 2]]])
    close(F.one_hot(idx, num_classes=5), np.eye(5)[[[0, 2], [1, 2]]])
    close(F.one_hot([1, 0]), [[0.0, 1.0], [1.0, 0.0]])


def test_one_hot_errors():
    with pytest.raises(RuntimeError, match="Class values must be non-negative, got -1"):
        F.one_hot(torchlight.tensor([0.0, -1.0]))
    with pytest.raises(RuntimeError, match="smaller than num_classes: num_classes=2, largest class value 2"):
        F.one_hot([0, 2], num_classes=2)
    with pytest.raises(RuntimeError, match="whole numbers, got 1.5"):
        F.one_hot(torchlight.tensor([1.5]))
    with pytest.raises(RuntimeError, match="Can not infer total number of classes from empty tensor"):
        F.one_hot(np.zeros(0, dtype=int))


def test_linear_and_activations(backend_name):
    w, b = rng.normal(size=(2, 4)), rng.normal(size=(2,))
    x = leaf(SCORES, backend_name)
    weight, bias = leaf(w, backend_name), leaf(b, backend_name)
    close(F.linear(x, weight, bias), SCORES @ w.T + b)
    close(F.linear(x, weight), SCORES @ w.T)
    assert gradcheck(F.linear, [x, weight, bias])
    close(F.relu(x), np.maximum(SCORES, 0))
    close(F.sigmoid(x), 1 / (1 + np.exp(-SCORES)))
    close(F.tanh(x), np.tanh(SCORES))


def test_linear_errors():
    x = torchlight.tensor(SCORES)
    with pytest.raises(RuntimeError, match=r"input of shape \(3, 4\) and weight of shape \(2, 3\) cannot be"):
        F.linear(x, torchlight.tensor(np.ones((2, 3))))
    with pytest.raises(RuntimeError, match=r"bias of shape \(3,\) does not match out_features = 2"):
        F.linear(x, torchlight.tensor(np.ones((2, 4))), torchlight.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="weight must be 2-D"):
        F.linear(x, torchlight.tensor([1.0, 2.0, 3.0, 4.0]))
