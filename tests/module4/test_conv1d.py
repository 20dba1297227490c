"""Task 4.1: conv1d, as unfold (the simple backend's 1-D window loop), its adjoint fold, and one
matrix product; the Conv1d layer.

Values against a direct numpy loop and against PyTorch (float64, where installed), gradients by
central differences (gradcheck) and against PyTorch, strided and permuted inputs, stride and
padding, both backends, and PyTorch's errors. (Second derivatives and forward mode are module 5's:
tests/module5/test_conv_higher_order.py.)
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import torchlight
from torchlight.autograd import gradcheck
from torchlight.backends import fast_conv, simple
from torchlight.nn.conv import Conv1d
from torchlight.ops.conv import Fold, Unfold, conv1d

from . import conv_reference as ref

pytestmark = pytest.mark.task4_1

BACKENDS = ["simple", "fast"]

# (input shape, weight shape, stride, padding, bias): the simple backend is pure Python, so tiny.
CASES = [
    ((2, 3, 7), (4, 3, 3), 1, 0, True),
    ((2, 3, 7), (4, 3, 3), 2, 1, True),
    ((1, 2, 6), (3, 2, 2), 3, 2, False),  # the last window reaches into the padding only partly
    ((2, 1, 5), (2, 1, 5), 1, 0, True),  # the kernel as wide as the input: one window
    ((1, 2, 4), (2, 2, 1), 1, 0, True),  # a 1-wide kernel: a matrix product per position
    ((1, 1, 3), (1, 1, 3), 1, 2, True),  # more padding than input: windows of zeros at the ends
]
IDS = [f"{x}*{w}-s{s}-p{p}" + ("" if b else "-nobias") for x, w, s, p, b in CASES]


def _arrays(case, seed=0):
    x_shape, w_shape, _, _, has_bias = case
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal(x_shape),
        rng.standard_normal(w_shape),
        rng.standard_normal(w_shape[0]) if has_bias else None,
    )


def _tensors(backend, *arrays, requires_grad=False):
    return [None if a is None else torchlight.tensor(a, backend=backend, requires_grad=requires_grad) for a in arrays]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_conv1d_matches_a_direct_loop(backend_name, case):
    x, w, b = _arrays(case)
    _, _, stride, padding, _ = case
    out = conv1d(*_tensors(backend_name, x, w, b), stride=stride, padding=padding)
    np.testing.assert_allclose(out.to_numpy(), ref.conv(x, w, b, stride, padding), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_conv1d_values_and_gradients_match_torch(backend_name, case):
    torch = pytest.importorskip("torch")
    x, w, b = _arrays(case, seed=1)
    _, _, stride, padding, _ = case
    leaves = [t for t in _tensors(backend_name, x, w, b, requires_grad=True) if t is not None]
    tleaves = [torch.tensor(a, requires_grad=True) for a in (x, w, b) if a is not None]
    out = conv1d(*leaves[:2], leaves[2] if b is not None else None, stride, padding)
    tout = torch.nn.functional.conv1d(*tleaves[:2], tleaves[2] if b is not None else None, stride, padding)
    np.testing.assert_allclose(out.to_numpy(), tout.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = np.random.default_rng(2).standard_normal(out.shape)
    out.backward(torchlight.tensor(g, backend=backend_name))
    tout.backward(torch.tensor(g))
    for t, tt in zip(leaves, tleaves, strict=True):
        np.testing.assert_allclose(t.grad.to_numpy(), tt.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("stride, padding", [(1, 0), (2, 1), (3, 2)], ids=["s1-p0", "s2-p1", "s3-p2"])
def test_conv1d_gradcheck(backend_name, stride, padding):
    x, w, b = _arrays(((2, 2, 6), (3, 2, 3), stride, padding, True), seed=3)
    leaves = _tensors(backend_name, x, w, b, requires_grad=True)
    assert gradcheck(lambda x, w, b: conv1d(x, w, b, stride=stride, padding=padding), leaves)


def test_conv1d_on_strided_and_permuted_inputs(backend_name):
    rng = np.random.default_rng(4)
    x, w, b = rng.standard_normal((2, 3, 9)), rng.standard_normal((2, 3, 3)), rng.standard_normal(2)
    expected = ref.conv(x, w, b, 2, 1)
    # every input a permuted view (no row-major strides), the weight too
    out = conv1d(ref.permuted(x, backend_name), ref.permuted(w, backend_name), *_tensors(backend_name, b), 2, 1)
    np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-12, atol=1e-12)
    # a slice with a step: every other position of a wider input
    wide = np.zeros((2, 3, 18))
    wide[:, :, ::2] = x
    sliced = torchlight.tensor(wide, backend=backend_name)[:, :, ::2]
    out = conv1d(sliced, *_tensors(backend_name, w, b), stride=2, padding=1)
    np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-12, atol=1e-12)


def test_conv1d_gradients_reach_permuted_leaves(backend_name):
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((1, 2, 5)), rng.standard_normal((2, 2, 2))
    px, pw = ref.permuted(x, backend_name, requires_grad=True), ref.permuted(w, backend_name, requires_grad=True)
    assert gradcheck(lambda a, b: conv1d(a, b, stride=2, padding=1), [px, pw])


def test_unbatched_input_and_padding_strings(backend_name):
    rng = np.random.default_rng(6)
    x, w, b = rng.standard_normal((2, 6)), rng.standard_normal((3, 2, 3)), rng.standard_normal(3)
    tx, tw, tb = _tensors(backend_name, x, w, b)
    out = conv1d(tx, tw, tb, padding=1)
    assert out.shape == (3, 6)
    np.testing.assert_allclose(out.to_numpy(), ref.conv(x[None], w, b, 1, 1)[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(conv1d(tx, tw, tb, padding="same").to_numpy(), out.to_numpy())
    np.testing.assert_allclose(conv1d(tx, tw, tb, padding="valid").to_numpy(), ref.conv(x[None], w, b)[0], atol=1e-12)


@pytest.mark.parametrize(
    "kernel, stride, padding",
    [(3, 1, 0), (2, 2, 1), (3, 3, 2), (1, 2, 0)],
    ids=["k3-s1-p0", "k2-s2-p1", "k3-s3-p2", "k1-s2-p0"],
)
def test_unfold_and_fold_1d_values(backend_name, kernel, stride, padding):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 2, 7))
    cols = Unfold.apply(torchlight.tensor(x, backend=backend_name), (kernel,), (stride,), (padding,))
    expected = ref.unfold(x, (kernel,), (stride,), (padding,))
    np.testing.assert_array_equal(cols.to_numpy(), expected)
    y = rng.standard_normal(expected.shape)
    folded = Fold.apply(torchlight.tensor(y, backend=backend_name), (7,), (kernel,), (stride,), (padding,))
    np.testing.assert_allclose(folded.to_numpy(), ref.fold(y, (7,), (kernel,), (stride,), (padding,)), atol=1e-12)


@settings(max_examples=10)
@given(
    n=st.integers(1, 2),
    c=st.integers(1, 2),
    width=st.integers(1, 7),
    kernel=st.integers(1, 4),
    stride=st.integers(1, 3),
    padding=st.integers(0, 2),
    seed=st.integers(0, 2**16),
)
def test_fold_is_the_adjoint_of_unfold(backend_name, n, c, width, kernel, stride, padding, seed):
    """<unfold(x), y> = <x, fold(y)> for all x, y: fold is unfold's transpose, hence its backward."""
    if kernel > width + 2 * padding:
        return
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, width))
    args = (kernel,), (stride,), (padding,)
    cols = Unfold.apply(torchlight.tensor(x, backend=backend_name), *args)
    y = rng.standard_normal(cols.shape)
    folded = Fold.apply(torchlight.tensor(y, backend=backend_name), (width,), *args)
    left, right = np.sum(cols.to_numpy() * y), np.sum(x * folded.to_numpy())
    assert np.isclose(left, right, rtol=1e-12, atol=1e-12), (
        f"<unfold(x), y> = {left} but <x, fold(y)> = {right} (x of shape {x.shape}, kernel {kernel}, stride {stride}, "
        f"padding {padding})"
    )


