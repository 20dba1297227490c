"""``Tensor.norm`` and ``torchlight.norm`` (issue 22: the older 60-minute blitz doubles a vector
``while y.data.norm() < 1000``): values and gradients against PyTorch where it is installed, the
gradient at a norm of 0 (0, as PyTorch's) and ties of the inf-norm."""

import numpy as np
import pytest

import torchlight
from torchlight.autograd import gradcheck

pytestmark = pytest.mark.task4_5

X = np.random.default_rng(7).normal(size=(3, 4))
NORMS = [2, "fro", 1, 3, 0.5, float("inf"), float("-inf"), 0]
DIMS = [(None, False), (1, False), (0, True), ((0, 1), False), (-1, True)]


@pytest.mark.parametrize("p", NORMS)
@pytest.mark.parametrize("dim, keepdim", DIMS)
def test_values_and_gradients_match_pytorch(p, dim, keepdim):
    torch = pytest.importorskip("torch")
    a, b = torchlight.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    ya, yb = a.norm(p, dim, keepdim), b.norm(p, dim, keepdim)
    assert ya.shape == tuple(yb.shape)
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-13, atol=1e-15)
    g = np.random.default_rng(8).normal(size=tuple(yb.shape))
    ya.backward(torchlight.tensor(g))
    yb.backward(torch.tensor(g))
    if p == 0:  # a count: PyTorch leaves the gradient undefined (None), torchlight gives zeros
        assert b.grad is None and not a.grad.numpy().any()
    else:
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_the_function_and_out():
    x = torchlight.tensor([3.0, -4.0])
    assert torchlight.norm(x).item() == 5.0 and torchlight.norm(x, 1).item() == 7.0
    out = torchlight.zeros(())
    assert torchlight.norm(x, float("inf"), out=out) is out and out.item() == 4.0


@pytest.mark.parametrize("p", [2, 3, 1])
def test_the_gradient_at_a_norm_of_zero_is_zero(p):
    x = torchlight.zeros(3, requires_grad=True)
    x.norm(p).backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_the_inf_norms_gradient_is_shared_among_ties():
    x = torchlight.tensor([[3.0, -3.0, 1.0]], requires_grad=True)
    x.norm(float("inf"), dim=1).backward()
    assert x.grad.tolist() == [[0.5, -0.5, 0.0]]  # as PyTorch


def test_first_derivatives_by_central_differences():
    # (second derivatives are module 5's: tests/module5/test_pooling_norm_higher_order.py)
    x = torchlight.tensor(X, requires_grad=True)
    for p in (2, 3, 1, float("inf")):
        assert gradcheck(lambda t, p=p: t.norm(p, dim=1), (x,))


def test_the_blitz_doubling_loop():
    x = torchlight.randn(3, requires_grad=True)
    y = x * 2
    while y.data.norm() < 1000:
        y = y * 2
    y.backward(torchlight.tensor([0.1, 1.0, 0.0001], dtype=torchlight.float))
    factor = y.detach().numpy() / x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), factor * [0.1, 1.0, 0.0001])


def test_unsupported_norms_say_so():
    with pytest.raises(NotImplementedError, match="nuc"):
        torchlight.ones(2, 2).norm("nuc")
    with pytest.raises(TypeError, match="argument 'p'"):
        torchlight.ones(2).norm(True)
