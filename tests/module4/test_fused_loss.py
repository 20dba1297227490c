"""Task 4.4, the library's fused path: ``F.cross_entropy`` of scores (N, C) is one Function over one
kernel on the fast backend (ops/fused_nn.py, backends/fast_nn.py). Its loss is the taught one
(``_nll`` of ``log_softmax``) bit for bit, for every reduction, class weights, ignored targets,
label smoothing, soft targets and extreme scores; its gradient, computed by its formula rather
than through the taught graph, agrees with the taught gradient to rounding, with central
differences and with PyTorch; and in the student edition the taught code's stub still raises
where the fused path stands in for it.

(Second derivatives and forward mode: tests/module5/test_fused_pool_loss_higher_order.py.)
"""

import numpy as np
import pytest

import torchlight
from torchlight.autograd import gradcheck
from torchlight.nn import functional as F
from torchlight.ops import fused_nn

pytestmark = pytest.mark.task4_4

rng = np.random.default_rng(41)
SCORES = rng.normal(0, 3, (6, 5))
LABELS = [0, 4, 2, 2, 1, 3]
WEIGHTS = np.array([0.5, 2.0, 1.0, 0.0, 3.0])


@pytest.fixture
def taught_only(monkeypatch):
    """A function that runs its argument with the fused path off (the fast backend offering no
    fused kernel), so that the taught code runs on the same backend."""
    fast = torchlight.backends.get("fast")

    def run(fn):
        with monkeypatch.context() as m:
            m.setattr(fast, "fused_kernel", lambda name: None)
            return fn()

    return run


def _same(fused, taught):
    """Equal to the bit (so -0.0 is not 0.0), nan where nan (whose sign bit means nothing)."""
    a, b = (np.ascontiguousarray(t.to_numpy(), dtype=np.float64) for t in (fused, taught))
    assert a.shape == b.shape
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_array_equal(a[~np.isnan(a)].view(np.uint64), b[~np.isnan(b)].view(np.uint64))


def _loss_and_grad(scores, target, **kwargs):
    leaf = torchlight.tensor(scores, backend="fast", requires_grad=True)
    loss = F.cross_entropy(leaf, target, **kwargs)
    g = np.random.default_rng(42).standard_normal(loss.shape)
    loss.backward(torchlight.tensor(g, backend="fast"))
    return loss, leaf.grad.to_numpy()


def _target(kind):
    if kind == "soft":
        return torchlight.tensor(np.random.default_rng(43).dirichlet(np.ones(5), 6), backend="fast")
    if kind == "tensor":
        return torchlight.tensor(LABELS, dtype=torchlight.int64, backend="fast")
    return LABELS


KWARGS = [
    {},
    {"reduction": "sum"},
    {"reduction": "none"},
    {"weight": "w"},
    {"weight": "w", "reduction": "none"},
    {"ignore_index": 2},
    {"ignore_index": 2, "reduction": "sum", "weight": "w"},
    {"label_smoothing": 0.2},
    {"label_smoothing": 0.2, "ignore_index": 4, "weight": "w"},
]


def _kwargs(kwargs):
    return {k: torchlight.tensor(WEIGHTS, backend="fast") if v == "w" else v for k, v in kwargs.items()}


