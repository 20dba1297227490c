"""Task 3.2: the fast backend's reduce gives exactly the simple backend's answers: the same values
folded in the same order, along every dimension, in every layout, on the serial and the parallel
path. (Map and zip are stage 3.1's: test_fast_ops.py.)"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import torchlight
from torchlight import Tensor, scalar
from torchlight.backends import fast, fast_parallel
from torchlight.tensor_data import TensorData

from .fast_cases import FAST, SIMPLE, pair, run_python, same, serial_or_parallel  # noqa: F401  (the fixture `path`)
from .strategies import LAYOUTS, layout_of, shapes

pytestmark = pytest.mark.task3_2


@pytest.mark.parametrize(
    "fn, start", [(scalar.add, 0.0), (scalar.mul, 1.0), (scalar.max, -math.inf)], ids=["add", "mul", "max"]
)
@given(data=st.data())
def test_reduce_equals_simple_along_every_dim(path, fn, start, data):
    a_fast, a_simple = data.draw(pair(data.draw(shapes(min_dims=1, max_dims=4, max_side=5))))
    dim = data.draw(st.integers(0, a_fast.dims - 1))
    same(
        FAST.reduce(fn, start)(a_fast, dim),
        SIMPLE.reduce(fn, start)(a_simple, dim),
        f"reduce({fn.__name__}, start={start}) along dim {dim} of shape {a_fast.shape}",
    )


def test_reduce_order_is_the_simple_backends_exactly(path):
    # 1e16 + 1 - 1e16 depends on the order of the additions: a reordered sum gives 0 or 2, not 1.
    values = np.array([[1e16, 1.0, -1e16, 1.0], [1.0, 1e16, 1.0, -1e16]])
    for dim in (0, 1):
        for name, a in (("rows", values), ("columns", values.T.copy())):
            same(
                FAST.reduce(scalar.add, 0.0)(Tensor.from_numpy(a, FAST), dim),
                SIMPLE.reduce(scalar.add, 0.0)(Tensor.from_numpy(a, SIMPLE), dim),
                f"the sum along dim {dim} of {a.tolist()} laid out by {name} (folded from index 0 up)",
            )


def test_larger_tensors_in_every_layout(path):
    rng = np.random.default_rng(3)
    values = rng.standard_normal((6, 7, 33))
    for layout in LAYOUTS:
        a_fast, a_simple = (
            Tensor(layout_of(values, layout, (2, 0, 1)), FAST),
            Tensor(layout_of(values, layout, (2, 0, 1)), SIMPLE),
        )
        for dim in range(3):
            same(
                FAST.reduce(scalar.add, 0.0)(a_fast, dim),
                SIMPLE.reduce(scalar.add, 0.0)(a_simple, dim),
                f"the sum along dim {dim} of a {layout} (6, 7, 33) tensor",
            )
    if path == "parallel" and fast.numba.get_num_threads() > 1:  # the launcher really ran
        assert fast.parallel_reduce in fast_parallel._compiled


def test_zero_dim_and_empty_tensors(path):
    x = torchlight.tensor(2.5, backend=FAST)
    got = FAST.reduce(scalar.add, 0.0)(x, 0).item()
    assert got == 2.5, f"the sum of the 0-d tensor 2.5 along dim 0 gave {got}"
    empty = torchlight.zeros(0, 3, backend=FAST)
    got = FAST.reduce(scalar.add, 0.0)(empty, 0).tolist()
    assert got == [[0.0, 0.0, 0.0]], f"the sum of a (0, 3) tensor along dim 0 (no values: start, 0.0) gave {got}"
    shape = FAST.reduce(scalar.max, -math.inf)(empty, 1).shape
    assert shape == (0, 1), f"the max of a (0, 3) tensor along dim 1 has shape {shape}"


def test_storages_the_compiled_signature_does_not_take_still_work():
    readonly = np.arange(6.0)
    readonly.flags.writeable = False
    strided = np.arange(12.0)[::2]  # a 1-D storage with a stride: not contiguous
    for storage in (readonly, strided):
        a = Tensor(TensorData(storage, (2, 3)), FAST)
        np.testing.assert_array_equal(
            FAST.reduce(scalar.add, 0.0)(a, 1).to_numpy(), storage.reshape(2, 3).sum(1, keepdims=True)
        )


def test_parallel_results_do_not_depend_on_the_number_of_parts(monkeypatch):
    monkeypatch.setattr(fast, "PARALLEL_THRESHOLD", 0)
    rng = np.random.default_rng(0)
    values = rng.standard_normal((37, 41))
    a = Tensor.from_numpy(values, FAST).permute(1, 0)
    a_simple = Tensor.from_numpy(values, SIMPLE).permute(1, 0)
    for parts in (1, 3, 8, 64):
        monkeypatch.setattr(fast, "PARTS_PER_THREAD", parts)
        monkeypatch.setattr(fast.numba, "get_num_threads", lambda: 2)
        for dim in (0, 1):  # whole rows of out at a time, and one line per element of out
            same(
                FAST.reduce(scalar.add, 0.0)(a, dim),
                SIMPLE.reduce(scalar.add, 0.0)(a_simple, dim),
                f"the sum along dim {dim} of a (41, 37) permuted tensor in {2 * parts} parts",
            )


def test_the_parallel_path_needs_no_tbb_or_openmp():
    # (the same for the matrix product: test_fast_matmul.py, task 3.3)
    code = (
        "import numba, numpy as np, torchlight\n"
        "from torchlight import scalar\n"
        "from torchlight.backends import fast\n"
        "fast.PARALLEL_THRESHOLD = 0\n"
        "x = torchlight.tensor(np.arange(12.0).reshape(3, 4), backend='fast')\n"
        "total = x.backend.reduce(scalar.add, 0.0)(x.backend.zip(scalar.mul)(x, x), 1).tolist()\n"
        "print(numba.threading_layer(), total == [[14.0], [126.0], [366.0]])\n"
    )
    run = run_python(code, NUMBA_THREADING_LAYER="workqueue", NUMBA_NUM_THREADS="2")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["workqueue", "True"]
