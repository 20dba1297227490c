"""Module 4's functions at the edges, as PyTorch (issue 20, item 6): the softmax family along a
dimension of size 0, convolutions and pooling with arguments beyond int64 (they leaked numba's
OverflowError on the fast backend), and the arguments of layers, dropout and losses that PyTorch
refuses. Where PyTorch is installed the same calls are made on it.

Module 2's sizes, 0-d tensors and comparisons are in tests/module2/test_sizes_and_edges.py.
"""

import math

import numpy as np
import pytest

import torchlight
from torchlight import nn
from torchlight.nn import functional as F

task4_1 = pytest.mark.task4_1
task4_2 = pytest.mark.task4_2
task4_3 = pytest.mark.task4_3
task4_4 = pytest.mark.task4_4

BACKENDS = ["simple", "fast"]
HUGE = 10**20


def _torch():
    return pytest.importorskip("torch")


# -- the softmax family along a dimension of size 0 -----------------------------------------------

EMPTY_CASES = [((2, 0), 1), ((2, 0), -1), ((0, 3), 0), ((0,), 0), ((0,), -1), ((3, 0, 2), 1)]
EMPTY_IDS = [f"{shape}-dim{dim}" for shape, dim in EMPTY_CASES]


@task4_4
@pytest.mark.parametrize("shape, dim", EMPTY_CASES, ids=EMPTY_IDS)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_along_a_dimension_of_size_0_is_empty_as_pytorch(name, shape, dim, backend_name):
    # (a maximum over nothing raised "Expected reduction dim 1 to have non-zero size")
    x = torchlight.ones(*shape, backend=backend_name, requires_grad=True)
    out = getattr(F, name)(x, dim)
    assert out.shape == shape and out.backend is x.backend
    assert getattr(x, name)(dim).shape == shape
    out.sum().backward()
    assert x.grad.shape == shape
    torch = _torch()
    assert tuple(getattr(torch.nn.functional, name)(torch.ones(*shape), dim).shape) == shape


@task4_4
@pytest.mark.parametrize("shape, dim", EMPTY_CASES, ids=EMPTY_IDS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_logsumexp_along_a_dimension_of_size_0_is_minus_inf(shape, dim, keepdim, backend_name):
    x = torchlight.ones(*shape, backend=backend_name, requires_grad=True)
    out = F.logsumexp(x, dim, keepdim=keepdim)
    kept = list(shape)
    kept[dim] = 1
    expected_shape = tuple(kept) if keepdim else tuple(n for i, n in enumerate(shape) if i != dim % len(shape))
    assert out.shape == expected_shape
    assert np.all(out.to_numpy() == -math.inf)  # the log of an empty sum
    out.sum().backward()
    assert x.grad.shape == shape
    torch = _torch()
    theirs = torch.logsumexp(torch.ones(*shape), dim, keepdim=keepdim)
    assert tuple(theirs.shape) == expected_shape and bool(torch.all(theirs == -math.inf))


@task4_4
def test_logsumexp_keepdim_must_be_a_bool():
    with pytest.raises(TypeError, match="argument 'keepdim' must be bool"):
        F.logsumexp(torchlight.ones(2, 3), 1, keepdim=1)


# -- convolutions and pooling with arguments beyond int64 -------------------------------------------


def _x(backend, *shape):
    return torchlight.ones(*shape, backend=backend)


WINDOWED = {
    "conv1d stride": (lambda b, v: F.conv1d(_x(b, 1, 1, 5), _x(b, 1, 1, 2), stride=v), "stride"),
    "conv1d padding": (lambda b, v: F.conv1d(_x(b, 1, 1, 5), _x(b, 1, 1, 2), padding=v), "padding"),
    "conv1d dilation": (lambda b, v: F.conv1d(_x(b, 1, 1, 5), _x(b, 1, 1, 2), dilation=v), "dilation"),
    "conv2d stride": (lambda b, v: F.conv2d(_x(b, 1, 1, 5, 5), _x(b, 1, 1, 2, 2), stride=v), "stride"),
    "conv2d stride pair": (lambda b, v: F.conv2d(_x(b, 1, 1, 5, 5), _x(b, 1, 1, 2, 2), stride=(1, v)), "stride"),
    "conv2d padding": (lambda b, v: F.conv2d(_x(b, 1, 1, 5, 5), _x(b, 1, 1, 2, 2), padding=v), "padding"),
    "max_pool2d stride": (lambda b, v: F.max_pool2d(_x(b, 1, 1, 5, 5), 2, stride=v), "stride"),
    "max_pool2d kernel_size": (lambda b, v: F.max_pool2d(_x(b, 1, 1, 5, 5), v), "kernel_size"),
    "max_pool2d padding": (lambda b, v: F.max_pool2d(_x(b, 1, 1, 5, 5), 2, padding=v), "padding"),
    "max_pool2d dilation": (lambda b, v: F.max_pool2d(_x(b, 1, 1, 5, 5), 2, dilation=v), "dilation"),
    "avg_pool2d stride": (lambda b, v: F.avg_pool2d(_x(b, 1, 1, 5, 5), 2, stride=v), "stride"),
    "avg_pool2d kernel_size": (lambda b, v: F.avg_pool2d(_x(b, 1, 1, 5, 5), v), "kernel_size"),
    "MaxPool2d stride": (lambda b, v: nn.MaxPool2d(2, stride=v)(_x(b, 1, 1, 5, 5)), "stride"),
    "Conv2d stride": (lambda b, v: nn.Conv2d(1, 1, 2, stride=v, backend=b)(_x(b, 1, 1, 5, 5)), "stride"),
}


@task4_3
@pytest.mark.parametrize("name", sorted(WINDOWED))
@pytest.mark.parametrize("value", [HUGE, 2**63], ids=["10**20", "2**63"])
def test_window_arguments_beyond_int64_are_refused_before_the_kernel(name, value, backend_name):
    # (on the fast backend: numba's "OverflowError: int too big to convert"; on simple, accepted)
    make, arg = WINDOWED[name]
    with pytest.raises(ValueError, match=rf"Overflow when unpacking long long: argument '{arg}' = .*{value}"):
        make(backend_name, value)


@task4_2
def test_windows_too_many_for_a_storage_are_refused_before_the_kernel(backend_name):
    x, w = _x(backend_name, 1, 1, 5, 5), _x(backend_name, 1, 1, 2, 2)
    with pytest.raises(RuntimeError, match=r"Storage size calculation overflowed with sizes=\[1, 4, \d+\]"):
        F.conv2d(x, w, padding=2**40)  # (was a TypeError from inside the convolution)
    assert F.conv2d(x, w, stride=2**62).shape == (1, 1, 1, 1)  # a stride that fits is fine, as in PyTorch


@task4_2
@pytest.mark.parametrize("layer", [nn.Conv1d, nn.Conv2d], ids=lambda layer: layer.__name__)
def test_a_conv_layer_refuses_an_unknown_padding_string(layer):
    with pytest.raises(ValueError, match="invalid padding string 'bad', should be one of 'same' or 'valid'"):
        layer(1, 1, 3, padding="bad")  # (was accepted, and failed at the first call)
    assert layer(1, 1, 3, padding="same").padding == "same"
    torch = _torch()
    with pytest.raises(ValueError):
        getattr(torch.nn, layer.__name__)(1, 1, 3, padding="bad")


@task4_2
@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda: nn.Linear(2**40, 2**40), [2**40, 2**40]),
        (lambda: nn.Conv2d(2**31, 2**31, 3), [2**31, 2**31, 3, 3]),
        (lambda: nn.Conv1d(1, 2**62, 4), [2**62, 1, 4]),
    ],
    ids=["Linear(2**40, 2**40)", "Conv2d(2**31, 2**31, 3)", "Conv1d(1, 2**62, 4)"],
)
def test_a_layer_too_large_for_a_storage_names_its_weight_shape(make, shape):
    shown = ", ".join(map(str, shape))
    with pytest.raises(RuntimeError, match=rf"Storage size calculation overflowed with sizes=\[{shown}\]"):
        make()  # (was numpy's "array is too big")


