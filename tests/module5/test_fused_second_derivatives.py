"""Stage 5.3: the fused operations of module 3 have second derivatives, as their compositions do.

(Their values and first derivatives are stage 3.6's: tests/module3/test_fused.py.)
"""

import numpy as np
import pytest

import torchlight
from torchlight import ops
from torchlight.autograd import gradgradcheck

pytestmark = pytest.mark.task5_3

BACKENDS = ["simple", "fast"]

rng = np.random.default_rng(1)
A = rng.uniform(-2, 2, (2, 3))
B = rng.uniform(0.5, 2, (3,)) * rng.choice([-1, 1], (3,))  # away from 0: b divides
W = rng.uniform(-1, 1, (4, 3))
BIAS = rng.uniform(-1, 1, (4,))


def _composed_linear(x, weight, bias):
    return x @ weight.T + bias


@pytest.mark.parametrize(
    "composed, fused, arrays",
    [
        (ops.sub, ops.Sub.apply, (A, B)),
        (ops.div, ops.Div.apply, (A, B)),
        (ops.tanh, ops.Tanh.apply, (A,)),
        (_composed_linear, ops.Linear.apply, (A, W, BIAS)),
    ],
    ids=["sub", "div", "tanh", "linear"],
)
def test_fused_ops_have_the_second_derivatives_of_their_composition(backend_name, composed, fused, arrays):
    leaves = [torchlight.tensor(a, backend=backend_name, requires_grad=True) for a in arrays]
    assert gradgradcheck(composed, leaves) and gradgradcheck(fused, leaves)
