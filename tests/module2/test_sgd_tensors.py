"""Task 2.5: SGD on a model of Tensors, as torch.optim.SGD: a step changes each parameter's tensor
in place (the same Parameter, the same Tensor, the same storage), and gradients accumulate from one
backward to the next until ``zero_grad()``. (Module 1 checks the same on Scalars.)"""

import numpy as np
import pytest

import torchlight
from torchlight.nn import Module, Parameter
from torchlight.optim import SGD

pytestmark = pytest.mark.task2_5

X = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]])
W0 = np.array([[0.5, 1.0, -1.5], [2.0, -0.5, 0.75]])
B0 = np.array([0.1, -0.2, 0.3])


class Elementwise(Module):
    """loss = sum(weight * x) + sum(bias * x) + sum(bias * bias): bias (3,) broadcasts over x's rows."""

    def __init__(self):
        super().__init__()
        self.weight = Parameter(torchlight.tensor(W0, requires_grad=True))
        self.bias = Parameter(torchlight.tensor(B0, requires_grad=True))

    def loss(self):
        x = torchlight.tensor(X)
        w, b = self.weight.value, self.bias.value
        return (w * x).sum() + (b * x).sum() + (b * b).sum()


def gradients(w, b):
    """The loss's gradients at (w, b), by hand: d/dw = x, d/db = x summed over rows + 2 b."""
    return X, X.sum(0) + 2.0 * b


def test_step_changes_the_same_parameters_in_place():
    model = Elementwise()
    params = list(model.parameters())
    tensors = [p.value for p in params]
    storages = [t._data.storage for t in tensors]
    views = [t.detach() for t in tensors]  # share storage with the parameters, outside the graph
    opt = SGD(model.parameters(), lr=0.1)
    w, b = W0.copy(), B0.copy()
    for _ in range(2):  # the second step starts from the first one's values
        opt.zero_grad()
        model.loss().backward()
        opt.step()
        gw, gb = gradients(w, b)
        w, b = w - 0.1 * gw, b - 0.1 * gb
        np.testing.assert_allclose(model.weight.value.to_numpy(), w, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(model.bias.value.to_numpy(), b, rtol=1e-12, atol=1e-12)
    assert all(p is q for p, q in zip(model.parameters(), params, strict=True))
    assert all(p.value is t for p, t in zip(params, tensors, strict=True)), "step() replaced a parameter's tensor"
    assert all(t._data.storage is s for t, s in zip(tensors, storages, strict=True)), "step() gave a tensor new storage"
    np.testing.assert_array_equal(views[0].to_numpy(), w)  # a view taken before sees the new values
    np.testing.assert_array_equal(views[1].to_numpy(), b)
    for t in tensors:
        assert t.requires_grad and t.is_leaf and t.grad_fn is None  # still leaves, outside the graph


def test_gradients_accumulate_across_backward_calls_until_zero_grad():
    model = Elementwise()
    opt = SGD(model.parameters(), lr=0.1)
    gw, gb = gradients(W0, B0)
    model.loss().backward()
    np.testing.assert_allclose(model.bias.value.grad.to_numpy(), gb, rtol=1e-12)
    model.loss().backward()  # no zero_grad: the second gradient is added to the first
    np.testing.assert_allclose(model.weight.value.grad.to_numpy(), 2.0 * gw, rtol=1e-12)
    np.testing.assert_allclose(model.bias.value.grad.to_numpy(), 2.0 * gb, rtol=1e-12)
    assert model.bias.value.grad.shape == (3,)  # summed down to the parameter's shape
    opt.step()  # with the accumulated gradient, and .grad left as it is
    np.testing.assert_allclose(model.weight.value.to_numpy(), W0 - 0.1 * 2.0 * gw, rtol=1e-12)
    np.testing.assert_allclose(model.weight.value.grad.to_numpy(), 2.0 * gw, rtol=1e-12)
    opt.zero_grad()
    assert model.weight.value.grad is None and model.bias.value.grad is None
    model.loss().backward()
    _, gb_now = gradients(W0 - 0.2 * gw, B0 - 0.2 * gb)
    np.testing.assert_allclose(model.weight.value.grad.to_numpy(), gw, rtol=1e-12)
    np.testing.assert_allclose(model.bias.value.grad.to_numpy(), gb_now, rtol=1e-12)
