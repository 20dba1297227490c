"""The fast matrix multiply's thin path (a convolution's products: k or n small, rows of C long):
against the simple backend and the blocked kernel, on the serial and the parallel path, with a
broadcast batch, a transposed A, k off the unrolling by 4, and the shapes that must not take it."""

import numpy as np
import pytest

import torchlight
from torchlight import backends
from torchlight.backends import fast_matmul

pytestmark = pytest.mark.task3_3

FAST, SIMPLE = backends.get("fast"), backends.get("simple")


@pytest.fixture(params=["serial", "parallel"], scope="module")
def path(request):
    saved = fast_matmul.MATMUL_PARALLEL_THRESHOLD
    fast_matmul.MATMUL_PARALLEL_THRESHOLD = 0 if request.param == "parallel" else 1 << 62
    yield request.param
    fast_matmul.MATMUL_PARALLEL_THRESHOLD = saved


# (A's shape, B's shape, A transposed): each with k <= 16 or n <= 16 and m >= 32
THIN = [
    ((1, 16, 9), (3, 9, 40), False),  # a conv's forward: one weight for the batch, k = 9
    ((3, 5, 6), (3, 6, 33), False),  # k = 6: one pass of four, two single rows
    ((2, 20, 13), (2, 13, 37), False),  # n above the limit, k below it
    ((1, 40, 8), (3, 8, 36), True),  # the columns' gradient: A = weightᵀ, read across its rows
    ((2, 3, 50), (2, 50, 32), False),  # n = 3, k long: an input gradient's shape
]


@pytest.mark.parametrize(
    "a_shape, b_shape, transposed", THIN, ids=[f"{a}@{b}" + ("-a_transposed" if t else "") for a, b, t in THIN]
)
def test_thin_products_match_simple_and_blocked(path, a_shape, b_shape, transposed):
    rng = np.random.default_rng(sum(a_shape) + sum(b_shape))
    a_values = rng.standard_normal(a_shape)
    b_values = rng.standard_normal(b_shape)
    if transposed:
        a = torchlight.tensor(np.ascontiguousarray(a_values.transpose(0, 2, 1)), backend=FAST).permute(0, 2, 1)
    else:
        a = torchlight.tensor(a_values, backend=FAST)
    b = torchlight.tensor(b_values, backend=FAST)
    out_shape = (max(a_shape[0], b_shape[0]), a_shape[1], b_shape[2])
    out_strides = np.array([out_shape[1] * out_shape[2], out_shape[2], 1])
    assert fast_matmul.is_thin(out_strides, a.shape, b.shape, b._data.strides)
    got = FAST.matrix_multiply(a, b).to_numpy()
    simple = [torchlight.tensor(v, backend=SIMPLE) for v in (a_values, b_values)]
    expected = SIMPLE.matrix_multiply(*simple).to_numpy()
    assert got.shape == expected.shape == out_shape, f"{a_shape} @ {b_shape}: fast {got.shape}, simple {expected.shape}"
    # the same sums in the same order, up to fused multiply-adds
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)
    # and the blocked kernel (the tiles) agrees, up to its reassociation
    out = np.zeros(int(np.prod(out_shape)))
    fast_matmul._serial(out, np.array(out_shape), out_strides, *a._data.kernel_args(), *b._data.kernel_args())
    np.testing.assert_allclose(got, out.reshape(out_shape), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "a_shape, b_shape, b_strides, why",
    [
        ((1, 8, 9), (2, 9, 31), (279, 31, 1), "rows of C shorter than 32"),
        ((1, 17, 17), (2, 17, 40), (680, 40, 1), "k and n both above 16"),
        ((1, 8, 9), (2, 9, 40), (360, 1, 9), "B's rows not contiguous"),
    ],
    ids=["short rows of C", "k and n above 16", "B's rows not contiguous"],
)
def test_other_products_take_the_blocked_kernel(a_shape, b_shape, b_strides, why):
    out_strides = (a_shape[1] * b_shape[2], b_shape[2], 1)
    assert not fast_matmul.is_thin(out_strides, a_shape, b_shape, b_strides), why


def test_batch_rows_split_evenly_over_parts():
    # Parts that do not divide the rows (7 parts of 2 x 5 rows) still cover every row once.
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 3, 33))
    out = np.zeros(2 * 5 * 33)
    shape = lambda x: np.array(x.shape)  # noqa: E731
    strides = lambda x: np.array([s // 8 for s in x.strides])  # noqa: E731
    for p in range(7):
        fast_matmul.thin_part(
            p, 7, out, np.array([2, 5, 33]), np.array([165, 33, 1]),
            a.ravel(), shape(a), strides(a), b.ravel(), shape(b), strides(b),
        )  # fmt: skip
    np.testing.assert_allclose(out.reshape(2, 5, 33), a @ b, rtol=1e-13, atol=1e-13)
