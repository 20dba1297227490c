"""Task 3.2 (the library's speed-up of it): long lines along the last dimension are folded
``fast.LINES`` at a time (``fast.lines_part``), each still from start and in order, so the results
are reduce_part's, and the simple backend's, to the bit: in every layout, with a last block of
fewer lines, with nan, infinities and signed zeros, serially and in parallel parts."""

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
