"""Task 4.3, the library's fused path: ``F.max_pool2d`` and ``nn.MaxPool2d`` take one kernel for
side-by-side windows on the fast backend (ops/fused_nn.py, backends/fast_nn.py), and give what the
taught ``ops.pooling.max_pool2d`` gives: the same values and gradients, bit for bit (ties, signed
zeros, nan and infinities included), on strided, cropped and unbatched inputs, serially and in
parallel; gradients by central differences and against PyTorch; and in the student edition the
taught code's stub still raises where the fused path stands in for it.

(Second derivatives and forward mode: tests/module5/test_fused_pool_loss_higher_order.py.)
"""

import numpy as np
import pytest

import torchlight
from torchlight.autograd import gradcheck
from torchlight.backends import fast_nn
from torchlight.nn import MaxPool2d
from torchlight.nn import functional as F
from torchlight.ops import fused_nn, pooling

from . import conv_reference as ref

pytestmark = pytest.mark.task4_3


def _bits(a):
    """The float64 values' bits: equal bits are the same float, -0.0 and nan payloads included."""
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


def _same(fused, taught, what):
    assert fused.shape == taught.shape, what
    np.testing.assert_array_equal(_bits(fused), _bits(taught), err_msg=f"{what}: the fused path differs in bits")


def _awkward(shape, seed):
    """Values with every edge the maximum has: ties, 0.0 beside -0.0, -inf, inf, nan, repeats."""
    rng = np.random.default_rng(seed)
    pool = np.array([0.0, -0.0, 1.0, 1.0, -1.0, -np.inf, np.inf, np.nan, 2.5, -2.5])
    x = rng.standard_normal(shape)
    pick = rng.random(shape) < 0.5
    x[pick] = rng.choice(pool, size=int(pick.sum()))
    return x


def _both(x, kernel, g, backend="fast", stride=None, make=None):
    """(values, gradient) of the fused path (F.max_pool2d) and of the taught one, on x and with g."""
    results = []
    for fn in (F.max_pool2d, pooling.max_pool2d):
        leaf = torchlight.tensor(x, backend=backend, requires_grad=True)
        inp = leaf if make is None else make(leaf)
        out = fn(inp, kernel, stride)
        out.backward(torchlight.tensor(g, backend=backend))
        results.append((out.to_numpy(), leaf.grad.to_numpy()))
    return results


# (input shape, kernel): square and oblong blocks, sizes left over (cropped), 1 x 1, one block
CASES = [
    ((2, 3, 4, 6), 2),
    ((1, 2, 6, 6), (3, 2)),
    ((2, 2, 5, 7), 2),
    ((1, 1, 4, 4), 1),
    ((3, 2, 3, 3), 3),
    ((2, 1, 8, 4), (1, 4)),
]


