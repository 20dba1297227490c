"""Task 3.6: the fused operations (ops/fused.py) compute what their composed versions compute.

Module 2 composes sub, div, tanh and linear of primitives; module 3 fuses each into one Function
for speed, and Tensor's operators and nn.Linear use the fused ones. Here each pair must agree in
values and in gradients, and both must pass gradcheck, on every backend.
"""

import numpy as np
import pytest

import torchlight
from torchlight import ops
from torchlight.autograd import gradcheck
from torchlight.nn import Linear

pytestmark = pytest.mark.task3_6

BACKENDS = ["simple", "fast"]

rng = np.random.default_rng(0)
A = rng.uniform(-2, 2, (2, 3))
B = rng.uniform(0.5, 2, (3,)) * rng.choice([-1, 1], (3,))  # away from 0: b divides


def _leaves(backend, *arrays):
    return [torchlight.tensor(a, backend=backend, requires_grad=True) for a in arrays]


def _same_values_and_gradients(composed, fused, leaves):
    """composed(*leaves) and fused(*leaves) agree, and so do the gradients of their weighted sum."""
    weights = torchlight.tensor(rng.uniform(-1, 1, composed(*leaves).shape), backend=leaves[0].backend)
    grads = []
    for f in (composed, fused):
        for x in leaves:
            x.grad = None
        out = f(*leaves)
        (out * weights).sum().backward()
        grads.append([x.grad.to_numpy() for x in leaves])
    np.testing.assert_allclose(composed(*leaves).to_numpy(), fused(*leaves).to_numpy(), rtol=1e-12, atol=1e-12)
    for g_composed, g_fused in zip(*grads, strict=True):
        np.testing.assert_allclose(g_composed, g_fused, rtol=1e-12, atol=1e-12)


PAIRS = [
    ("sub", ops.sub, ops.Sub.apply, (A, B)),
    ("div", ops.div, ops.Div.apply, (A, B)),
    ("tanh", ops.tanh, ops.Tanh.apply, (A,)),
]


@pytest.mark.parametrize("name, composed, fused, arrays", PAIRS, ids=[p[0] for p in PAIRS])
def test_fused_elementwise_ops_equal_their_composition(backend_name, name, composed, fused, arrays):
    leaves = _leaves(backend_name, *arrays)
    _same_values_and_gradients(composed, fused, leaves)
    assert gradcheck(composed, leaves) and gradcheck(fused, leaves)
    # (their second derivatives are stage 5.3's: tests/module5/test_fused_second_derivatives.py)


def test_tensor_operators_use_the_fused_ops(backend_name):
    a, b = _leaves(backend_name, A, B)
    assert (a - b).grad_fn is ops.Sub and (a / b).grad_fn is ops.Div and a.tanh().grad_fn is ops.Tanh


def _composed_linear(x, weight, bias=None):
    y = x @ weight.T
    return y if bias is None else y + bias


@pytest.mark.parametrize("x_shape", [(3,), (2, 3), (2, 2, 3)], ids=str)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
def test_fused_linear_equals_x_at_weight_t_plus_bias(backend_name, x_shape, bias):
    arrays = [rng.uniform(-1, 1, x_shape), rng.uniform(-1, 1, (4, 3))] + ([rng.uniform(-1, 1, (4,))] if bias else [])
    leaves = _leaves(backend_name, *arrays)
    _same_values_and_gradients(_composed_linear, ops.Linear.apply, leaves)
    assert gradcheck(_composed_linear, leaves) and gradcheck(ops.Linear.apply, leaves)


def test_nn_linear_computes_the_same_either_way(backend_name, monkeypatch):
    """Linear.fused switches between the module 3 Function and module 2's ``x @ W.T + b`` (on
    the compiled backends; the simple backend always runs the composed one)."""
    layer = Linear(3, 4, backend=backend_name, seed=0)
    x = torchlight.tensor(rng.uniform(-1, 1, (5, 3)), backend=backend_name)
    results = {}
    for fused in (True, False):
        monkeypatch.setattr(Linear, "fused", fused)
        layer.zero_grad()
        out = layer(x)
        out.sum().backward()
        # module 2 teaches on the simple backend: there the layer keeps the composed map
        assert out.grad_fn is (ops.Linear if fused and backend_name != "simple" else ops.Add)
        results[fused] = [out.to_numpy()] + [p.value.grad.to_numpy() for p in layer.parameters()]
    for a, b in zip(results[True], results[False], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
