"""Task 3.3: the fast backend's blocked matrix multiply against numpy: batched, broadcast over
batch dimensions, strided and transposed operands, sizes that are not multiples of the tile or
the panel, on the serial and the parallel path. And the library's unrolled 4 x 4 tile (given, not
the stage's code) against the stage's ``_dot``: the same sixteen sums. Every product here runs the
stage's kernel: the library's register tiles (``fast_tiles.py``), which take larger products once
this stage is written, have their own tests (test_fast_tiles.py)."""

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import torchlight
from torchlight import Tensor, backends, scalar
from torchlight.backends import fast_matmul, fast_tiles

from .strategies import layout_of

pytestmark = pytest.mark.task3_3

FAST = backends.get("fast")


@pytest.fixture(autouse=True, scope="module")
def stage_kernel_only():
    """Every product here on stage 3.3's kernel: the library's tiles take none (test_fast_tiles.py tests them)."""
    saved = fast_tiles.TILES_FROM
    fast_tiles.TILES_FROM = 1 << 62
    yield
    fast_tiles.TILES_FROM = saved


@pytest.fixture(params=["serial", "parallel"], scope="module")
def path(request):
    """Every product on one path: parallel (threshold 0) or serial. Set by hand for hypothesis."""
    saved = fast_matmul.MATMUL_PARALLEL_THRESHOLD
    fast_matmul.MATMUL_PARALLEL_THRESHOLD = 0 if request.param == "parallel" else 1 << 62
    yield request.param
    fast_matmul.MATMUL_PARALLEL_THRESHOLD = saved


def on_fast(values, layout="contiguous", order=None):
    return Tensor(layout_of(values, layout, order), FAST)


def check(a_values, b_values, a_layout="contiguous", b_layout="contiguous"):
    a = on_fast(a_values, a_layout, tuple(reversed(range(a_values.ndim))))
    b = on_fast(b_values, b_layout, tuple(reversed(range(b_values.ndim))))
    got = FAST.matrix_multiply(a, b).to_numpy()
    expected = np.matmul(a_values, b_values)
    what = f"the product of a {a_layout} {a_values.shape} and a {b_layout} {b_values.shape}"
    assert got.shape == expected.shape, f"{what} has shape {got.shape}, numpy's {expected.shape}"
    np.testing.assert_allclose(
        got, expected, rtol=1e-12, atol=1e-12 * max(1, a_values.shape[-1]), err_msg=f"{what} differs from numpy's"
    )


@pytest.mark.parametrize(
    "n, k, m",
    [(1, 1, 1), (3, 5, 7), (4, 4, 4), (5, 9, 6), (17, 3, 33), (65, 70, 67), (2, 300, 3), (9, 513, 10), (33, 512, 35)],
)
@pytest.mark.parametrize(
    "layouts",
    [("contiguous", "contiguous"), ("permuted", "permuted"), ("strided", "contiguous"), ("contiguous", "strided")],
    ids=lambda v: f"a_{v[0]}-b_{v[1]}",
)
def test_odd_sizes_and_layouts(path, n, k, m, layouts):
    # Sizes off the 4 x 4 tile, k across two panels of 256 (300, 513), and a row stride of 4 KiB
    # (k = 512), which the kernel must pack rather than read in place.
    rng = np.random.default_rng(n * 1000 + k * 10 + m)
    check(rng.standard_normal((n, k)), rng.standard_normal((k, m)), *layouts)


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [
        ((3, 4, 5), (3, 5, 2)),  # batched
        ((1, 4, 5), (6, 5, 2)),  # a batch of 1 broadcasts
        ((6, 4, 5), (5, 2)),  # a matrix broadcasts over a batch
        ((2, 1, 4, 5), (1, 3, 5, 6)),  # batch dims broadcast against each other
        ((5,), (2, 5, 3)),  # a vector times a batch of matrices
        ((2, 4, 5), (5,)),  # a batch of matrices times a vector
        ((7,), (7,)),  # the dot product: a 0-d result
    ],
    ids=str,
)
def test_batched_and_broadcast(path, a_shape, b_shape):
    rng = np.random.default_rng(len(a_shape) * 10 + len(b_shape))
    check(rng.standard_normal(a_shape), rng.standard_normal(b_shape))
    if len(a_shape) > 1 and len(b_shape) > 1:
        check(rng.standard_normal(a_shape), rng.standard_normal(b_shape), "strided", "permuted")


@given(data=st.data())
def test_random_shapes_against_numpy(path, data):
    batch = data.draw(st.sampled_from([(), (1,), (3,), (2, 2)]))
    n, k, m = (data.draw(st.integers(1, 20)) for _ in range(3))
    layouts = data.draw(
        st.tuples(
            st.sampled_from(["contiguous", "permuted", "strided"]),
            st.sampled_from(["contiguous", "permuted", "strided"]),
        )
    )
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    b_batch = data.draw(st.sampled_from([batch, (), (1,) * len(batch)]))
    check(rng.standard_normal(batch + (n, k)), rng.standard_normal(b_batch + (k, m)), *layouts)


