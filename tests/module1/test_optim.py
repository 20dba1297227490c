"""Task 1.5: SGD changes parameters in place, as torch.optim.SGD does, for Scalars and Tensors.

A step keeps the model's Scalar and Tensor objects and leaves ``.grad`` alone; ``zero_grad()``
clears it, and without it gradients accumulate from one backward to the next.
"""

import pytest

import torchlight
from torchlight import Scalar
from torchlight.nn import Module, Parameter
from torchlight.optim import SGD

pytestmark = pytest.mark.task1_5


class TwoWeights(Module):
    """loss = w * 3 + b * b, with w a Scalar or a 1-element Tensor."""

    def __init__(self, make):
        super().__init__()
        self.w = Parameter(make(1.0))
        self.b = Parameter(make(2.0))

    def loss(self):
        out = self.w.value * 3.0 + self.b.value * self.b.value
        return out if isinstance(out, Scalar) else out.sum()


def scalar(v):
    return Scalar(v)


# The same checks on Tensors belong to module 2 (stage 1.5 must not need module 2's code);
# tests/module2/test_training.py checks SGD's momentum on tensors.
def tensor(v):
    return torchlight.tensor([v])


def value(x):
    return x.data if isinstance(x, Scalar) else x.item()


def grad(x):
    return x.grad if isinstance(x, Scalar) else x.grad.item()


@pytest.mark.parametrize("make", [scalar])
def test_step_keeps_the_same_parameter_objects(make):
    model = TwoWeights(make)
    before = [p.value for p in model.parameters()]
    opt = SGD(model.parameters(), lr=0.1)
    model.loss().backward()
    opt.step()
    assert all(p.value is v for p, v in zip(model.parameters(), before, strict=True))
    assert value(model.w.value) == pytest.approx(1.0 - 0.1 * 3.0)
    assert value(model.b.value) == pytest.approx(2.0 - 0.1 * 4.0)
    assert model.w.value.requires_grad and model.w.value.history.last_fn is None  # still a leaf


@pytest.mark.parametrize("make", [scalar])
def test_gradients_accumulate_until_zero_grad(make):
    model = TwoWeights(make)
    opt = SGD(model.parameters(), lr=0.1)
    model.loss().backward()
    opt.step()
    assert grad(model.w.value) == pytest.approx(3.0), "step() leaves .grad alone, as PyTorch"
    model.loss().backward()  # no zero_grad: the new gradient is added to the old one
    assert grad(model.w.value) == pytest.approx(6.0)
    opt.zero_grad()
    assert model.w.value.grad is None and model.b.value.grad is None
    model.loss().backward()
    assert grad(model.w.value) == pytest.approx(3.0)


@pytest.mark.parametrize("make", [scalar])
def test_momentum_follows_torch_formula(make):
    model = TwoWeights(make)
    opt = SGD([model.w], lr=0.1, momentum=0.5)
    for expected in [0.7, 0.25]:  # velocity 3, then 0.5 * 3 + 3 = 4.5
        opt.zero_grad()
        model.loss().backward()
        opt.step()
        assert value(model.w.value) == pytest.approx(expected)


def test_a_scalar_in_the_graph_changes_in_place_only_under_no_grad():
    w = Scalar(1.0)
    with pytest.raises(RuntimeError, match="no_grad"):
        w.sub_(0.5)
    with torchlight.no_grad():
        assert w.sub_(2.0, alpha=0.25) is w
    assert w.data == 0.5
