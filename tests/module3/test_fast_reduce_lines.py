"""Task 3.2 (the library's speed-up of it): long lines along the last dimension are folded
``fast.LINES`` at a time (``fast.lines_part``), each still from start and in order, so the results
are reduce_part's, and the simple backend's, to the bit: in every layout, with a last block of
fewer lines, with nan, infinities and signed zeros, serially and in parallel parts. The maximum of
contiguous lines has a part of its own (``fast.max_lines_part``, eight elements side by side),
held to the fold's bits, signed zeros and nan payloads included."""

import math

import numpy as np
import pytest

from torchlight import Tensor, scalar
from torchlight.backends import fast

from .fast_cases import FAST, SIMPLE, same, serial_or_parallel  # noqa: F401  (the fixture `path`)
from .strategies import LAYOUTS, layout_of

pytestmark = pytest.mark.task3_2

FOLDS = [(scalar.add, 0.0), (scalar.mul, 1.0), (scalar.max, -math.inf), (scalar.add, 2.5)]
# (lines, line length): whole blocks of LINES lines, a last block of fewer, lead dimensions
SHAPES = [(4 * fast.LINES, 40), (2 * fast.LINES + 3, 33), (3, 5, 64), (2, 3, 2, fast.LINES_MIN_LENGTH)]


def _values(shape, seed):
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape) * 2.0
    flat = values.reshape(-1)
    picks = rng.choice(flat.size, size=8, replace=False)
    flat[picks] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e308, -1e308, 5e-324]
    return values


@pytest.mark.parametrize("fn, start", FOLDS, ids=["sum", "product", "max", "sum from 2.5"])
@pytest.mark.parametrize("shape", SHAPES, ids=repr)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_long_lines_fold_as_the_simple_backend_folds(path, fn, start, shape, layout):
    values = _values(shape, seed=len(shape))
    order = list(reversed(range(len(shape))))
    a_fast = Tensor(layout_of(values, layout, order), FAST)
    a_simple = Tensor(layout_of(values, layout, order), SIMPLE)
    same(
        FAST.reduce(fn, start)(a_fast, -1),
        SIMPLE.reduce(fn, start)(a_simple, -1),
        f"reduce({fn.__name__}, start={start}) along the last dim of a {layout} {shape} tensor",
    )


def test_the_lines_part_is_the_one_that_runs():
    kernel = fast.reduce_kernel(scalar.add)
    values = _values((2 * fast.LINES + 1, 50), seed=0)
    a = Tensor.from_numpy(values, FAST)._data
    out = Tensor.from_numpy(np.zeros((2 * fast.LINES + 1, 1)), FAST)._data
    kernel(*out.kernel_args(), *a.kernel_args(), 1, 0.0)
    assert kernel._lines is not None, "a sum of 9 lines of 50 along the last dim should take lines_part"
    expected = np.zeros_like(out.storage)
    fast.reduce_kernel(scalar.add).part(0, 1, expected, *out.kernel_args()[1:], *a.kernel_args(), 1, 0.0)
    np.testing.assert_array_equal(out.storage, expected, err_msg="lines_part differs from reduce_part")


def test_short_lines_and_other_dims_keep_reduce_part():
    kernel = fast.reduce_kernel(scalar.max)
    for shape, dim in (((64, fast.LINES_MIN_LENGTH - 1), 1), ((64, 64), 0)):
        a = Tensor.from_numpy(_values(shape, seed=1), FAST)._data
        out_shape = tuple(1 if d == dim else n for d, n in enumerate(shape))
        out = Tensor.from_numpy(np.zeros(out_shape), FAST)._data
        kernel(*out.kernel_args(), *a.kernel_args(), dim, -math.inf)
    assert kernel._lines is None, "lines shorter than LINES_MIN_LENGTH, or along dim 0, take reduce_part"