@pytest.mark.parametrize("kind", ["list", "tensor", "soft"])
@pytest.mark.parametrize("kwargs", KWARGS, ids=[str(k) for k in KWARGS])
def test_fused_loss_is_the_taught_one(taught_only, kind, kwargs):
    if kind == "soft" and "ignore_index" in kwargs:
        pytest.skip("ignore_index is for class indices")
    target = _target(kind)
    fused, fused_grad = _loss_and_grad(SCORES, target, **_kwargs(kwargs))
    assert fused.grad_fn is fused_nn.CrossEntropy
    taught, taught_grad = taught_only(lambda: _loss_and_grad(SCORES, target, **_kwargs(kwargs)))
    assert taught.grad_fn is not fused_nn.CrossEntropy
    _same(fused, taught)
    np.testing.assert_allclose(fused_grad, taught_grad, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize(
    "scores",
    [
        SCORES * 1e16,  # the shift by the maximum must come first
        SCORES - 800.0,  # every exp underflows without the shift
        np.where(SCORES > 1.0, -np.inf, SCORES),  # masked logits: -inf where the target is not
        np.full((6, 5), np.inf),  # an infinite maximum is shifted by 0 (nan, as the taught loss)
    ],
    ids=["large", "very negative", "-inf off target", "inf"],
)
@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_extreme_scores(taught_only, scores, reduction):
    target = [int(np.argmax(np.where(np.isfinite(r), r, -1e300))) for r in scores]
    fused, fused_grad = _loss_and_grad(scores, target, reduction=reduction)
    taught, taught_grad = taught_only(lambda: _loss_and_grad(scores, target, reduction=reduction))
    _same(fused, taught)
    np.testing.assert_allclose(fused_grad, taught_grad, rtol=1e-12, atol=1e-300)


def test_strided_scores_and_a_batch_of_one(taught_only):
    wide = torchlight.tensor(np.random.default_rng(44).standard_normal((5, 12)), backend="fast")
    for x, target in [(wide.permute(1, 0)[:, ::1][::2], [0, 1, 2, 3, 4, 0]), (wide[:1], [7])]:
        fused = F.cross_entropy(x, target)
        taught = taught_only(lambda x=x, target=target: F.cross_entropy(x, target))
        _same(fused, taught)


def test_taught_path_where_it_does_not_apply():
    x = torchlight.tensor(SCORES, backend="fast", requires_grad=True)
    # a target that needs a gradient, scores of more than 2 dimensions, one unbatched sample, simple
    probs = torchlight.tensor(np.full((6, 5), 0.2), backend="fast", requires_grad=True)
    assert F.cross_entropy(x, probs).grad_fn is not fused_nn.CrossEntropy
    assert F.cross_entropy(x.view(6, 5, 1), [[0]] * 6).grad_fn is not fused_nn.CrossEntropy
    assert F.cross_entropy(x[0], 1).grad_fn is not fused_nn.CrossEntropy
    s = torchlight.tensor(SCORES, backend="simple", requires_grad=True)
    assert F.cross_entropy(s, LABELS).grad_fn is not fused_nn.CrossEntropy


@pytest.mark.parametrize("kwargs", [{}, {"reduction": "none", "weight": "w"}, {"label_smoothing": 0.3}])
def test_fused_gradcheck(kwargs):
    x = torchlight.tensor(SCORES, backend="fast", requires_grad=True)
    assert gradcheck(lambda a: F.cross_entropy(a, LABELS, **_kwargs(kwargs)), [x])


@pytest.mark.parametrize("kwargs", [{}, {"reduction": "sum", "weight": "w"}, {"reduction": "none", "ignore_index": 2}])
def test_fused_matches_torch(kwargs):
    torch = pytest.importorskip("torch")
    x, tx = torchlight.tensor(SCORES, backend="fast", requires_grad=True), torch.tensor(SCORES, requires_grad=True)
    tkwargs = {k: torch.tensor(WEIGHTS) if v == "w" else v for k, v in kwargs.items()}
    loss = F.cross_entropy(x, torchlight.tensor(LABELS, dtype=torchlight.int64, backend="fast"), **_kwargs(kwargs))
    tloss = torch.nn.functional.cross_entropy(tx, torch.tensor(LABELS), **tkwargs)
    np.testing.assert_allclose(loss.to_numpy(), tloss.detach().numpy(), rtol=1e-13)
    loss.sum().backward()
    tloss.sum().backward()
    np.testing.assert_allclose(x.grad.to_numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_a_stub_of_the_taught_code_still_raises(monkeypatch):
    """In the student edition, stage 4.4's stubs raise their message on the fused path too."""

    def stub(*args, **kwargs):
        raise NotImplementedError("Task 4.4: (input - m) - log(sum(exp(input - m)))")

    monkeypatch.setattr(fused_nn, "_taught_ran", set())
    monkeypatch.setattr(F, "log_softmax", stub)
    x = torchlight.tensor(SCORES, backend="fast")
    with pytest.raises(NotImplementedError, match="Task 4.4"):
        F.cross_entropy(x, LABELS)
