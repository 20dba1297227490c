"""The cuda backend's register-tiled matrix multiply (the library's, ``cuda._register_tiles``) gives
stage 3.5's products to the bit, at every edge of its tiles; and it never runs without stage 3.5.

Both kernels add each output's products from 0.0 in order of q, one multiply-add at a time, so
they agree to the bit; in numba's simulator (tests/conftest.py) both also equal the simple
backend's to the bit, which adds in that order too. (On a GPU both fuse each multiply-add, which
simple does not: there they agree with each other, and with simple to rounding.)

In the simulator a block is 2 x 2 threads, each computing 2 x 2 outputs, with tiles 2 deep along
k (``cuda.REG_THREADS``, ``REG``, ``REG_DEPTH``), so that these small products span several tiles
in every direction with partial tiles at the edges; one case runs 2 x 2 threads of 3 x 3 outputs,
3 deep. ``REGISTER_TILES_FROM`` (64: larger products only) is set to 1 here so that every product
takes the kernel. Marked as stage 3.5's: the kernel stands in for the student's only once it is
written, and with 3.5 unwritten every product raises its stub.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torchlight import Tensor, backends

from .strategies import LAYOUTS, floats, layout_of

pytestmark = pytest.mark.task3_5

try:
    CUDA = backends.get("cuda")
except backends.BackendUnavailable as e:  # (the suite runs numba's simulator: tests/conftest.py)
    pytest.skip(str(e), allow_module_level=True)
SIMPLE = backends.get("simple")
from torchlight.backends import cuda as kernels  # noqa: E402  (imported once the backend is known to run)


def product(backend, a, b, layouts=("contiguous", "contiguous")):
    """a @ b on ``backend`` (a: (..., n, k), b: (..., k, m)), each operand stored as its layout says."""
    orders = ((0, 2, 1), (2, 1, 0)) if a.ndim == 3 else ((1, 0), (1, 0))
    x = Tensor(layout_of(a, layouts[0], orders[0]), backend)
    y = Tensor(layout_of(b, layouts[1], orders[1]), backend)
    return (x @ y).to_numpy()


def register_tiled(a, b, layouts=("contiguous", "contiguous")):
    """a @ b by the register-tiled kernel; the student's kernel's and simple's products, for comparison."""
    launched = []
    run = kernels._run
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kernels, "_run", lambda kernel, *args, **kw: (launched.append(kernel), run(kernel, *args, **kw)))
        patch.setattr(kernels, "REGISTER_TILES_FROM", 1)
        got = product(CUDA, a, b, layouts)
        assert launched and all(k is kernels._register_tiles_kernel() for k in launched)
        launched.clear()
        patch.setattr(kernels, "REGISTER_TILES_FROM", 1 << 62)
        tiles = product(CUDA, a, b, layouts)
        assert launched and all(k is kernels._matmul_kernel() for k in launched)
    with np.errstate(invalid="ignore", over="ignore"):  # (inf * 0 in the simple backend's Python loop)
        return got, tiles, product(SIMPLE, a, b, layouts)


def assert_same_bits(got, *wants):
    for want in wants:
        assert got.shape == want.shape, f"shapes {got.shape} and {want.shape}"
        np.testing.assert_array_equal(
            got.view(np.int64),
            want.view(np.int64),
            err_msg=f"the register tiles' {got} and {want} differ in their bits (each sum: from 0.0, in order of q)",
        )


@pytest.mark.parametrize(
    "n, k, m",
    [(1, 1, 1), (1, 9, 1), (1, 5, 9), (9, 5, 1), (5, 3, 7), (4, 4, 8), (6, 9, 5)],
    ids=lambda v: str(v),
)
def test_every_edge_of_the_tiles_to_the_bit(n, k, m):
    # 1 x m and n x 1 products, sides that are and are not multiples of the block's tile (4) and of
    # its depth (2), one tile and several along each of n, k and m
    rng = np.random.default_rng(n * 100 + k * 10 + m)
    got, tiles, simple = register_tiled(rng.standard_normal((n, k)), rng.standard_normal((k, m)))
    assert_same_bits(got, tiles, simple)


@pytest.mark.parametrize("batches", [(2, 2), (1, 3), (3, 1)], ids=["batched", "a broadcast", "b broadcast"])
def test_batches_and_a_batch_of_one_that_broadcasts(batches):
    rng = np.random.default_rng(sum(batches))
    a, b = rng.standard_normal((batches[0], 5, 3)), rng.standard_normal((batches[1], 3, 6))
    got, tiles, simple = register_tiled(a, b)
    assert_same_bits(got, tiles, simple)