# -- dropout and the losses -------------------------------------------------------------------------


@task4_4
@pytest.mark.parametrize("value", [2, "yes", None], ids=repr)
def test_dropout_training_must_be_a_bool(value):
    with pytest.raises(TypeError, match=r"dropout\(\): argument 'training' must be bool"):
        F.dropout(torchlight.ones(2, 3), 0.5, training=value)  # (was read as true or false)
    torch = _torch()
    with pytest.raises(TypeError):
        torch.nn.functional.dropout(torch.ones(2, 3), 0.5, training=value)


def _logits():
    return torchlight.tensor([[1.0, 2.0, 0.5], [0.1, 0.2, 0.3]])


@task4_4
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_class_targets_cannot_be_bools(loss):
    target = torchlight.tensor([1.0, 0.0]) == 1.0
    with pytest.raises(RuntimeError, match="expected target dtype to be Long \\(class indices\\), but got Bool"):
        getattr(F, loss)(_logits(), target)  # (was read as classes 1 and 0)
    with pytest.raises(RuntimeError, match="but got Bool"):
        getattr(F, loss)(_logits(), np.array([True, False]))
    assert getattr(F, loss)(_logits(), target.long()).shape == ()
    torch = _torch()
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Bool"):
        getattr(torch.nn.functional, loss)(torch.ones(2, 3), torch.tensor([True, False]))


@task4_4
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("ignore_index", [1.5, "0", None], ids=repr)
def test_ignore_index_must_be_an_int(loss, ignore_index):
    with pytest.raises(TypeError, match=rf"{loss}\(\): argument 'ignore_index' must be int"):
        getattr(F, loss)(_logits(), torchlight.tensor([1, 0], dtype=torchlight.int64), ignore_index=ignore_index)
    torch = _torch()
    with pytest.raises(TypeError):
        getattr(torch.nn.functional, loss)(torch.ones(2, 3), torch.tensor([1, 0]), ignore_index=ignore_index)


@task4_4
def test_class_probabilities_must_be_floats():
    # an unbatched (C,) input with an int64 target of its shape: PyTorch reads probabilities, and refuses ints
    logits, target = torchlight.tensor([1.0, 2.0]), torchlight.tensor([0, 1], dtype=torchlight.int64)
    with pytest.raises(RuntimeError, match="Expected floating point type for target with class probabilities, got"):
        F.cross_entropy(logits, target)  # (was taken as probabilities [0, 1])
    assert F.cross_entropy(logits, target.double()).shape == ()
    torch = _torch()
    with pytest.raises(RuntimeError, match="Expected floating point type for target with class probabilities"):
        torch.nn.functional.cross_entropy(torch.tensor([1.0, 2.0]), torch.tensor([0, 1]))


@task4_4
def test_one_hot_refuses_a_bool_tensor():
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor"):
        F.one_hot(torchlight.tensor([1.0, 0.0]) == 1.0)  # (was read as classes 1 and 0)
    with pytest.raises(
        RuntimeError, match=r"Storage size calculation overflowed with sizes=\[2, 4611686018427387904\]"
    ):
        F.one_hot(torchlight.tensor([1, 0], dtype=torchlight.int64), 2**62)  # (was numpy's "array is too big")
    torch = _torch()
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor"):
        torch.nn.functional.one_hot(torch.tensor([True, False]))
