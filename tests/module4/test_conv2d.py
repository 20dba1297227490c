"""Task 4.2: conv2d, as the 2-D unfold (the simple backend's window loop over rows and columns),
its adjoint fold, and the matrix product of 4.1; the Conv2d layer.

Values against a direct numpy loop and PyTorch (float64, where installed), unfold and fold
against ``torch.nn.functional.unfold`` and ``fold``, gradients by central differences and
against PyTorch, strided and permuted inputs, rectangular kernels, strides and paddings given as
pairs, both backends, and PyTorch's errors. (Second derivatives and forward mode:
tests/module5/test_conv_higher_order.py.)
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import torchlight
from torchlight.autograd import gradcheck
from torchlight.backends import fast_conv, simple
from torchlight.nn.conv import Conv2d
from torchlight.ops.conv import Fold, Unfold, conv2d

from . import conv_reference as ref

pytestmark = pytest.mark.task4_2

BACKENDS = ["simple", "fast"]

# (input shape, weight shape, stride, padding, bias); tiny for the pure-Python simple backend.
CASES = [
    ((2, 2, 5, 5), (3, 2, 3, 3), 1, 0, True),
    ((2, 2, 5, 5), (3, 2, 3, 3), 1, 1, True),
    ((1, 3, 6, 5), (2, 3, 3, 2), (2, 1), (1, 2), True),  # rectangular kernel, pairs
    ((2, 1, 7, 6), (2, 1, 2, 3), (3, 2), (0, 1), False),  # strides that skip part of the input
    ((1, 2, 4, 4), (2, 2, 4, 4), 1, 0, True),  # one window: the whole image
    ((1, 2, 3, 4), (3, 2, 1, 1), 1, 0, True),  # 1x1: a matrix product per pixel
    ((1, 1, 2, 2), (1, 1, 3, 3), 2, 2, True),  # more padding than image
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


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_conv2d_matches_a_direct_loop(backend_name, case):
    x, w, b = _arrays(case)
    _, _, stride, padding, _ = case
    out = conv2d(*_tensors(backend_name, x, w, b), stride=stride, padding=padding)
    np.testing.assert_allclose(out.to_numpy(), ref.conv(x, w, b, stride, padding), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_conv2d_values_and_gradients_match_torch(backend_name, case):
    torch = pytest.importorskip("torch")
    x, w, b = _arrays(case, seed=1)
    _, _, stride, padding, _ = case
    leaves = [t for t in _tensors(backend_name, x, w, b, requires_grad=True) if t is not None]
    tleaves = [torch.tensor(a, requires_grad=True) for a in (x, w, b) if a is not None]
    bias, tbias = (leaves[2], tleaves[2]) if b is not None else (None, None)
    out = conv2d(leaves[0], leaves[1], bias, stride, padding)
    tout = torch.nn.functional.conv2d(tleaves[0], tleaves[1], tbias, stride, padding)
    np.testing.assert_allclose(out.to_numpy(), tout.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = np.random.default_rng(2).standard_normal(out.shape)
    out.backward(torchlight.tensor(g, backend=backend_name))
    tout.backward(torch.tensor(g))
    for t, tt in zip(leaves, tleaves, strict=True):
        np.testing.assert_allclose(t.grad.to_numpy(), tt.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "stride, padding", [(1, 0), ((2, 1), (1, 0)), (2, 1)], ids=["s1-p0", "s(2, 1)-p(1, 0)", "s2-p1"]
)
def test_conv2d_gradcheck(backend_name, stride, padding):
    x, w, b = _arrays(((1, 2, 4, 4), (2, 2, 2, 3), stride, padding, True), seed=3)
    leaves = _tensors(backend_name, x, w, b, requires_grad=True)
    assert gradcheck(lambda x, w, b: conv2d(x, w, b, stride=stride, padding=padding), leaves)


def test_conv2d_on_strided_and_permuted_inputs(backend_name):
    rng = np.random.default_rng(4)
    x, w, b = rng.standard_normal((2, 2, 5, 6)), rng.standard_normal((3, 2, 3, 2)), rng.standard_normal(3)
    expected = ref.conv(x, w, b, (2, 1), 1)
    out = conv2d(ref.permuted(x, backend_name), ref.permuted(w, backend_name), *_tensors(backend_name, b), (2, 1), 1)
    np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-12, atol=1e-12)
    # channels last, as an image library stores them, viewed as (N, C, H, W)
    nhwc = torchlight.tensor(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), backend=backend_name).permute(0, 3, 1, 2)
    np.testing.assert_allclose(conv2d(nhwc, *_tensors(backend_name, w, b), (2, 1), 1).to_numpy(), expected, atol=1e-12)
    # every other row and column of a larger image
    big = np.zeros((2, 2, 10, 12))
    big[:, :, ::2, ::2] = x
    sliced = torchlight.tensor(big, backend=backend_name)[:, :, ::2, ::2]
    np.testing.assert_allclose(
        conv2d(sliced, *_tensors(backend_name, w, b), (2, 1), 1).to_numpy(), expected, atol=1e-12
    )


def test_conv2d_gradients_reach_permuted_leaves(backend_name):
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((1, 2, 3, 4)), rng.standard_normal((2, 2, 2, 2))
    px, pw = ref.permuted(x, backend_name, requires_grad=True), ref.permuted(w, backend_name, requires_grad=True)
    assert gradcheck(lambda a, b: conv2d(a, b, stride=(1, 2), padding=(1, 0)), [px, pw])


def test_unbatched_input_and_padding_strings(backend_name):
    rng = np.random.default_rng(6)
    x, w, b = rng.standard_normal((2, 4, 5)), rng.standard_normal((3, 2, 3, 3)), rng.standard_normal(3)
    tx, tw, tb = _tensors(backend_name, x, w, b)
    out = conv2d(tx, tw, tb, padding=1)
    assert out.shape == (3, 4, 5)
    np.testing.assert_allclose(out.to_numpy(), ref.conv(x[None], w, b, 1, 1)[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(conv2d(tx, tw, tb, padding="same").to_numpy(), out.to_numpy())
    assert conv2d(tx, tw, tb, padding="valid").shape == (3, 2, 3)


UNFOLDS = [((3, 3), (1, 1), (0, 0)), ((2, 3), (2, 1), (1, 1)), ((3, 2), (3, 2), (2, 0)), ((1, 1), (2, 2), (0, 0))]


@pytest.mark.parametrize("kernel, stride, padding", UNFOLDS, ids=[f"k{k}-s{s}-p{p}" for k, s, p in UNFOLDS])
def test_unfold_and_fold_2d_values(backend_name, kernel, stride, padding):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 2, 5, 4))
    cols = Unfold.apply(torchlight.tensor(x, backend=backend_name), kernel, stride, padding)
    expected = ref.unfold(x, kernel, stride, padding)
    np.testing.assert_array_equal(cols.to_numpy(), expected)
    y = rng.standard_normal(expected.shape)
    folded = Fold.apply(torchlight.tensor(y, backend=backend_name), (5, 4), kernel, stride, padding)
    np.testing.assert_allclose(folded.to_numpy(), ref.fold(y, (5, 4), kernel, stride, padding), atol=1e-12)
    # and from a permuted (non-contiguous) tensor of columns
    folded = Fold.apply(ref.permuted(y, backend_name), (5, 4), kernel, stride, padding)
    np.testing.assert_allclose(folded.to_numpy(), ref.fold(y, (5, 4), kernel, stride, padding), atol=1e-12)


@pytest.mark.parametrize("kernel, stride, padding", UNFOLDS, ids=[f"k{k}-s{s}-p{p}" for k, s, p in UNFOLDS])
def test_unfold_and_fold_2d_match_torch(backend_name, kernel, stride, padding):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 3, 5, 6))
    cols = Unfold.apply(torchlight.tensor(x, backend=backend_name), kernel, stride, padding)
    tcols = F.unfold(torch.tensor(x), kernel, padding=padding, stride=stride)
    np.testing.assert_array_equal(cols.to_numpy(), tcols.numpy())
    y = rng.standard_normal(tuple(tcols.shape))
    folded = Fold.apply(torchlight.tensor(y, backend=backend_name), (5, 6), kernel, stride, padding)
    tfolded = F.fold(torch.tensor(y), (5, 6), kernel, padding=padding, stride=stride)
    np.testing.assert_allclose(folded.to_numpy(), tfolded.numpy(), rtol=1e-12, atol=1e-12)


@settings(max_examples=10)
@given(
    c=st.integers(1, 2),
    size=st.tuples(st.integers(1, 5), st.integers(1, 5)),
    kernel=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    stride=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    padding=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    seed=st.integers(0, 2**16),
)
def test_fold_is_the_adjoint_of_unfold(backend_name, c, size, kernel, stride, padding, seed):
    """<unfold(x), y> = <x, fold(y)> for all x, y: fold is unfold's transpose, hence its backward."""
    if any(k > n + 2 * p for k, n, p in zip(kernel, size, padding, strict=True)):
        return
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, c) + size)
    cols = Unfold.apply(torchlight.tensor(x, backend=backend_name), kernel, stride, padding)
    y = rng.standard_normal(cols.shape)
    folded = Fold.apply(torchlight.tensor(y, backend=backend_name), size, kernel, stride, padding)
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


