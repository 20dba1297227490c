"""Task 5.2: PyTorch's in-place operators on torchlight (issue 14): ``+= -= *= /=``, ``copy_``,
writes into int64 and bool tensors, and ``w.grad = None``, with PyTorch's semantics: the tensor
itself changes (same object, same storage, version bumped), a leaf that requires grad may change
only under ``no_grad``, and gradients through in-place changes match PyTorch's."""

import numpy as np
import pytest

import torchlight

pytestmark = pytest.mark.task5_2

A = np.array([[0.5, -1.5, 2.0], [3.0, -0.25, 1.0]])
B = np.array([-1.0, 0.5, 2.0])


def test_update_under_no_grad_changes_the_leaf_itself():
    w = torchlight.tensor(A, requires_grad=True)
    storage, version = w._data.storage, w._version
    (w * w).sum().backward()
    with torchlight.no_grad():
        alias = w
        w -= 0.1 * w.grad
        w += 1.0
        w *= 2.0
        w /= 4.0
        w.grad = None
    assert w is alias and w._data.storage is storage, "w -= ... under no_grad should change w itself, not rebind it"
    assert w._version == version + 4, f"four in-place updates: w._version should be {version + 4}, got {w._version}"
    assert w.is_leaf and w.requires_grad, (
        f"w should stay a leaf that requires grad (is_leaf={w.is_leaf}, requires_grad={w.requires_grad})"
    )
    assert w.grad is None, "w.grad = None should clear the gradient"
    np.testing.assert_allclose(w.to_numpy(), ((A - 0.1 * 2 * A) + 1.0) * 2.0 / 4.0)
    (w * 3.0).sum().backward()  # a fresh gradient, not added to the old one
    np.testing.assert_array_equal(w.grad.to_numpy(), np.full(A.shape, 3.0))


@pytest.mark.parametrize("update", ["+=", "-=", "*=", "/="])
def test_update_of_a_leaf_outside_no_grad_is_refused(update):
    w = torchlight.tensor(A, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        exec(f"w {update} 2.0")
    np.testing.assert_array_equal(w.to_numpy(), A)  # refused before anything was written


def test_gradients_through_in_place_operators_match_torch():
    torch = pytest.importorskip("torch")
    results = []
    for m in (torchlight, torch):
        a, b = (m.tensor(x, dtype=m.float64, requires_grad=True) for x in (A, B))
        x = a * 2.0
        x += b
        x *= a
        x -= b * b
        x /= b + 3.0
        x.sin().sum().backward()
        results.append([x.detach().numpy().copy(), a.grad.numpy().copy(), b.grad.numpy().copy()])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


def test_a_saved_value_changed_in_place_is_an_error():
    a = torchlight.tensor(B, requires_grad=True)
    y = a.exp()  # saves its output for backward
    y += 1.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_integer_and_bool_tensors_keep_their_dtype():
    i = torchlight.arange(4)
    i += 1
    i *= 2
    i -= torchlight.tensor([1, 1, 1, 1], dtype=torchlight.long)
    assert i.dtype is torchlight.int64 and i.tolist() == [1, 3, 5, 7]
    for update, message in (("i += 1.5", "Float can't be cast to the desired output type Long"),
                            ("i *= torchlight.ones(4)", "Float can't be cast to the desired output type Long"),
                            ("i /= 2", "Float can't be cast to the desired output type Long"),
                            ("mask += 1", "Long can't be cast to the desired output type Bool")):  # fmt: skip
        mask = i > 2
        with pytest.raises(RuntimeError, match=f"result type {message}"):
            exec(update)
    assert i.tolist() == [1, 3, 5, 7]
    i[0] = 2.7  # writing converts, as PyTorch: truncated toward zero
    i[1:3] = torchlight.tensor([-1.5, 9.9])
    assert i.tolist() == [2, -1, 9, 7] and i.dtype is torchlight.int64
    assert i.fill_(3.9).tolist() == [3, 3, 3, 3]
    mask = torchlight.zeros(3, dtype=torchlight.bool)
    mask[1] = 5.0
    assert mask.tolist() == [False, True, False]


def test_copy_writes_values_and_passes_gradients_like_torch():
    torch = pytest.importorskip("torch")
    results = []
    for m in (torchlight, torch):
        a, b = (m.tensor(x, dtype=m.float64, requires_grad=True) for x in (A, B))
        x = a * 3.0
        out = x.copy_(b * b)  # b broadcasts over x's rows; x's own values are gone
        assert out is x
        (x * a).sum().backward()
        results.append([x.detach().numpy().copy(), a.grad.numpy().copy(), b.grad.numpy().copy()])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


def test_copy_between_backends_and_dtypes():
    target = torchlight.zeros(3, backend="simple")
    target.copy_(torchlight.tensor(B, backend="fast"))
    assert target.tolist() == B.tolist() and target.backend.name == "simple"
    ints = torchlight.zeros(3, dtype=torchlight.long)
    ints.copy_(torchlight.tensor([1.9, -2.9, 0.5]))
    assert ints.tolist() == [1, -2, 0]
    with pytest.raises(RuntimeError, match="the source's shape \\[2, 3\\] does not broadcast to the tensor's \\[3\\]"):
        target.copy_(torchlight.zeros(2, 3))