def _error(fn, kind, *fragments):
    with pytest.raises(kind) as info:
        fn()
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


def test_conv1d_errors(backend_name):
    x, w, b = _tensors(backend_name, np.ones((2, 3, 5)), np.ones((4, 3, 3)), np.ones(4))
    # the channel counts of both, as PyTorch words it
    _error(
        lambda: conv1d(x, torchlight.tensor(np.ones((4, 2, 3)), backend=backend_name)),
        RuntimeError,
        "expected input[2, 3, 5] to have 2 channels, but got 3 channels instead",
    )
    _error(
        lambda: conv1d(x, torchlight.tensor(np.ones((4, 3, 6)), backend=backend_name)),
        RuntimeError,
        "Calculated padded input size per channel: (5). Kernel size: (6)",
        "can't be greater",
    )
    assert conv1d(x, torchlight.tensor(np.ones((4, 3, 6)), backend=backend_name), padding=1).shape == (2, 4, 2)
    _error(
        lambda: conv1d(torchlight.tensor(np.ones((1, 2, 3, 5)), backend=backend_name), w),
        RuntimeError,
        "Expected 2D (unbatched) or 3D (batched) input to conv1d",
        "[1, 2, 3, 5]",
    )
    _error(
        lambda: conv1d(x, torchlight.tensor(np.ones((4, 3)), backend=backend_name)),
        RuntimeError,
        "3-D weight",
        "[4, 3]",
    )
    _error(lambda: conv1d(x, w, b, stride=0), RuntimeError, "non-positive stride is not supported")
    _error(lambda: conv1d(x, w, b, padding=-1), RuntimeError, "negative padding is not supported")
    _error(lambda: conv1d(x, w, b, stride=(1, 1)), RuntimeError, "a list of 1 values", "stride=[1, 1]")
    _error(lambda: conv1d(x, w, b, stride=1.5), TypeError, "'stride'", "1.5")
    _error(
        lambda: conv1d(x, w, torchlight.tensor(np.ones(3), backend=backend_name)),
        RuntimeError,
        "expected bias to be 1-dimensional with 4 elements, but got bias of size [3]",
    )
    _error(lambda: conv1d(np.ones((2, 3, 5)), w), TypeError, "argument 'input' must be Tensor, not ndarray")
    _error(lambda: conv1d(x, w, dilation=2), NotImplementedError, "dilation")
    _error(lambda: conv1d(x, w, groups=3), NotImplementedError, "groups")
    _error(lambda: conv1d(x, w, padding="full"), ValueError, "'full'")
    _error(lambda: conv1d(x, w, stride=2, padding="same"), RuntimeError, "strided")