def test_conv2d_errors(backend_name):
    t = lambda a: torchlight.tensor(a, backend=backend_name)  # noqa: E731
    x, w, b = t(np.ones((2, 3, 5, 4))), t(np.ones((8, 3, 3, 3))), t(np.ones(8))
    _error(
        lambda: conv2d(x, t(np.ones((8, 1, 3, 3)))),
        RuntimeError,
        "Given groups=1, weight of size [8, 1, 3, 3], expected input[2, 3, 5, 4] to have 1 channels, but got 3 "
        "channels instead",
    )
    _error(
        lambda: conv2d(x, t(np.ones((8, 3, 5, 5)))),
        RuntimeError,
        "Calculated padded input size per channel: (5 x 4). Kernel size: (5 x 5). Kernel size can't be greater",
    )
    _error(lambda: conv2d(x, t(np.ones((8, 3, 5, 7))), padding=1), RuntimeError, "(7 x 6). Kernel size: (5 x 7)")
    assert conv2d(x, t(np.ones((8, 3, 5, 5))), padding=(0, 1)).shape == (2, 8, 1, 2)
    _error(
        lambda: conv2d(t(np.ones((3, 5))), w),
        RuntimeError,
        "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [3, 5]",
    )
    _error(lambda: conv2d(x, t(np.ones((8, 3, 3)))), RuntimeError, "4-D weight", "[8, 3, 3]")
    _error(lambda: conv2d(x, w, b, stride=(1, 0)), RuntimeError, "non-positive stride is not supported")
    _error(lambda: conv2d(x, w, b, padding=(0, -1)), RuntimeError, "negative padding is not supported")
    _error(lambda: conv2d(x, w, b, padding=(1, 1, 1)), RuntimeError, "a list of 2 values", "padding=[1, 1, 1]")
    _error(lambda: conv2d(x, w, b, stride="2"), TypeError, "'stride'")
    _error(lambda: conv2d(x, w, t(np.ones((8, 1)))), RuntimeError, "expected bias to be 1-dimensional with 8 elements")
    _error(lambda: conv2d(x, [[1.0]]), TypeError, "argument 'weight' must be Tensor, not list")
    _error(lambda: conv2d(x, w, dilation=(1, 2)), NotImplementedError, "dilation")
    _error(lambda: conv2d(x, t(np.ones((8, 3, 2, 3))), padding="same"), NotImplementedError, "even kernel")


