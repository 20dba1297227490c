"""PyTorch's tutorial API where it changes tensors in place (module 5, stage 5.2's rules): ``out=``
bumps the version counter, and writing through an index of lists, ranges, tensors or masks
(``x[x < 0] = 0``) follows the rules of in-place changes; compared with PyTorch where installed.
The rest of that API is module 4's (tests/module4/test_tutorial_api.py)."""

import numpy as np
import pytest

import torchlight

pytestmark = pytest.mark.task5_2

rng = np.random.default_rng(22)
A = rng.normal(size=(3, 4))
V = rng.normal(size=4)
M = np.arange(24.0).reshape(2, 3, 4) * 0.5 - 3


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def test_out_bumps_the_version_so_a_saved_value_is_not_read_changed():
    w = torchlight.tensor(V, requires_grad=True)
    y = torchlight.tensor(V * 2)
    z = (w * y).sum()  # saves y for backward
    with torchlight.no_grad():
        torchlight.mul(torchlight.tensor(V), 3.0, out=y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def set_keys(lib):
    return [
        (lambda x: x < 0, 0.0),
        (lambda x: ([0, 2], [1, 3]), [10.0, 20.0]),
        (lambda x: (slice(None), [0]), -1.0),
        (lambda x: range(1, 3), [[7.0], [8.0]]),
        (lambda x: lib.tensor([2, 0], dtype=lib.long), 5.0),
        (lambda x: (x[:, 0] > -2, 1), [3.0, 4.0]),
    ]


@pytest.mark.parametrize("which", range(len(set_keys(torchlight))))
def test_writing_through_lists_tensors_and_masks_matches_pytorch(torch, which):
    results = []
    for lib in (torchlight, torch):
        key, value = set_keys(lib)[which]
        w = lib.tensor(M[0], dtype=lib.float64, requires_grad=True)
        v = lib.tensor(value, dtype=lib.float64, requires_grad=True)
        y = w * 1.0
        y[key(y.detach())] = v * 2.0
        (y * y * lib.tensor(M[1] + 1, dtype=lib.float64)).sum().backward()
        x = lib.tensor(M[0], dtype=lib.float64)
        x[key(x)] = value if isinstance(value, float) else lib.tensor(value, dtype=lib.float64)
        results.append([y.tolist(), w.grad.tolist(), v.grad.tolist(), x.tolist()])
    np.testing.assert_allclose(np.array(results[0][0]), np.array(results[1][0]), rtol=1e-13)
    for a, b in zip(results[0], results[1], strict=True):
        np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-13, atol=1e-15)


def test_writing_through_an_index_keeps_the_rules_of_in_place_changes():
    labels = torchlight.tensor([3, 1, 2], dtype=torchlight.long)
    labels[labels > 1] = 0
    assert labels.dtype == torchlight.long and labels.tolist() == [0, 1, 0]
    leaf = torchlight.tensor(V, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        leaf[[0]] = 1.0
    with torchlight.no_grad():
        leaf[[0, 1]] = 0.0
    assert leaf.tolist()[:2] == [0.0, 0.0]
    x = torchlight.zeros(3, 4)
    with pytest.raises(RuntimeError, match="shape mismatch: value tensor of shape \\[3\\] cannot be broadcast"):
        x[[0, 1]] = torchlight.ones(3)
    w = torchlight.tensor(V, requires_grad=True)
    y = w * 2.0
    z = y * y  # saves y
    y[[0]] = 1.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


@pytest.mark.task5_4  # gradients of second order and forward mode too
def test_a_position_written_twice_keeps_the_last_value_and_its_gradient_only():
    # PyTorch leaves the value unspecified and gives every value written there the gradient; the
    # derivative of what is kept is the last value's alone, as central differences say.
    def write(a, v):
        b = a.clone()
        b[[0, 1, 1], [2, 0, 0]] = v
        return b

    a, v = torchlight.tensor(A[:2, :3], requires_grad=True), torchlight.tensor([2.0, 3.0, 4.0], requires_grad=True)
    assert write(a, v).detach()[1, 0].item() == 4.0
    assert torchlight.autograd.gradcheck(write, (a, v))
    assert torchlight.autograd.gradgradcheck(write, (a, v))
    assert torchlight.autograd.gradcheck(write, (a, v), check_forward_ad=True)