@settings(max_examples=6)
@given(data=st.data())
def test_operands_in_every_layout(data):
    # transposed (permuted) and strided operands, batched or not
    batch = data.draw(st.sampled_from([(), (2,)]))
    n, k, m = (data.draw(st.integers(1, 6)) for _ in range(3))

    def values(*shape):
        count = int(np.prod(shape))
        return np.array(data.draw(st.lists(floats(-3, 3), min_size=count, max_size=count))).reshape(shape)

    layouts = (data.draw(st.sampled_from(LAYOUTS)), data.draw(st.sampled_from(LAYOUTS)))
    got, tiles, simple = register_tiled(values(*batch, n, k), values(*batch, k, m), layouts)
    assert_same_bits(got, tiles, simple)


def test_other_tile_sizes(monkeypatch):
    # 3 x 3 outputs per thread, tiles 3 deep: the block's tile (6 x 3 values) is no multiple of its
    # threads (4), so they copy unequal shares
    monkeypatch.setattr(kernels, "REG", 3)
    monkeypatch.setattr(kernels, "REG_DEPTH", 3)
    monkeypatch.setattr(kernels, "REG_BLOCK", 2 * 3)
    monkeypatch.setattr(kernels, "REG_PADDED", 2 * 3 + 1)
    rng = np.random.default_rng(7)
    got, tiles, simple = register_tiled(rng.standard_normal((7, 8)), rng.standard_normal((8, 13)))
    assert_same_bits(got, tiles, simple)


def test_inf_and_nan_as_in_stage_3_5s_kernel():
    a = np.array([[1.0, np.inf, 0.0], [0.0, 2.0, -1.0], [np.nan, 1.0, 1.0], [-0.0, -0.0, 1e308], [1.0, 2.0, 3.0]])
    b = np.array([[1.0, 0.0, 2.0, -0.0, 1.0], [3.0, 1.0, 0.0, 1.0, -np.inf], [-0.0, 1e308, 1.0, 0.0, 2.0]])
    got, tiles, simple = register_tiled(a, b)
    assert_same_bits(got, tiles, simple)


def test_only_products_from_the_threshold_take_it(monkeypatch):
    # By default only products of 64 x 64 and more: stage 3.5's tests (all far smaller) run the
    # student's kernel, whatever this kernel does.
    assert kernels.REGISTER_TILES_FROM == 64
    launched = []
    run = kernels._run
    monkeypatch.setattr(
        kernels, "_run", lambda kernel, *args, **kw: (launched.append(kernel), run(kernel, *args, **kw))
    )
    monkeypatch.setattr(kernels, "REGISTER_TILES_FROM", 5)
    rng = np.random.default_rng(3)
    for (n, m), register in {(4, 9): False, (9, 4): False, (5, 5): True, (6, 7): True}.items():
        a, b = rng.standard_normal((n, 2)), rng.standard_normal((2, m))
        np.testing.assert_array_equal(product(CUDA, a, b), product(SIMPLE, a, b))
        want = kernels._register_tiles_kernel() if register else kernels._matmul_kernel()
        assert launched.pop() is want, (n, m)


def stubbed_tiles(out, a, b, n, k, m, o0, o1, o2, a0, a1, a2, b0, b1, b2):
    """As a student edition has stage 3.5's kernel before it is written."""
    raise NotImplementedError("Task 3.5: the tiled product in torchlight/backends/cuda.py; see the notebook")


@pytest.mark.parametrize("register_tiles_from", [1, 1 << 62], ids=["register tiles", "stage 3.5's tiles"])
def test_with_stage_3_5_unwritten_every_product_raises_its_stub(monkeypatch, register_tiles_from):
    monkeypatch.setattr(kernels, "_matmul_tiles", stubbed_tiles)
    monkeypatch.setattr(kernels, "_compiled_matmul", [])
    monkeypatch.setattr(kernels, "_compiled_register_tiles", [])
    monkeypatch.setattr(kernels, "REGISTER_TILES_FROM", register_tiles_from)
    a = np.ones((4, 4))
    for _ in range(2):  # (and again: nothing was kept from the first attempt)
        with pytest.raises(NotImplementedError, match=r"^Task 3\.5: the tiled product"):
            product(CUDA, a, a)