def test_unfold_and_fold_check_their_arguments(backend_name):
    t = lambda a: torchlight.tensor(a, backend=backend_name)  # noqa: E731
    _error(
        lambda: Unfold.apply(t(np.ones((1, 1, 3, 3))), (4, 4), (1, 1), (0, 0)),
        RuntimeError,
        "larger than the padded size",
    )
    _error(lambda: Unfold.apply(t(np.ones((1, 3, 3))), (2, 2), (1, 1), (0, 0)), RuntimeError, "4-D input")
    # 2 x 2 windows of a 3 x 3 output are 4 columns, not 5
    _error(
        lambda: Fold.apply(t(np.ones((1, 4, 5))), (3, 3), (2, 2), (1, 1), (0, 0)),
        RuntimeError,
        "expected columns (N, C * 4, 2 * 2)",
        "but got columns of size [1, 4, 5]",
    )
    _error(lambda: Fold.apply(t(np.ones((1, 6, 4))), (3, 3), (2, 2), (1, 1), (0, 0)), RuntimeError, "[1, 6, 4]")


def test_conv2d_layer(backend_name):
    layer = Conv2d(2, 3, (3, 2), stride=(2, 1), padding=1, backend=backend_name, seed=0)
    assert [name for name, _ in layer.named_parameters()] == ["weight", "bias"]
    assert layer.weight.value.shape == (3, 2, 3, 2) and layer.bias.value.shape == (3,)
    bound = 1 / np.sqrt(2 * 3 * 2)
    for p in (layer.weight.value, layer.bias.value):
        assert p.requires_grad and np.all(np.abs(p.to_numpy()) <= bound)
    assert layer.weight.value.to_numpy().std() > bound / 4
    x = np.random.default_rng(8).standard_normal((2, 2, 5, 4))
    out = layer(torchlight.tensor(x, backend=backend_name))
    expected = ref.conv(x, layer.weight.value.to_numpy(), layer.bias.value.to_numpy(), (2, 1), 1)
    np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-12, atol=1e-12)
    assert repr(layer) == "Conv2d(2, 3, kernel_size=(3, 2), stride=(2, 1), padding=(1, 1))"
    assert repr(Conv2d(1, 8, 3, bias=False)) == "Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1), bias=False)"
    a, b = Conv2d(1, 2, 3, generator=np.random.default_rng(1)), Conv2d(1, 2, 3, generator=np.random.default_rng(1))
    assert np.array_equal(a.weight.value.to_numpy(), b.weight.value.to_numpy())
    with pytest.raises(ValueError, match="out_channels"):
        Conv2d(1, -1, 3)
    with pytest.raises(NotImplementedError, match="groups"):
        Conv2d(2, 2, 3, groups=2)


