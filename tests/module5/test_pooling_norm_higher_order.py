"""Module 5 on issue 22's module 4 names: adaptive pooling in 1 and 3 dimensions and ``norm`` (and
``std``, whose square root the 2-norm shares) are composed of differentiable operations (and, for
the roots, Functions whose backward and jvp are themselves differentiable), so they have second
derivatives (stage 5.3) and forward-mode derivatives (stage 5.4), checked by central differences.
(Their values and first derivatives are module 4's: tests/module4/test_adaptive_pool_nd.py and
test_norm.py.)"""

import numpy as np
import pytest

import torchlight
import torchlight.nn.functional as F
from torchlight.autograd import gradcheck, gradgradcheck

rng = np.random.default_rng(11)
VOLUME = rng.normal(size=(1, 2, 4, 3, 5))
SIGNAL = rng.normal(size=(2, 3, 7))
MATRIX = rng.normal(size=(3, 4))

FUNCTIONS = [
    ("avg3d", VOLUME, lambda t: F.adaptive_avg_pool3d(t, (3, 2, 2))),
    ("max3d", VOLUME, lambda t: F.adaptive_max_pool3d(t, (3, 2, 2))),
    ("avg1d", SIGNAL, lambda t: F.adaptive_avg_pool1d(t * t, 3)),
    ("max1d", SIGNAL, lambda t: F.adaptive_max_pool1d(t * t, 3)),
    ("norm2", MATRIX, lambda t: t.norm(dim=1)),
    ("norm3", MATRIX, lambda t: t.norm(3, dim=0, keepdim=True)),
    ("norm1", MATRIX, lambda t: torchlight.norm(t * t, 1)),
    ("norm_inf", MATRIX, lambda t: (t * t).norm(float("inf"), dim=1)),
    ("std", MATRIX, lambda t: t.std(dim=1)),  # the same root as the 2-norm's (it had no jvp before)
]


@pytest.mark.task5_3
@pytest.mark.parametrize("name, values, fn", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_second_derivatives(name, values, fn):
    x = torchlight.tensor(values, requires_grad=True)
    assert gradgradcheck(fn, (x,))


@pytest.mark.task5_4
@pytest.mark.parametrize("name, values, fn", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_forward_mode(name, values, fn):
    x = torchlight.tensor(values, requires_grad=True)
    assert gradcheck(fn, (x,), check_forward_ad=True)
