"""The library's register-tiled matrix multiply (``fast_tiles.py``, given, not a stage's code) against
numpy, stage 3.3's blocked kernel and the simple backend: tiles cut at C's edges (sizes that are not
multiples of 4 x 8), k across panels and k = 0, operands read in place and packed (transposed,
strided, rows 4 KiB apart, broadcast over a batch, expanded), on the serial and the parallel path."""

import numpy as np
import pytest

import torchlight
from torchlight import Tensor, backends
from torchlight.backends import fast_matmul, fast_tiles

from .strategies import layout_of

pytestmark = pytest.mark.task3_3

FAST, SIMPLE = backends.get("fast"), backends.get("simple")


@pytest.fixture(params=["serial", "parallel"])
def tiles(request, monkeypatch):
    """Every product with at least one row and column (and not thin) on the tiles, on one path."""
    monkeypatch.setattr(fast_tiles, "TILES_FROM", 1)
    monkeypatch.setattr(fast_matmul, "THIN_MAX_INNER", -1)
    monkeypatch.setattr(fast_matmul, "MATMUL_PARALLEL_THRESHOLD", 0 if request.param == "parallel" else 1 << 62)
    return request.param


def stage_kernel(a_values, b_values, a, b):
    """The same product with stage 3.3's blocked kernel, called directly."""
    out_shape = (max(a.shape[0], b.shape[0]), a.shape[1], b.shape[2])
    out = np.zeros(int(np.prod(out_shape)))
    strides = np.array([out_shape[1] * out_shape[2], out_shape[2], 1])
    fast_matmul._serial(out, np.array(out_shape), strides, *a._data.kernel_args(), *b._data.kernel_args())
    return out.reshape(out_shape)


SHAPES = [
    (1, 1, 1),
    (1, 5, 1),
    (3, 7, 9),
    (4, 1, 8),  # one whole tile
    (5, 9, 17),  # a whole tile, and edges of 1 row and 1 column
    (7, 3, 15),  # edges of 3 rows and 7 columns
    (64, 64, 64),  # B read in place
    (65, 300, 67),  # k across two panels of 256
    (33, 512, 40),  # rows of A 4 KiB apart: packed
    (70, 20, 136),  # several blocks of 64 x 64 along both sides
]
LAYOUTS = [("contiguous", "contiguous"), ("permuted", "permuted"), ("strided", "contiguous"), ("contiguous", "strided")]


@pytest.mark.parametrize("n, k, m", SHAPES, ids=str)
@pytest.mark.parametrize("layouts", LAYOUTS, ids=lambda v: f"a_{v[0]}-b_{v[1]}")
def test_tiles_match_numpy_and_the_stage_kernel(tiles, n, k, m, layouts):
    rng = np.random.default_rng(n * 10000 + k * 100 + m)
    a_values, b_values = rng.standard_normal((1, n, k)), rng.standard_normal((1, k, m))
    a = Tensor(layout_of(a_values, layouts[0], (2, 1, 0)), FAST)
    b = Tensor(layout_of(b_values, layouts[1], (2, 1, 0)), FAST)
    got = FAST.matrix_multiply(a, b).to_numpy()
    what = f"the tiles' product of a {layouts[0]} {a_values.shape} and a {layouts[1]} {b_values.shape}"
    np.testing.assert_allclose(got, a_values @ b_values, rtol=1e-12, atol=1e-12 * k, err_msg=f"{what} vs numpy")
    np.testing.assert_allclose(
        got, stage_kernel(a_values, b_values, a, b), rtol=1e-12, atol=1e-12 * k, err_msg=f"{what} vs stage 3.3"
    )


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [((3, 9, 20), (3, 20, 17)), ((1, 9, 20), (4, 20, 17)), ((4, 9, 20), (20, 17)), ((2, 1, 6, 5), (1, 3, 5, 24))],
    ids=str,
)
def test_batched_and_broadcast_tiles(tiles, a_shape, b_shape):
    rng = np.random.default_rng(len(a_shape) + sum(b_shape))
    a_values, b_values = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    for layouts in (("contiguous", "contiguous"), ("strided", "permuted")):
        order_a, order_b = tuple(reversed(range(len(a_shape)))), tuple(reversed(range(len(b_shape))))
        a = Tensor(layout_of(a_values, layouts[0], order_a), FAST)
        b = Tensor(layout_of(b_values, layouts[1], order_b), FAST)
        np.testing.assert_allclose(FAST.matrix_multiply(a, b).to_numpy(), a_values @ b_values, rtol=1e-12, atol=1e-11)


