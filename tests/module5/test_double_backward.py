"""Task 5.3: double backward. Second derivatives of every built-in op (against central
differences and PyTorch), ``backward(create_graph=True)``, ``autograd.grad`` and
``once_differentiable``."""

import inspect

import numpy as np
import pytest

import torchlight
from torchlight import ops as F
from torchlight.autograd import Function, grad, gradgradcheck, once_differentiable
from torchlight.ops import inplace as I

from .cases import CASES, COVERED, NOT_DIFFERENTIABLE
from .helpers import assert_close, torch_leaves

pytestmark = [
    pytest.mark.task5_3,
    # PyTorch warns about the reference cycle that backward(create_graph=True) makes; we mean it.
    pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True"),
]

SECOND_ORDER = [c for c in CASES if c.second_order]


def test_the_cases_cover_every_builtin_function():
    builtin = {
        cls
        for module in (F, I)
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, Function) and cls.__module__.startswith(module.__name__) and not cls.__name__.startswith("_")
    }
    assert builtin - COVERED - NOT_DIFFERENTIABLE == set()


@pytest.mark.parametrize("case", SECOND_ORDER, ids=repr)
def test_gradgradcheck_every_builtin(case):
    assert gradgradcheck(case.fn, case.tensors())


@pytest.mark.parametrize("case", SECOND_ORDER, ids=repr)
def test_second_derivatives_match_torch(torch, case):
    """d/dx <d/dx <out, v>, w> for random v, w, in both libraries."""
    arrays = case.arrays()
    xs, txs = case.tensors(), torch_leaves(torch, arrays)
    out, tout = case.fn(*xs), case.run_torch(torch, *txs)
    rng = np.random.default_rng(3)
    v = rng.standard_normal(out.shape)
    firsts = grad(out, xs, out.new_tensor(v), create_graph=True, allow_unused=True)
    tfirsts = torch.autograd.grad(tout, txs, torch.tensor(v), create_graph=True, allow_unused=True)
    for g, tg in zip(firsts, tfirsts, strict=True):
        assert_close(g, tg)
    ws = [rng.standard_normal(x.shape) for x in xs]
    live = [(g, w) for g, w in zip(firsts, ws, strict=True) if g is not None and g.requires_grad]
    tlive = [(g, w) for g, w in zip(tfirsts, ws, strict=True) if g is not None and g.requires_grad]
    seconds = (
        grad([g for g, _ in live], xs, [g.new_tensor(w) for g, w in live], allow_unused=True)
        if live
        else [None] * len(xs)
    )
    tseconds = (
        torch.autograd.grad([g for g, _ in tlive], txs, [torch.tensor(w) for _, w in tlive], allow_unused=True)
        if tlive
        else [None] * len(xs)
    )
    for g2, tg2 in zip(seconds, tseconds, strict=True):
        assert_close(g2, tg2, atol=1e-9)


def test_backward_with_create_graph_matches_torch(torch):
    a = np.array([0.3, -0.7, 1.1])
    x = torchlight.tensor(a, requires_grad=True)
    (tx,) = torch_leaves(torch, [a])
    for t in (x, tx):
        y = (t * t * t).sum() + (t.tanh() * t).sum()
        y.backward(create_graph=True)
        assert t.grad.requires_grad
        g = t.grad
        t.grad = None
        (g * g).sum().backward()  # d/dx |dy/dx|^2
    assert_close(x.grad, tx.grad)


def test_create_graph_accumulates_into_grad_like_torch(torch):
    a = np.array([0.5, 2.0])
    x = torchlight.tensor(a, requires_grad=True)
    (tx,) = torch_leaves(torch, [a])
    for t in (x, tx):
        (t * t * t).sum().backward(create_graph=True)  # grad = 3x^2, with a graph
        t.grad.sum().backward()  # adds 6x to it
    assert_close(x.grad, tx.grad)
    assert x.grad.tolist() == [3 * 0.25 + 3.0, 12.0 + 12.0]