def test_conv1d_names_both_backends_when_they_differ():
    x = torchlight.tensor(np.ones((1, 1, 4)), backend="simple")
    w = torchlight.tensor(np.ones((1, 1, 2)), backend="fast")
    _error(lambda: conv1d(x, w), RuntimeError, "'simple'", "'fast'")


def test_conv1d_layer(backend_name):
    layer = Conv1d(3, 4, 5, stride=2, padding=1, backend=backend_name, seed=0)
    assert [name for name, _ in layer.named_parameters()] == ["weight", "bias"]
    assert layer.weight.value.shape == (4, 3, 5) and layer.bias.value.shape == (4,)
    bound = 1 / np.sqrt(3 * 5)  # PyTorch's default: 1/sqrt(fan_in) for weight and bias
    for p in (layer.weight.value, layer.bias.value):
        values = p.to_numpy()
        assert p.requires_grad and np.all(np.abs(values) <= bound) and values.std() > bound / 4
    assert np.array_equal(
        Conv1d(3, 4, 5, seed=0).weight.value.to_numpy(), Conv1d(3, 4, 5, seed=0).weight.value.to_numpy()
    )
    torchlight.manual_seed(7)
    first = Conv1d(3, 4, 5).weight.value.to_numpy()
    torchlight.manual_seed(7)
    assert np.array_equal(first, Conv1d(3, 4, 5).weight.value.to_numpy())
    x = np.random.default_rng(8).standard_normal((2, 3, 9))
    out = layer(torchlight.tensor(x, backend=backend_name))
    expected = ref.conv(x, layer.weight.value.to_numpy(), layer.bias.value.to_numpy(), 2, 1)
    np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-12, atol=1e-12)
    no_bias = Conv1d(3, 4, 5, bias=False, backend=backend_name)
    assert [name for name, _ in no_bias.named_parameters()] == ["weight"]
    assert repr(no_bias) == "Conv1d(3, 4, kernel_size=(5,), stride=(1,), bias=False)"
    assert repr(layer) == "Conv1d(3, 4, kernel_size=(5,), stride=(2,), padding=(1,))"
    with pytest.raises(ValueError, match="in_channels"):
        Conv1d(0, 4, 3)
    with pytest.raises(ValueError, match="kernel_size"):
        Conv1d(1, 4, 0)