@pytest.mark.parametrize("parts", [1, 3, 64])
def test_parallel_parts_of_lines(monkeypatch, parts):
    monkeypatch.setattr(fast, "PARALLEL_THRESHOLD", 0)
    monkeypatch.setattr(fast, "PARTS_PER_THREAD", parts)
    monkeypatch.setattr(fast.numba, "get_num_threads", lambda: 2)
    values = _values((5 * fast.LINES + 2, 37), seed=2)
    same(
        FAST.reduce(scalar.add, 0.0)(Tensor.from_numpy(values, FAST), 1),
        SIMPLE.reduce(scalar.add, 0.0)(Tensor.from_numpy(values, SIMPLE), 1),
        f"the sum of 22 lines of 37 in {2 * parts} parts",
    )


# -- the maximum: eight elements side by side, and the fold's order where it matters ----------

_QUIET_NAN = np.array([0x7FF8_0000_0000_0123], np.int64).view(np.float64)[0]  # a nan with a payload of its own


def _bits(t):
    """The 64 bits of every element: tells 0.0 from -0.0, and one nan from another."""
    return t.to_numpy().view(np.int64)


def _max_lines(seed, lines, n):
    """Lines where the order of the fold shows: zeros of both signs as the maximum, two nans,
    infinities, and lengths that are not a multiple of eight."""
    rng = np.random.default_rng(seed)
    values = rng.standard_normal((lines, n))
    values[0] = -np.abs(values[0])
    values[0, [3, n - 2]] = [0.0, -0.0]  # the maximum is zero: the fold keeps the later, -0.0
    values[1] = -np.abs(values[1])
    values[1, [5, 9]] = [-0.0, 0.0]  # +0.0
    values[2, [4, 20]] = [_QUIET_NAN, np.nan]  # the first nan, payload and all
    values[3, 7] = np.inf
    values[4] = -np.inf
    values[5, [1, n - 1]] = [-np.inf, np.inf]
    values[6] = -np.abs(values[6])  # all negative: from start 0.0 or -0.0 the result is start
    return values


@pytest.mark.parametrize("start", [-math.inf, 0.0, -0.0, -1.0, np.nan], ids=repr)
@pytest.mark.parametrize("n", [fast.LINES_MIN_LENGTH, 33, 63, 100])
def test_the_max_of_long_lines_is_the_folds_to_the_bit(path, start, n):
    values = _max_lines(seed=n, lines=2 * fast.LINES + 3, n=n)
    expected = _bits(SIMPLE.reduce(scalar.max, start)(Tensor.from_numpy(values, SIMPLE), 1))
    got = _bits(FAST.reduce(scalar.max, start)(Tensor.from_numpy(values, FAST), 1))
    np.testing.assert_array_equal(got, expected, err_msg=f"max from {start} of lines of {n}, bits")
    if start == -math.inf:  # the cases above are really there
        assert expected[0] == np.array(-0.0).view(np.int64) and expected[1] == 0
        assert expected[2] == np.array(_QUIET_NAN).view(np.int64)


def test_max_takes_its_own_part_on_contiguous_lines_and_lines_part_on_strided_ones():
    kernel = fast.reduce_kernel(scalar.max)
    values = _max_lines(seed=0, lines=2 * fast.LINES, n=40)
    out = Tensor.from_numpy(np.zeros((2 * fast.LINES, 1)), FAST)._data
    contiguous = Tensor.from_numpy(values, FAST)._data
    strided = Tensor.from_numpy(values.T.copy(), FAST)._data.permute(1, 0)  # lines 2 * LINES apart
    assert kernel._lines_or_part((*out.kernel_args(), *contiguous.kernel_args(), 1, -math.inf)) is fast.max_lines_part
    assert kernel._lines_or_part((*out.kernel_args(), *strided.kernel_args(), 1, -math.inf)) is kernel._lines
    assert fast.reduce_kernel(scalar.add)._max_lines is None  # the sum's order is the fold's: lines_part
    same(
        FAST.reduce(scalar.max, -math.inf)(Tensor(strided, FAST), 1),
        SIMPLE.reduce(scalar.max, -math.inf)(Tensor.from_numpy(values, SIMPLE), 1),
        "max along strided lines",
    )