def test_conv2d_layer_matches_torch_with_the_same_state():
    torch = pytest.importorskip("torch")
    for args, kwargs in [((1, 4, 3), {}), ((2, 3, (3, 2)), {"stride": 2, "padding": (1, 0), "bias": False})]:
        theirs = torch.nn.Conv2d(*args, **kwargs).double()
        ours = Conv2d(*args, **kwargs)
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
        x = np.random.default_rng(9).standard_normal((2, args[0], 6, 5))
        np.testing.assert_allclose(
            ours(torchlight.tensor(x)).to_numpy(), theirs(torch.tensor(x)).detach().numpy(), atol=1e-12
        )


def test_the_fast_kernels_run_the_taught_loops_first(monkeypatch):
    """The fast backend must not do stage 4.2's work silently in the student edition: the first use
    of its unfold and fold runs the simple backend's, so that a stub says what to write."""
    for name, kind in (("unfold2d_kernel", "unfold"), ("fold2d_kernel", "fold")):

        def stub(*args, name=name):
            raise NotImplementedError(f"Task 4.2: implement {name} in torchlight/backends/simple.py")

        monkeypatch.setattr(simple, name, stub)
        kernel = fast_conv._Kernel(kind, 2)
        a = torchlight.tensor(np.ones((1, 1, 1, 1)), backend="fast")
        b = torchlight.tensor(np.zeros((1, 1, 1)), backend="fast")
        out, x = (b, a) if kind == "unfold" else (a, b)
        with pytest.raises(NotImplementedError, match=f"Task 4.2: implement {name}"):
            kernel(*out._data.kernel_args(), *x._data.kernel_args(), 1, 1, 1, 1, 0, 0)


def test_the_parallel_path_gives_the_same_values(monkeypatch):
    """Large unfolds and folds run on all threads (fast_conv.PARALLEL_THRESHOLD): here a small one."""
    monkeypatch.setattr(fast_conv, "PARALLEL_THRESHOLD", 1)
    rng = np.random.default_rng(10)
    x = rng.standard_normal((3, 2, 6, 5))
    for kernel, stride, padding in UNFOLDS:
        cols = Unfold.apply(torchlight.tensor(x, backend="fast"), kernel, stride, padding)
        np.testing.assert_array_equal(cols.to_numpy(), ref.unfold(x, kernel, stride, padding))
        y = rng.standard_normal(cols.shape)
        folded = Fold.apply(torchlight.tensor(y, backend="fast"), (6, 5), kernel, stride, padding)
        np.testing.assert_allclose(folded.to_numpy(), ref.fold(y, (6, 5), kernel, stride, padding), atol=1e-12)


def test_parameters_stand_for_their_tensors(backend_name):
    """F.conv2d(x, self.weight, self.bias) in a custom layer, as in PyTorch: the gradients reach them."""
    layer = Conv2d(2, 3, 2, backend=backend_name, seed=1)
    x = torchlight.tensor(np.random.default_rng(13).standard_normal((1, 2, 3, 4)), backend=backend_name)
    out = conv2d(x, layer.weight, layer.bias, padding=1)
    expected = conv2d(x, layer.weight.value, layer.bias.value, padding=1)
    np.testing.assert_array_equal(out.to_numpy(), expected.to_numpy())
    out.sum().backward()
    assert layer.weight.value.grad is not None and layer.bias.value.grad is not None
    np.testing.assert_allclose(layer.bias.value.grad.to_numpy(), np.full(3, out.shape[2] * out.shape[3]))
