"""Task 3.5: the cuda backend's tiled matrix multiply gives the simple backend's products.

In numba's simulator (tests/conftest.py) the tiles are 2 x 2 (``cuda.TILE``), so that the small
matrices here span several tiles in every direction, with partial tiles at the edges; one case
runs 4 x 4 tiles. Shapes cover a batch, a batch of one that broadcasts, and operands stored
transposed or as strided views. Products equal simple's to the reassociation tolerance (a GPU may
fuse each multiply-add).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import torchlight
from torchlight import Tensor, backends

from .strategies import LAYOUTS, floats, layout_of

pytestmark = pytest.mark.task3_5

try:
    CUDA = backends.get("cuda")
except backends.BackendUnavailable as e:  # (the suite runs numba's simulator: tests/conftest.py)
    pytest.skip(str(e), allow_module_level=True)
SIMPLE = backends.get("simple")
from torchlight.backends import cuda as kernels  # noqa: E402  (imported once the backend is known to run)


def both(values, layout="contiguous", order=None):
    return Tensor(layout_of(values, layout, order), CUDA), Tensor(layout_of(values, layout, order), SIMPLE)


def close_products(a_values, b_values, got, want):
    assert type(got._data.storage) is CUDA.storage_type
    # each product is a sum of k terms: rounding relative to the sum of their magnitudes
    scale = np.abs(a_values) @ np.abs(b_values)
    g, w = got.to_numpy(), want.to_numpy()
    assert g.shape == w.shape, f"cuda's product has shape {g.shape}, simple's {w.shape}"
    assert np.all(np.abs(g - w) <= 1e-14 * scale + 1e-300), f"cuda's product {g} differs from simple's {w}"


@pytest.mark.parametrize(
    "n, k, m",
    [(1, 1, 1), (2, 2, 2), (3, 5, 2), (5, 3, 7), (1, 7, 1), (7, 1, 6), (4, 6, 4)],
    ids=lambda v: str(v),
)
def test_products_of_every_edge_of_the_tiles(n, k, m):
    rng = np.random.default_rng(n * 100 + k * 10 + m)
    a, b = rng.standard_normal((n, k)), rng.standard_normal((k, m))
    (a_cuda, a_simple), (b_cuda, b_simple) = both(a), both(b)
    close_products(a, b, CUDA.matrix_multiply(a_cuda, b_cuda), SIMPLE.matrix_multiply(a_simple, b_simple))


@settings(max_examples=6)
@given(data=st.data())
def test_batched_products_in_every_layout(data):
    batch_a, batch_b = data.draw(st.sampled_from([(2, 2), (1, 3), (3, 1), (1, 1)]))
    n, k, m = (data.draw(st.integers(1, 5)) for _ in range(3))
    elements = floats(-3, 3)
    a = np.array(data.draw(st.lists(elements, min_size=batch_a * n * k, max_size=batch_a * n * k))).reshape(
        batch_a, n, k
    )
    b = np.array(data.draw(st.lists(elements, min_size=batch_b * k * m, max_size=batch_b * k * m))).reshape(
        batch_b, k, m
    )
    layout_a, layout_b = data.draw(st.sampled_from(LAYOUTS)), data.draw(st.sampled_from(LAYOUTS))
    (a_cuda, a_simple), (b_cuda, b_simple) = both(a, layout_a, (0, 2, 1)), both(b, layout_b, (2, 1, 0))
    got, want = a_cuda @ b_cuda, a_simple @ b_simple
    close_products(a, b, got, want)


def test_larger_tiles(monkeypatch):
    monkeypatch.setattr(kernels, "TILE", 4)
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((2, 5, 9)), rng.standard_normal((9, 6))  # partial tiles along n, k and m
    (a_cuda, a_simple), (b_cuda, b_simple) = both(a), both(b)
    close_products(a, b, a_cuda @ b_cuda, a_simple @ b_simple)


def test_inf_and_nan_propagate_as_on_simple():
    a = np.array([[1.0, np.inf], [0.0, 2.0], [np.nan, 1.0]])
    b = np.array([[1.0, 0.0, 2.0], [3.0, 1.0, 0.0]])
    (a_cuda, a_simple), (b_cuda, b_simple) = both(a), both(b)
    with np.errstate(invalid="ignore"):  # (inf * 0 in the simple backend's Python loop)
        want = (a_simple @ b_simple).to_numpy()
    np.testing.assert_array_equal((a_cuda @ b_cuda).to_numpy(), want)


def test_vectors_and_empty_products():
    v = torchlight.tensor([1.0, 2.0, 3.0], backend=CUDA)
    m = torchlight.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], backend=CUDA)
    got = (v @ v).item()
    assert got == 14.0, f"[1, 2, 3] @ [1, 2, 3] gave {got}"
    got = (v @ m).tolist()
    assert got == [4.0, 5.0], f"[1, 2, 3] @ [[1, 0], [0, 1], [1, 1]] gave {got}"
    shape = (torchlight.zeros(0, 3, backend=CUDA) @ m).shape
    assert shape == (0, 2), f"a (0, 3) @ (3, 2) product has shape {shape}"
    got = (torchlight.zeros(2, 0, backend=CUDA) @ torchlight.zeros(0, 3, backend=CUDA)).tolist()
    assert got == [[0.0] * 3] * 2, f"a (2, 0) @ (0, 3) product (sums of nothing) gave {got}"
