"""Module 5 on module 4's convolutions and pools: Unfold and Fold are linear and each other's
adjoint, so each is the other's backward and its own jvp; conv1d, conv2d and the pools, composed
of them, of matmul and of reductions, have second derivatives (stage 5.3) and forward-mode
derivatives (stage 5.4) with no code of their own. (Values and first derivatives are stages
4.1-4.3's: tests/module4/test_conv1d.py, test_conv2d.py, test_pooling.py.)
"""

import numpy as np
import pytest

import torchlight
from torchlight.autograd import forward_ad, functional, grad, gradcheck, gradgradcheck
from torchlight.ops.conv import Fold, Unfold, conv1d, conv2d
from torchlight.ops.pooling import avg_pool2d, max_pool2d

from .helpers import assert_close, torch_leaves

BACKENDS = ["simple", "fast"]

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")  # inside torch.func

rng = np.random.default_rng(45)
X1, W1, B1 = rng.standard_normal((1, 2, 5)), rng.standard_normal((2, 2, 3)), rng.standard_normal(2)
X2, W2, B2 = rng.standard_normal((1, 2, 4, 3)), rng.standard_normal((2, 2, 2, 2)), rng.standard_normal(2)
COLS = rng.standard_normal((1, 2 * 2 * 2, 5))  # fold: 5 x 1 windows of 2x2 make a (1, 2, 4, 3) output
# distinct values at least 0.1 apart, so that each window's maximum stays put under nudges
POOLED = (rng.permutation(32) * 0.1 - 1.6).reshape(1, 2, 4, 4)

# (name, function, inputs, the same function in PyTorch)
CASES = [
    (
        "conv1d",
        lambda x, w, b: conv1d(x, w, b, stride=2, padding=1),
        (X1, W1, B1),
        lambda F, x, w, b: F.conv1d(x, w, b, stride=2, padding=1),
    ),
    (
        "conv2d",
        lambda x, w, b: conv2d(x, w, b, stride=(1, 2), padding=(1, 0)),
        (X2, W2, B2),
        lambda F, x, w, b: F.conv2d(x, w, b, stride=(1, 2), padding=(1, 0)),
    ),
    (
        "unfold",
        lambda x: Unfold.apply(x, (2, 2), (1, 2), (1, 0)),
        (X2,),
        lambda F, x: F.unfold(x, (2, 2), padding=(1, 0), stride=(1, 2)),
    ),
    (
        "fold",
        lambda c: Fold.apply(c, (4, 3), (2, 2), (1, 2), (1, 0)),
        (COLS,),
        lambda F, c: F.fold(c, (4, 3), (2, 2), padding=(1, 0), stride=(1, 2)),
    ),
    ("max_pool2d", lambda x: max_pool2d(x, 2), (POOLED,), lambda F, x: F.max_pool2d(x, 2)),
    ("max_pool2d_padded", lambda x: max_pool2d(x, 3, 2, 1), (POOLED,), lambda F, x: F.max_pool2d(x, 3, 2, 1)),
    (
        "avg_pool2d",
        lambda x: avg_pool2d(x, (2, 1), 1, (1, 0)),
        (POOLED,),
        lambda F, x: F.avg_pool2d(x, (2, 1), 1, (1, 0)),
    ),
]
NAMES = [c[0] for c in CASES]


def _case(name, backend):
    _, fn, arrays, torch_fn = next(c for c in CASES if c[0] == name)
    return fn, [torchlight.tensor(a, backend=backend, requires_grad=True) for a in arrays], arrays, torch_fn


@pytest.mark.task5_3
@pytest.mark.parametrize("name", NAMES)
def test_second_derivatives(backend_name, name):
    fn, leaves, _, _ = _case(name, backend_name)
    assert gradgradcheck(fn, leaves)


@pytest.mark.task5_3
@pytest.mark.parametrize("name", ["conv1d", "conv2d"])
def test_second_derivatives_match_torch(backend_name, name, torch):
    """d/dx <d/dx <out, v>, u> in both libraries: the mixed terms of weight and input."""
    fn, leaves, arrays, torch_fn = _case(name, backend_name)
    tleaves = torch_leaves(torch, arrays)
    out, tout = fn(*leaves), torch_fn(torch.nn.functional, *tleaves)
    v = np.random.default_rng(1).standard_normal(out.shape)
    firsts = grad(out, leaves, out.new_tensor(v), create_graph=True)
    tfirsts = torch.autograd.grad(tout, tleaves, torch.tensor(v), create_graph=True)
    us = [np.random.default_rng(2 + i).standard_normal(a.shape) for i, a in enumerate(arrays)]
    live = [(g, u) for g, u in zip(firsts, us, strict=True) if g.requires_grad]  # the bias's gradient is constant
    tlive = [(g, u) for g, u in zip(tfirsts, us, strict=True) if g.requires_grad]
    seconds = grad([g for g, _ in live], leaves, [g.new_tensor(u) for g, u in live], allow_unused=True)
    tseconds = torch.autograd.grad(
        [g for g, _ in tlive], tleaves, [torch.tensor(u) for _, u in tlive], allow_unused=True
    )
    for s, ts in zip(seconds, tseconds, strict=True):
        assert_close(s, ts)


@pytest.mark.task5_4
@pytest.mark.parametrize("name", NAMES)
def test_forward_mode(backend_name, name):
    fn, leaves, _, _ = _case(name, backend_name)
    assert gradcheck(fn, leaves, check_forward_ad=True)


@pytest.mark.task5_4
@pytest.mark.parametrize("name", NAMES)
def test_forward_mode_matches_torch_func_jvp(backend_name, name, torch):
    fn, _, arrays, torch_fn = _case(name, backend_name)
    tangents = [np.random.default_rng(7).standard_normal(a.shape) for a in arrays]
    inputs = tuple(torchlight.tensor(a, backend=backend_name) for a in arrays)
    out, jvp = functional.jvp(fn, inputs, tuple(torchlight.tensor(t, backend=backend_name) for t in tangents))
    tout, tjvp = torch.func.jvp(
        lambda *a: torch_fn(torch.nn.functional, *a),
        tuple(torch_leaves(torch, arrays, requires_grad=False)),
        tuple(torch_leaves(torch, tangents, requires_grad=False)),
    )
    assert_close(out, tout)
    assert_close(jvp, tjvp)


@pytest.mark.task5_4
def test_unfold_carries_a_tangent_through_a_dual_level(backend_name):
    x = torchlight.tensor(X2, backend=backend_name)
    t = np.random.default_rng(8).standard_normal(X2.shape)
    with forward_ad.dual_level():
        out = Unfold.apply(forward_ad.make_dual(x, torchlight.tensor(t, backend=backend_name)), (2, 2), (1, 1), (0, 0))
        tangent = forward_ad.unpack_dual(out).tangent
    expected = Unfold.apply(torchlight.tensor(t, backend=backend_name), (2, 2), (1, 1), (0, 0))
    np.testing.assert_array_equal(tangent.to_numpy(), expected.to_numpy())
