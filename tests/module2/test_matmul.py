"""Task 2.5: matrix products. The simple backend's matmul kernel against numpy (vectors, batches
that broadcast, a batch of one whatever its stride, the errors' wording), and MatMul's gradients
against central differences and PyTorch; torch.mm/matmul/bmm's forms."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import torchlight
from torchlight import backends
from torchlight.autograd import gradcheck
from torchlight.backends import simple

from .strategies import tensors
from .test_autodiff import compare_with_torch, torch_leaf
from .test_torch_api import A, B, T, assert_values

pytestmark = pytest.mark.task2_5

MATMUL_SHAPES = [
    ((3,), (3,)),
    ((3,), (3, 2)),
    ((2, 3), (3,)),
    ((2, 3), (3, 4)),
    ((1, 1), (1, 1)),
    ((2, 2, 3), (3, 4)),
    ((3,), (2, 3, 4)),
    ((2, 2, 3), (3,)),
    ((2, 2, 3), (2, 3, 1)),
    ((2, 1, 2, 3), (3, 3, 2)),
    ((1, 2, 3), (2, 1, 3, 2)),
]


@pytest.mark.parametrize("shape_a, shape_b", MATMUL_SHAPES, ids=repr)
@given(data=st.data())
def test_matrix_multiply_matches_numpy(backend_name, shape_a, shape_b, data):
    backend = backends.get(backend_name)
    a, va = data.draw(tensors(backend, shape=shape_a))
    b, vb = data.draw(tensors(backend, shape=shape_b))
    out = backend.matrix_multiply(a, b)
    expected = np.matmul(va, vb)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose((a @ b).to_numpy(), expected, rtol=1e-12, atol=1e-12)


def test_matmul_of_a_broadcast_batch_that_needs_a_copy(backend_name):
    # a batch dim of size 1 between two real ones: no single stride walks the expanded batch
    backend = backends.get(backend_name)
    va = np.arange(2 * 1 * 3 * 2 * 2, dtype=float).reshape(2, 1, 3, 2, 2)
    vb = np.arange(4 * 3 * 2 * 1, dtype=float).reshape(4, 3, 2, 1) - 5
    out = torchlight.tensor(va, backend=backend) @ torchlight.tensor(vb, backend=backend)
    np.testing.assert_allclose(out.to_numpy(), va @ vb)


@pytest.mark.parametrize("one", ["a", "b"])
def test_the_matmul_kernel_broadcasts_a_batch_of_one_whatever_its_stride(one):
    # The kernel's own contract (backends/base.py): a batch of size 1 broadcasts, even when its
    # batch stride is not 0 (the backend passes 0; a kernel must not rely on it).
    rng = np.random.default_rng(0)
    va = rng.standard_normal((1 if one == "a" else 3, 2, 4))
    vb = rng.standard_normal((1 if one == "b" else 3, 4, 5))
    out = np.zeros((3, 2, 5))

    def args(v):
        return v.reshape(-1), np.array(v.shape, np.int64), np.array([s // 8 for s in v.strides], np.int64)

    simple.matmul_kernel(*args(out), *args(va), *args(vb))  # out.reshape(-1) is a view: the kernel writes out
    np.testing.assert_allclose(out, va @ vb, rtol=1e-12, atol=1e-12)


def test_matmul_errors_name_the_shapes(backend_name):
    a = torchlight.zeros(2, 3, backend=backend_name)
    with pytest.raises(RuntimeError, match=r"shapes \(2, 3\) and \(4, 5\) cannot be multiplied \(2x3 and 4x5\)"):
        a @ torchlight.zeros(4, 5, backend=backend_name)
    with pytest.raises(RuntimeError, match="at least 1D, but they are 2D and 0D"):
        a @ torchlight.tensor(1.0, backend=backend_name)
    with pytest.raises(RuntimeError, match="batch dimensions"):
        torchlight.zeros(2, 2, 3, backend=backend_name) @ torchlight.zeros(3, 3, 4, backend=backend_name)


# Smaller than MATMUL_SHAPES: gradcheck perturbs every element of both inputs.
GRAD_SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 2)),
    ((2, 3), (3, 2)),
    ((2, 1, 3), (2, 3, 2)),
    ((2, 2, 3), (3, 1)),
]


@pytest.mark.parametrize("shape_a, shape_b", GRAD_SHAPES, ids=repr)
@given(data=st.data())
def test_matmul_gradcheck(backend_name, shape_a, shape_b, data):
    backend = backends.get(backend_name)
    a, _ = data.draw(tensors(backend, shape=shape_a, requires_grad=True))
    b, _ = data.draw(tensors(backend, shape=shape_b, requires_grad=True))
    assert gradcheck(lambda x, y: x @ y, (a, b))


@pytest.mark.parametrize("shape_a, shape_b", GRAD_SHAPES, ids=repr)
@given(data=st.data())
def test_matmul_matches_torch(backend_name, shape_a, shape_b, data):
    torch = pytest.importorskip("torch")
    backend = backends.get(backend_name)
    a, va = data.draw(tensors(backend, shape=shape_a, requires_grad=True))
    b, vb = data.draw(tensors(backend, shape=shape_b, requires_grad=True))
    compare_with_torch(torch, lambda x, y: x @ y, [a, b], [torch_leaf(torch, va), torch_leaf(torch, vb)], data)


def test_matmul_forms(backend_name):
    a, b = T(A, backend_name), T(A.T, backend_name)
    assert_values(torchlight.mm(a, b), A @ A.T)
    assert_values(torchlight.matmul(a, T(B, backend_name)), A @ B)
    batch = np.stack([A, 2 * A])
    assert_values(
        torchlight.bmm(T(batch, backend_name), T(batch.transpose(0, 2, 1), backend_name)),
        batch @ batch.transpose(0, 2, 1),
    )
    with pytest.raises(RuntimeError, match="self must be a matrix"):
        torchlight.mm(T(B, backend_name), b)
    with pytest.raises(RuntimeError, match="mat2 must be a matrix"):
        torchlight.mm(a, T(B, backend_name))
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        torchlight.bmm(a, b)
    with pytest.raises(RuntimeError, match="Expected size for first two dimensions of batch2"):
        torchlight.bmm(T(batch, backend_name), T(batch[:1].transpose(0, 2, 1), backend_name))