def test_conv1d_layer_matches_torch_with_the_same_state():
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Conv1d(2, 3, 3, stride=2, padding=1).double()
    ours = Conv1d(2, 3, 3, stride=2, padding=1)
    assert repr(ours) == repr(theirs)
    assert {k: tuple(v.shape) for k, v in theirs.state_dict().items()} == {
        k: v.shape for k, v in ours.state_dict().items()
    }
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(9).standard_normal((2, 2, 7))
    np.testing.assert_allclose(
        ours(torchlight.tensor(x)).to_numpy(), theirs(torch.tensor(x)).detach().numpy(), atol=1e-12
    )
    # PyTorch's initial values have the same spread: uniform within 1/sqrt(fan_in)
    assert np.abs(theirs.weight.detach().numpy()).max() <= 1 / np.sqrt(6)


def test_the_fast_kernel_runs_the_taught_loop_first(monkeypatch):
    """In the student edition the fast backend must not do stage 4.1's work silently: its first
    use runs the simple backend's unfold1d_kernel, so that a stub says what to write."""

    def stub(*args):
        raise NotImplementedError("Task 4.1: implement unfold1d_kernel in torchlight/backends/simple.py")

    monkeypatch.setattr(simple, "unfold1d_kernel", stub)
    kernel = fast_conv._Kernel("unfold", 1)  # a fresh one: the backend's own has run its check
    x = torchlight.tensor(np.ones((1, 1, 3)), backend="fast")
    out = torchlight.tensor(np.zeros((1, 2, 2)), backend="fast")
    with pytest.raises(NotImplementedError, match="Task 4.1"):
        kernel(*out._data.kernel_args(), *x._data.kernel_args(), 2, 1, 0)


def test_the_parallel_path_gives_the_same_values(monkeypatch):
    """Large unfolds and folds run on all threads (fast_conv.PARALLEL_THRESHOLD): here a small one."""
    monkeypatch.setattr(fast_conv, "PARALLEL_THRESHOLD", 1)
    x, w, b = _arrays(CASES[1], seed=11)
    out = conv1d(*_tensors("fast", x, w, b), stride=2, padding=1)
    np.testing.assert_allclose(out.to_numpy(), ref.conv(x, w, b, 2, 1), rtol=1e-12, atol=1e-12)
    y = np.random.default_rng(12).standard_normal((2, 6, 4))
    folded = Fold.apply(torchlight.tensor(y, backend="fast"), (7,), (3,), (2,), (1,))
    np.testing.assert_allclose(folded.to_numpy(), ref.fold(y, (7,), (3,), (2,), (1,)), atol=1e-12)
