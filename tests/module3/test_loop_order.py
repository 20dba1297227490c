"""Tasks 3.1 (map and zip) and 3.2 (reduce): large operations with a short last dimension give what
numpy gives.

For such tensors TensorBackend hands the kernels views with dimensions merged and a long one last
(backends/base.py: ``_long_rows``, ``_rows_of_reduction``), which must not change a single value:
permuted, sliced and broadcast operands, an ``out=`` view, on both backends. Module 2's tests use
small tensors, which take the plain path.
"""

import numpy as np
import pytest

import torchlight
from torchlight import scalar
from torchlight.backends import base
from torchlight.tensor_data import TensorData

BACKENDS = ["simple", "fast"]

# just over the size from which the views are made: the simple backend loops in Python
N = base.LONG_ROWS_MIN_SIZE // 8 + 3


def _tensor(a, backend):
    return torchlight.Tensor.from_numpy(np.ascontiguousarray(a), backend)


@pytest.mark.task3_1
def test_the_views_are_used_from_that_size_on():
    big, small = TensorData.zeros((N, 2, 4)), TensorData.zeros((4, 2, 4))
    assert base._long_rows(small, small) is None and base._rows_of_reduction(small, 2) is None
    views = base._long_rows(big, big)
    assert views is not None and tuple(views[0][1]) == (N * 2 * 4,)  # contiguous: one run
    assert base._long_rows(big, big.permute(1, 0, 2).contiguous().permute(1, 0, 2))[0][1][-1] == N
    assert base._rows_of_reduction(big, 2) == ((4, N * 2), (1, 4))


@pytest.mark.task3_1
def test_map_of_permuted_and_sliced_inputs(backend_name):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, N, 2))
    t = _tensor(x.transpose(1, 0, 2), backend_name).permute(1, 0, 2)  # strides (2, 8, 1)
    backend = torchlight.backends.get(backend_name)
    np.testing.assert_array_equal(backend.map(scalar.neg)(t).to_numpy(), -x)
    wide = _tensor(rng.standard_normal((N, 3, 6)), backend_name)
    sliced = wide[:, ::2, ::2]  # (N, 2, 3), every other column and row
    np.testing.assert_array_equal(backend.map(scalar.inv)(sliced).to_numpy(), 1.0 / wide.to_numpy()[:, ::2, ::2])


@pytest.mark.task3_1
def test_zip_with_broadcasting_and_out(backend_name):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((N, 3, 4)), rng.standard_normal((3, 1))
    backend = torchlight.backends.get(backend_name)
    ta, tb = _tensor(a, backend_name), _tensor(b, backend_name)
    np.testing.assert_array_equal(backend.zip(scalar.mul)(ta, tb).to_numpy(), a * b)
    np.testing.assert_array_equal(backend.zip(scalar.add)(tb, ta).to_numpy(), b + a)
    # out= a permuted view: written through its strides
    storage = _tensor(np.zeros((4, 3, N)), backend_name)
    out = storage.permute(2, 1, 0)
    backend.zip(scalar.add)(ta, tb, out=out)
    np.testing.assert_array_equal(storage.to_numpy(), (a + b).transpose(2, 1, 0))


@pytest.mark.task3_2
@pytest.mark.parametrize(
    "fn, start, reference", [(scalar.add, 0.0, np.sum), (scalar.max, -np.inf, np.max)], ids=["add", "max"]
)
def test_reduce_along_a_short_last_dimension(backend_name, fn, start, reference):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((N, 2, 4))
    backend = torchlight.backends.get(backend_name)
    for t, expected in [
        (_tensor(x, backend_name), x),
        (_tensor(x.transpose(1, 0, 2), backend_name).permute(1, 0, 2), x),  # permuted
        (_tensor(x, backend_name)[:, :, ::2], x[:, :, ::2]),  # sliced
    ]:
        out = backend.reduce(fn, start)(t, 2)
        assert out.shape == expected.shape[:2] + (1,) and out.is_contiguous()
        np.testing.assert_array_equal(out.to_numpy()[..., 0], reference(expected, axis=2))


@pytest.mark.task3_2
def test_sum_folds_in_the_same_order_as_the_plain_path():
    """Bit for bit: each element still folds its line from index 0 up."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((N, 2, 5)) * 10.0 ** rng.integers(-8, 8, (N, 2, 5))
    backend = torchlight.backends.get("fast")
    reordered = backend.reduce(scalar.add, 0.0)(_tensor(x, "fast"), 2).to_numpy()[..., 0]
    expected = np.zeros((N, 2))
    for j in range(5):
        expected = expected + x[:, :, j]
    np.testing.assert_array_equal(reordered, expected)
