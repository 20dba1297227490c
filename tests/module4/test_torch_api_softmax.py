"""Task 4.4: ``torchlight.softmax`` / ``log_softmax`` and the Tensor methods of those names
(issue 14: PyTorch's module-level forms) are ``torchlight.nn.functional``'s, against PyTorch."""

import numpy as np
import pytest

import torchlight
import torchlight.nn.functional as F

pytestmark = pytest.mark.task4_4

X = np.array([[0.5, -1.5, 2.0], [3.0, -0.25, 1000.0]])


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_module_level_and_method_forms_are_nn_functionals(dim):
    x = torchlight.tensor(X, requires_grad=True)
    for form in (torchlight.softmax(x, dim), x.softmax(dim), torchlight.softmax(x, dim, dtype=torchlight.float32)):
        np.testing.assert_array_equal(form.to_numpy(), F.softmax(x, dim).to_numpy())
    for form in (torchlight.log_softmax(x, dim), x.log_softmax(dim=dim)):
        np.testing.assert_array_equal(form.to_numpy(), F.log_softmax(x, dim).to_numpy())
    torchlight.log_softmax(x, dim).sum().backward()
    assert x.grad is not None and np.all(np.isfinite(x.grad.to_numpy()))


def test_softmax_forms_match_torch():
    torch = pytest.importorskip("torch")
    x, tx = torchlight.tensor(X), torch.tensor(X)
    np.testing.assert_allclose(
        torchlight.softmax(x, 1).to_numpy(), torch.softmax(tx, 1).numpy(), rtol=1e-12, atol=1e-15
    )
    np.testing.assert_allclose(x.log_softmax(0).to_numpy(), tx.log_softmax(0).numpy(), rtol=1e-12, atol=1e-12)


def test_softmax_needs_a_tensor_and_a_dtype():
    with pytest.raises(TypeError, match="softmax\\(\\): argument 'input' must be Tensor"):
        torchlight.softmax([1.0, 2.0], 0)
    with pytest.raises(TypeError, match="dtype must be a torchlight dtype"):
        torchlight.softmax(torchlight.tensor(X), 0, dtype="float")