@pytest.mark.parametrize(
    "kc, lda, ldb, out_strides",
    [(1, 1, 1, (4, 1)), (3, 5, 3, (4, 1)), (8, 8, 11, (1, 4)), (257, 300, 257, (9, 2))],
    ids=lambda v: str(v),
)
def test_the_unrolled_tile_is_sixteen_dots(kc, lda, ldb, out_strides):
    # _tile (given) adds row r of a times row c of b into out's (r, c), for r, c in 0..3: each of
    # them what _dot (yours) gives. Rows lda and ldb apart, starting past the arrays' first values.
    rng = np.random.default_rng(kc)
    a, b = rng.standard_normal(7 + 3 * lda + kc), rng.standard_normal(5 + 3 * ldb + kc)
    so_r, so_c = out_strides
    before = rng.standard_normal(2 + 3 * (so_r + so_c) + 1)
    out = before.copy()
    fast_matmul._tile(a, 7, lda, b, 5, ldb, kc, out, 2, so_r, so_c)
    for r in range(4):
        for c in range(4):
            at = 2 + r * so_r + c * so_c
            dot = fast_matmul._dot(a, 7 + r * lda, b, 5 + c * ldb, kc)
            assert np.isclose(out[at] - before[at], dot, rtol=1e-12, atol=1e-12 * kc), (
                f"the tile's ({r}, {c}) sum is {out[at] - before[at]}, _dot of the same rows (kc = {kc}) gives {dot}"
            )


def test_expanded_operands_with_zero_strides(path):
    row = torchlight.tensor([[1.0, 2.0, 3.0]], backend=FAST).expand(4, 3)  # every row the same: stride 0
    b = torchlight.tensor(np.arange(6.0).reshape(3, 2), backend=FAST)
    np.testing.assert_allclose((row @ b).to_numpy(), np.tile([[16.0, 22.0]], (4, 1)))
    column = torchlight.tensor([[2.0], [1.0], [0.5]], backend=FAST).expand(3, 5)
    np.testing.assert_allclose((b.permute(1, 0) @ column).to_numpy(), np.tile([[4.0], [7.5]], (1, 5)))


def test_a_large_product_on_both_paths_agrees_with_numpy_and_with_itself():
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((3, 130, 300)), rng.standard_normal((300, 70))
    results = []
    saved = fast_matmul.MATMUL_PARALLEL_THRESHOLD
    try:
        for threshold in (0, 1 << 62):
            fast_matmul.MATMUL_PARALLEL_THRESHOLD = threshold
            results.append((Tensor.from_numpy(a, FAST) @ Tensor.from_numpy(b, FAST)).to_numpy())
    finally:
        fast_matmul.MATMUL_PARALLEL_THRESHOLD = saved
    np.testing.assert_allclose(results[0], a @ b, rtol=1e-12, atol=1e-10)
    np.testing.assert_array_equal(results[0], results[1])  # same blocks, same sums: threads change nothing


def test_infinities_and_nans_propagate_as_in_numpy(path):
    a = np.array([[np.inf, 1.0], [np.nan, 0.0], [1.0, 2.0]])
    b = np.array([[1.0, 0.0], [2.0, -1.0]])
    with np.errstate(invalid="ignore"):
        expected = a @ b
    got = (on_fast(a) @ on_fast(b)).to_numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(got[~np.isnan(got)], expected[~np.isnan(expected)])


def test_gradients_of_matmul_on_fast_match_simple():
    rng = np.random.default_rng(1)
    a_values, b_values = rng.standard_normal((2, 5, 6)), rng.standard_normal((6, 3))
    grads = {}
    for name in ("simple", "fast"):
        a = torchlight.tensor(a_values, backend=name, requires_grad=True)
        b = torchlight.tensor(b_values, backend=name, requires_grad=True)
        ((a @ b) ** 2).sum().backward()
        grads[name] = (a.grad.to_numpy(), b.grad.to_numpy())
    for g_simple, g_fast in zip(grads["simple"], grads["fast"], strict=True):
        np.testing.assert_allclose(g_fast, g_simple, rtol=1e-12, atol=1e-12)


def test_products_in_several_python_threads_do_not_share_packing_buffers():
    import threading

    rng = np.random.default_rng(5)
    cases = [(rng.standard_normal((n, 300)), rng.standard_normal((300, n + 1))) for n in (9, 40, 70, 130)]
    failures = []

    def work(a_values, b_values):
        # Backend calls only: torchlight's autograd recording switch is one per process, by design.
        try:
            a = Tensor.from_numpy(a_values, FAST)
            b = FAST.map(scalar.id)(Tensor.from_numpy(b_values, FAST).permute(1, 0)).permute(1, 0)
            for _ in range(20):
                if not np.allclose(FAST.matrix_multiply(a, b).to_numpy(), a_values @ b_values, rtol=1e-12, atol=1e-10):
                    failures.append(a_values.shape)
        except Exception as e:  # an exception in a thread would otherwise pass unseen
            failures.append(repr(e))

    threads = [threading.Thread(target=work, args=case) for case in cases]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_the_matrix_product_checks_its_dot_in_python_first(monkeypatch):
    def stubbed_dot(a, ia, b, ib, kc):
        raise NotImplementedError("Task 3.3: implement _dot in torchlight/backends/fast_matmul.py")

    monkeypatch.setattr(fast_matmul, "_pointers", {})
    monkeypatch.setattr(fast_matmul, "_dot", stubbed_dot)
    with pytest.raises(NotImplementedError, match=r"^Task 3\.3: implement _dot"):
        fast_matmul._first_use()


def test_the_parallel_product_needs_no_tbb_or_openmp():
    # (moved from test_fast_ops.py, task 3.1, which keeps the map, zip and reduce half)
    code = (
        "import numba, numpy as np, torchlight\n"
        "from torchlight.backends import fast, fast_matmul\n"
        "fast.PARALLEL_THRESHOLD = fast_matmul.MATMUL_PARALLEL_THRESHOLD = 0\n"
        "x = torchlight.tensor(np.arange(12.0).reshape(3, 4), backend='fast')\n"
        "product = (x @ x.permute(1, 0)).tolist()\n"
        "print(numba.threading_layer(), product[2][0] == 62.0)\n"
    )
    env = dict(os.environ, NUMBA_THREADING_LAYER="workqueue", NUMBA_NUM_THREADS="2")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["workqueue", "True"]