def test_expanded_operands_and_an_empty_inner_dimension(tiles):
    row = torchlight.tensor([[1.0, 2.0, 3.0]], backend=FAST).expand(9, 3)  # every row the same: stride 0
    b = torchlight.tensor(np.arange(30.0).reshape(3, 10), backend=FAST)
    np.testing.assert_array_equal((row @ b).to_numpy(), np.tile(np.array([[1.0, 2.0, 3.0]]) @ b.to_numpy(), (9, 1)))
    empty = FAST.matrix_multiply(torchlight.zeros((6, 0), backend=FAST), torchlight.zeros((0, 9), backend=FAST))
    np.testing.assert_array_equal(empty.to_numpy(), np.zeros((6, 9)))


def test_each_value_sums_its_products_in_order_as_simple_does(tiles):
    # Row i of A is (1, 1e16, -1e16, 0, ...): in order the sum is (1 + 1e16) - 1e16 = 0 exactly (1 is
    # lost to rounding), any other order can give 1. Every value of C, tiles and edges alike, and k
    # past one panel (300 > 256: the second panel starts from what the first left in C).
    n, k, m = 9, 300, 19
    a_values = np.zeros((n, k))
    a_values[:, 0], a_values[:, 1], a_values[:, 2] = 1.0, 1e16, -1e16
    a_values[:, 260:] = np.random.default_rng(0).standard_normal((n, k - 260))
    b_values = np.ones((k, m))
    got = (torchlight.tensor(a_values, backend=FAST) @ torchlight.tensor(b_values, backend=FAST)).to_numpy()
    expected = SIMPLE.matrix_multiply(
        torchlight.tensor(a_values, backend=SIMPLE), torchlight.tensor(b_values, backend=SIMPLE)
    )
    np.testing.assert_array_equal(got, expected.to_numpy())


def test_an_output_with_columns_apart_takes_the_edge_path_everywhere():
    # The kernel writes C's rows as vectors only where they are contiguous; C transposed (its
    # columns contiguous) must come out right too, through the scratch tile.
    rng = np.random.default_rng(3)
    n, k, m = 13, 20, 17
    a_values, b_values = rng.standard_normal((n, k)), rng.standard_normal((k, m))
    out = np.zeros(n * m)
    shape = lambda *s: np.array(s)  # noqa: E731
    fast_matmul._serial(
        out,
        shape(1, n, m),
        shape(n * m, 1, n),
        a_values.ravel(),
        shape(1, n, k),
        shape(n * k, k, 1),
        b_values.ravel(),
        shape(1, k, m),
        shape(k * m, m, 1),
        kernel=fast_matmul.TILES,
    )
    np.testing.assert_allclose(out.reshape(m, n).T, a_values @ b_values, rtol=1e-12, atol=1e-12)


def test_products_from_tiles_from_take_the_tiles(monkeypatch):
    calls = []

    def spy(*args):
        calls.append((int(args[0][1]), int(args[2][2])))  # C's rows and columns
        return fast_tiles.tiles_plan(*args)

    monkeypatch.setattr(fast_matmul, "TILES", (spy,) + fast_matmul.TILES[1:])
    monkeypatch.setattr(fast_matmul, "MATMUL_PARALLEL_THRESHOLD", 1 << 62)
    rng = np.random.default_rng(1)
    for n, m in ((fast_tiles.TILES_FROM, fast_tiles.TILES_FROM), (fast_tiles.TILES_FROM - 1, 40), (40, 5)):
        a, b = rng.standard_normal((n, 20)), rng.standard_normal((20, m))
        FAST.matrix_multiply(Tensor.from_numpy(a, FAST), Tensor.from_numpy(b, FAST))
    assert calls == [(fast_tiles.TILES_FROM, fast_tiles.TILES_FROM)]


def test_compiling_with_the_vectorizer_leaves_numba_as_it_was():
    from numba import njit, types
    from numba.core import config

    saved = config.SLP_VECTORIZE
    twice = njit(lambda x: 2.0 * x)
    fast_tiles.compile_vectorized(twice, types.float64(types.float64))
    assert config.SLP_VECTORIZE == saved
    assert twice(1.5) == 3.0
    with pytest.raises(TypeError):  # compiled for its signature only
        twice(np.ones(2))
