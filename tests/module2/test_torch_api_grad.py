"""Gradients of PyTorch's beginner API on torchlight (issue 14): every new differentiable operation
against central differences (gradcheck), on contiguous, transposed and broadcast inputs; and the
gradient conventions where a choice is a tie (maximum, minimum, clamp, min), against PyTorch where
it is installed and against the convention written out otherwise.

Runs on the simple backend here and on fast in tests/module3/test_torch_api.py.
"""

import numpy as np
import pytest

import torchlight
from torchlight.autograd import gradcheck

pytestmark = pytest.mark.task2_4

RNG = np.random.default_rng(14)
# values at least 0.1 apart and 0.1 away from the bounds used below, so that no choice changes
# under gradcheck's nudges
A = np.array([[0.35, -1.25, 2.05], [1.45, -0.55, 0.85]])
B = np.array([-0.95, 0.15, 1.75])


def leaf(array, backend_name):
    return torchlight.tensor(np.array(array, dtype=np.float64), backend=backend_name, requires_grad=True)


# (name, fn of the module m and tensors a (2, 3), b (3,)): the same code runs on torchlight and torch
GRADS = [
    ("sin", lambda m, a, b: a.sin() * m.sin(b)),
    ("cos", lambda m, a, b: m.cos(a).T * b.cos().unsqueeze(1)),
    ("cat", lambda m, a, b: m.cat([a, b.view(1, 3), a * 2.0], dim=0) * m.arange(15.0).view(5, 3)),
    ("cat_dim1_transposed", lambda m, a, b: m.cat((a.T, b.unsqueeze(1)), 1).exp()),
    ("stack", lambda m, a, b: m.stack([a[0], b, a[1]], dim=1).sin()),
    ("repeat", lambda m, a, b: a.repeat(2, 1, 2) * m.arange(24.0).view(2, 2, 6)),
    ("repeat_transposed", lambda m, a, b: a.T.repeat(1, 3).sin()),
    ("where", lambda m, a, b: m.where(a > b, a * 3.0, b)),
    ("where_number", lambda m, a, b: m.where(a > 0, a.exp(), 0.0)),
    ("masked_fill", lambda m, a, b: (a * b).masked_fill(a < 0, 2.0)),
    ("maximum", lambda m, a, b: m.maximum(a, b) * m.arange(6.0).view(2, 3)),
    ("minimum", lambda m, a, b: b.minimum(a.T.T).exp()),
    ("clamp", lambda m, a, b: m.clamp(a, -1.0, 1.0) * a),
    ("clamp_tensor_bounds", lambda m, a, b: a.clamp(min=b - 0.5, max=b + 0.5).exp()),
    ("min", lambda m, a, b: (a * b).min()),
    ("min_dim", lambda m, a, b: a.min(0).values * b),
    ("var", lambda m, a, b: a.var(1) + (a * b).var()),
    ("std", lambda m, a, b: a.std(0, keepdim=True, unbiased=False) * b),
    ("flatten", lambda m, a, b: m.flatten(a.T).sin()),
    ("pow", lambda m, a, b: m.pow(a.abs(), b) + b.pow(2)),
]


@pytest.mark.parametrize("name, fn", GRADS, ids=[g[0] for g in GRADS])
def test_gradcheck(backend_name, name, fn):
    assert gradcheck(lambda a, b: fn(torchlight, a, b), [leaf(A, backend_name), leaf(B, backend_name)])


@pytest.mark.parametrize("name, fn", GRADS, ids=[g[0] for g in GRADS])
def test_values_and_gradients_match_torch(name, fn):
    torch = pytest.importorskip("torch")
    a, b = leaf(A, None), leaf(B, None)
    ta, tb = (torch.tensor(x, requires_grad=True) for x in (A, B))
    out, tout = fn(torchlight, a, b), fn(torch, ta, tb)
    np.testing.assert_allclose(out.to_numpy(), tout.detach().numpy(), rtol=1e-12, atol=1e-14)
    v = RNG.standard_normal(out.shape)
    out.backward(torchlight.tensor(v))
    tout.backward(torch.tensor(v, dtype=tout.dtype))
    for x, tx in ((a, ta), (b, tb)):
        if tx.grad is None:  # an input the function does not use
            assert x.grad is None
        else:
            np.testing.assert_allclose(x.grad.to_numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-14)


# -- where the choice is a tie: PyTorch's conventions ----------------------------------------------