def test_grad_returns_and_does_not_accumulate():
    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    w = torchlight.tensor([3.0, 4.0], requires_grad=True)
    y = (x * w).sum()
    gx, gw = grad(y, [x, w])
    assert gx.tolist() == [3.0, 4.0] and gw.tolist() == [1.0, 2.0]
    assert x.grad is None and w.grad is None
    assert not gx.requires_grad  # create_graph=False
    (gx_only,) = grad((x * x).sum(), [x], retain_graph=True)
    assert gx_only.tolist() == [2.0, 4.0]


def test_grad_options():
    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    unused = torchlight.tensor([1.0], requires_grad=True)
    y = x.exp().sum()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph.*allow_unused=True"):
        grad(y, [x, unused], retain_graph=True)
    gx, gu = grad(y, [x, unused], allow_unused=True, retain_graph=True)
    assert gu is None and np.allclose(gx.to_numpy(), np.exp([1.0, 2.0]))
    (g,) = grad(y, x)  # retain_graph defaults to create_graph (False): the graph is freed
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        grad(y, x)
    z = x * 2.0
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        grad(z, x)
    (gz,) = grad(z, x, grad_outputs=torchlight.tensor([1.0, -1.0]))
    assert gz.tolist() == [2.0, -2.0]
    with pytest.raises(RuntimeError, match="does not require grad"):
        grad(torchlight.tensor([1.0]).sum(), x)


def test_grad_of_several_outputs_sums_their_contributions():
    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    (g,) = grad([(x * x).sum(), (x * 3.0).sum()], [x])
    assert g.tolist() == [5.0, 7.0]


def test_hessian_vector_product_reverse_over_reverse_matches_torch(torch):
    A = np.random.default_rng(0).standard_normal((3, 3))
    a, v = np.array([0.2, -0.4, 0.9]), np.array([1.0, 0.5, -2.0])

    def f(x, lib):
        m = lib.tensor(A) if lib is torchlight else torch.tensor(A)
        return ((x @ m).sigmoid() * x).sum() + (x * x * x).sum()

    x = torchlight.tensor(a, requires_grad=True)
    (g,) = grad(f(x, torchlight), x, create_graph=True)
    (hv,) = grad((g * x.new_tensor(v)).sum(), x)
    _, thv = torch.autograd.functional.hvp(lambda t: f(t, torch), torch.tensor(a), torch.tensor(v))
    assert_close(hv, thv)


# -- once_differentiable ------------------------------------------------------------------------


def cube(base, decorate):
    class Cube(base):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        @decorate
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3.0 * x * x * g

    return Cube


def test_once_differentiable_gives_first_derivatives_like_torch(torch):
    from torch.autograd.function import once_differentiable as torch_once

    a = np.array([1.0, -2.0])
    x = torchlight.tensor(a, requires_grad=True)
    (tx,) = torch_leaves(torch, [a])
    cube(Function, once_differentiable).apply(x).sum().backward()
    cube(torch.autograd.Function, torch_once).apply(tx).sum().backward()
    assert_close(x.grad, tx.grad)


def test_once_differentiable_blocks_a_second_derivative():
    x = torchlight.tensor([1.0, -2.0], requires_grad=True)
    y = cube(Function, once_differentiable).apply(x).sum()
    (g,) = grad(y, x, create_graph=True)
    assert g.tolist() == [3.0, 12.0]
    with pytest.raises(
        RuntimeError, match="trying to differentiate twice a function that was marked with @once_differentiable"
    ):
        grad(g.sum(), x)
    # without the decorator the same backward differentiates fine
    (g,) = grad(cube(Function, lambda f: f).apply(x).sum(), x, create_graph=True)
    (h,) = grad(g.sum(), x)
    assert h.tolist() == [6.0, -12.0]


def test_map_is_first_order_only():
    from torchlight import scalar

    x = torchlight.tensor([0.5, 1.5], requires_grad=True)
    y = F.Map.apply(x, scalar.log, scalar.log_back).sum()
    (g,) = grad(y, x, create_graph=True)
    assert np.allclose(g.to_numpy(), [2.0, 1.0 / 1.5])
    with pytest.raises(RuntimeError, match="once_differentiable"):
        grad(g.sum(), x)