@pytest.mark.parametrize("shape, kernel", CASES, ids=[f"{s}-k{k}" for s, k in CASES])
def test_fused_max_pool_is_the_taught_one_to_the_bit(shape, kernel):
    x = _awkward(shape, seed=sum(shape))
    kh, kw = (kernel, kernel) if isinstance(kernel, int) else kernel
    g = np.random.default_rng(1).standard_normal(shape[:2] + (shape[2] // kh, shape[3] // kw))
    g.flat[:3] = [-1.0, np.inf, -0.0]  # -0.0, nan and -0.0 beside the maxima of their blocks, as g * one_hot
    (fused, fused_grad), (taught, taught_grad) = _both(x, kernel, g)
    _same(fused, taught, "values")
    _same(fused_grad, taught_grad, "gradient")
    # and the taught path on the simple backend (the executable spec) agrees as well
    (_, _), (spec, spec_grad) = _both(x, kernel, g, backend="simple")
    _same(fused, spec, "values against the simple backend")
    _same(fused_grad, spec_grad, "gradient against the simple backend")


def test_fused_path_is_the_one_taken_on_fast_only():
    x = torchlight.tensor(np.random.default_rng(2).standard_normal((1, 2, 4, 4)), backend="fast", requires_grad=True)
    assert F.max_pool2d(x, 2).grad_fn is fused_nn.MaxPool2dBlocks
    assert MaxPool2d(2)(x).grad_fn is fused_nn.MaxPool2dBlocks
    assert F.max_pool2d(x, 2, 2, 0).grad_fn is fused_nn.MaxPool2dBlocks
    # overlapping or padded windows, and the simple backend, run the taught composition
    assert F.max_pool2d(x, 2, 1).grad_fn is not fused_nn.MaxPool2dBlocks
    assert F.max_pool2d(x, 2, 2, 1).grad_fn is not fused_nn.MaxPool2dBlocks
    s = torchlight.tensor(x.to_numpy(), backend="simple", requires_grad=True)
    assert F.max_pool2d(s, 2).grad_fn is not fused_nn.MaxPool2dBlocks


def test_strided_and_unbatched_inputs():
    x = _awkward((2, 3, 6, 4), seed=7)
    rng = np.random.default_rng(8)
    # a permuted view (N and C swapped, H and W swapped: no stride is 1 along W), an unbatched
    # (C, H, W) input, and a slice of rows
    for what, data, make, out_shape in [
        ("a permuted input", x, lambda t: t.permute(1, 0, 3, 2), (3, 2, 2, 3)),
        ("an unbatched input", x[0], None, (3, 3, 2)),
        ("a slice", x, lambda t: t[:, :, 1:5], (2, 3, 2, 2)),
    ]:
        g = rng.standard_normal(out_shape)
        (fused, fused_grad), (taught, taught_grad) = _both(data, 2, g, make=make)
        _same(fused, taught, f"values of {what}")
        _same(fused_grad, taught_grad, f"gradient of {what}")
    fused = F.max_pool2d(torchlight.tensor(x, backend="fast").permute(1, 0, 3, 2), 2).to_numpy()
    np.testing.assert_array_equal(fused, ref.pool(x.transpose(1, 0, 3, 2), 2, None, 0, "max"))


def test_an_expanded_gradient():
    """sum().backward() hands the pool a gradient with stride 0 everywhere."""
    x = _awkward((2, 2, 4, 4), seed=9)
    grads = []
    for fn in (F.max_pool2d, pooling.max_pool2d):
        leaf = torchlight.tensor(x, backend="fast", requires_grad=True)
        fn(leaf, 2).sum().backward()
        grads.append(leaf.grad.to_numpy())
    _same(grads[0], grads[1], "gradient of sum()")


def test_parallel_path(monkeypatch):
    x = _awkward((4, 3, 8, 6), seed=10)
    g = np.random.default_rng(11).standard_normal((4, 3, 4, 3))
    serial = _both(x, 2, g)[0]
    monkeypatch.setattr(fast_nn, "PARALLEL_THRESHOLD", 0)
    monkeypatch.setattr(fast_nn.numba, "get_num_threads", lambda: 2)
    parallel = _both(x, 2, g)[0]
    _same(parallel[0], serial[0], "values on the parallel path")
    _same(parallel[1], serial[1], "gradient on the parallel path")


def test_empty_batch():
    x = torchlight.tensor(np.zeros((0, 2, 4, 4)), backend="fast", requires_grad=True)
    out = F.max_pool2d(x, 2)
    assert out.shape == (0, 2, 2, 2)
    out.sum().backward()
    assert x.grad.shape == (0, 2, 4, 4)


@pytest.mark.parametrize("kernel", [2, (2, 1), (1, 3)])
def test_fused_gradcheck(kernel):
    rng = np.random.default_rng(12)
    x = (rng.permutation(2 * 2 * 4 * 6) * 0.1).reshape(2, 2, 4, 6)  # distinct: nudges keep each maximum
    leaf = torchlight.tensor(x, backend="fast", requires_grad=True)
    assert gradcheck(lambda a: F.max_pool2d(a, kernel), [leaf])
    assert gradcheck(lambda a: MaxPool2d(kernel)(a.relu()), [leaf])


def test_fused_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(13).standard_normal((3, 4, 6, 8))
    x[0, 0, 0, :2] = x[0, 0, 1, 0] = 5.0  # a tie: the gradient goes to the first maximum
    leaf, tleaf = torchlight.tensor(x, backend="fast", requires_grad=True), torch.tensor(x, requires_grad=True)
    out, tout = MaxPool2d(2)(leaf), torch.nn.MaxPool2d(2)(tleaf)
    np.testing.assert_array_equal(out.to_numpy(), tout.detach().numpy())
    g = np.random.default_rng(14).standard_normal(out.shape)
    out.backward(torchlight.tensor(g, backend="fast"))
    tout.backward(torch.tensor(g))
    np.testing.assert_array_equal(leaf.grad.to_numpy(), tleaf.grad.numpy())


def test_errors_are_the_taught_ones():
    x = torchlight.tensor(np.ones((1, 2, 3, 3)), backend="fast")
    for args, error, match in [
        ((x, 4), RuntimeError, "Output size is too small"),
        ((x, 0), RuntimeError, "kernel_size must be greater than zero"),
        ((torchlight.tensor(np.ones((3, 3)), backend="fast"), 2), RuntimeError, "Expected 3D or 4D"),
        ((np.ones((1, 1, 2, 2)), 2), TypeError, "must be Tensor"),
    ]:
        with pytest.raises(error, match=match):
            pooling.max_pool2d(*args)
        with pytest.raises(error, match=match):
            F.max_pool2d(*args)
    with pytest.raises(NotImplementedError, match="dilation"):
        F.max_pool2d(x, 2, dilation=2)
    with pytest.raises(NotImplementedError, match="return_indices"):
        F.max_pool2d(x, 2, return_indices=True)


def test_a_stub_of_the_taught_code_still_raises(monkeypatch):
    """In the student edition, stage 4.3's stub raises its message on the fused path too."""

    def stub(*args, **kwargs):
        raise NotImplementedError("Task 4.3: the maximum of each window; see the notebook")

    monkeypatch.setattr(fused_nn, "_taught_ran", set())
    monkeypatch.setattr(pooling, "tile", stub)
    x = torchlight.tensor(np.ones((1, 1, 4, 4)), backend="fast")
    with pytest.raises(NotImplementedError, match="Task 4.3"):
        F.max_pool2d(x, 2)
    with pytest.raises(NotImplementedError, match="Task 4.3"):
        MaxPool2d(2)(x)