# (name, fn, inputs, expected gradients of fn(...).sum() for each input)
TIES = [
    # maximum and minimum split a tie evenly; nan passes the gradient to both
    (
        "maximum",
        lambda m, a, b: m.maximum(a, b),
        ([1.0, 2.0, 3.0], [1.0, 5.0, 0.0]),
        ([0.5, 0.0, 1.0], [0.5, 1.0, 0.0]),
    ),
    (
        "minimum",
        lambda m, a, b: m.minimum(a, b),
        ([1.0, 2.0, 3.0], [1.0, 5.0, 0.0]),
        ([0.5, 1.0, 0.0], [0.5, 0.0, 1.0]),
    ),
    ("maximum_nan", lambda m, a, b: m.maximum(a, b), ([float("nan"), 2.0], [1.0, 1.0]), ([1.0, 1.0], [1.0, 0.0])),
    # clamp passes the gradient at the bounds themselves (min <= x <= max)
    ("clamp", lambda m, a: a.clamp(-1.0, 1.0), ([-1.0, 1.0, 2.0, -3.0, 0.5],), ([1.0, 1.0, 0.0, 0.0, 1.0],)),
    # a tensor bound gets the gradient where it was taken
    (
        "clamp_tensor",
        lambda m, a, lo: a.clamp(min=lo),
        ([0.0, 1.0, 2.0], [1.0, 1.0, 1.0]),
        ([0.0, 1.0, 1.0], [1.0, 0.0, 0.0]),
    ),
    # min of all elements shares the gradient evenly among ties (as max does); min(dim) gives it to one
    ("min_ties", lambda m, a: a.min(), ([2.0, 1.0, 1.0, 3.0],), ([0.0, 0.5, 0.5, 0.0],)),
    ("min_dim_ties", lambda m, a: a.min(0).values, ([2.0, 1.0, 1.0, 3.0],), ([0.0, 1.0, 0.0, 0.0],)),
    # where: the side not taken gets a gradient of exactly 0, which a derivative of inf there turns
    # into nan (0 * inf), in PyTorch as here: the known trap of where(x > 0, x.sqrt(), ...)
    (
        "where",
        lambda m, a, b: m.where(a > 0, a.sqrt(), b.log()),
        ([0.0, 4.0], [0.0, -1.0]),
        ([float("nan"), 0.25], [float("inf"), 0.0]),
    ),
]


@pytest.mark.parametrize("name, fn, inputs, expected", TIES, ids=[t[0] for t in TIES])
def test_gradient_conventions_at_ties(backend_name, name, fn, inputs, expected):
    xs = [leaf(x, backend_name) for x in inputs]
    fn(torchlight, *xs).sum().backward()
    for x, want in zip(xs, expected, strict=True):
        np.testing.assert_array_equal(x.grad.to_numpy(), np.array(want))


@pytest.mark.parametrize("name, fn, inputs, expected", TIES, ids=[t[0] for t in TIES])
def test_gradient_conventions_at_ties_match_torch(name, fn, inputs, expected):
    torch = pytest.importorskip("torch")
    xs = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in inputs]
    fn(torch, *xs).sum().backward()
    for x, want in zip(xs, expected, strict=True):
        np.testing.assert_array_equal(x.grad.numpy(), np.array(want))


def test_cat_gives_no_gradient_to_inputs_that_need_none(backend_name):
    a = leaf(A, backend_name)
    const = torchlight.tensor(B, backend=backend_name).view(1, 3)
    out = torchlight.cat([const, a, const])
    assert out.requires_grad and out.grad_fn is torchlight.ops.Cat
    (out * out).sum().backward()
    np.testing.assert_allclose(a.grad.to_numpy(), 2 * A)
    assert const.grad is None


def test_conversions_and_comparisons_leave_the_graph(backend_name):
    a = leaf(A, backend_name)
    assert not a.long().requires_grad and not (a > 0).requires_grad and not a.argmax().requires_grad
    assert a.double().requires_grad and a.float() is a
    assert a.to("simple").requires_grad


def test_a_parameter_given_to_a_function_gets_its_gradient(backend_name):
    class ScaledSquare(torchlight.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x * w * w

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g * w * w, (g * 2.0 * x * w).sum()

    w = torchlight.nn.Parameter(torchlight.tensor(3.0, backend=backend_name))
    x = leaf(B, backend_name)
    out = ScaledSquare.apply(x, w)  # as PyTorch's custom layers pass self.weight
    assert out.grad_fn is ScaledSquare
    out.sum().backward()
    np.testing.assert_allclose(x.grad.to_numpy(), np.full(3, 9.0))
    assert w.grad.item() == pytest.approx(2.0 * 3.0 * B.sum())


def test_a_parameter_stands_for_its_tensor(backend_name):
    p = torchlight.nn.Parameter(torchlight.tensor(A, backend=backend_name))
    x = torchlight.tensor(B, backend=backend_name)
    assert p.shape == (2, 3) and p.requires_grad and p.dtype is torchlight.float64 and p.ndim == 2
    _assert_values(p * x + 1.0, A * B + 1.0)
    _assert_values(2.0 - p / x, 2.0 - A / B)
    _assert_values(-(x.abs() ** p), -(np.abs(B) ** A))
    assert p[1, 2].item() == A[1, 2] and float(p[0, 0]) == A[0, 0]
    assert torchlight.cat([p, p]).shape == (4, 3) and torchlight.stack([p[0], x]).shape == (2, 3)
    _assert_values(torchlight.where(p > 0, p, x), np.where(A > 0, A, B))
    _assert_values(torchlight.sin(p), np.sin(A))
    (p * p).sum().backward()
    assert p.grad is p.value.grad
    value = p.value
    with torchlight.no_grad():
        p -= 0.5 * p.grad  # PyTorch's manual update: the parameter's tensor changes in place
    assert p.value is value and np.allclose(value.to_numpy(), A - A)
    p.grad = None
    assert value.grad is None


def _assert_values(t, expected):
    np.testing.assert_allclose(t.to_numpy(), np.asarray(expected, dtype=np.float64), rtol=1e-12, atol=1e-14)
