"""Task 3.1: the fast backend's map and zip give exactly the simple backend's answers.

Every case runs twice: on the serial path (the one small tensors take) and on the parallel path
(forced by a zero threshold), on contiguous, permuted, strided and broadcast inputs. Reduce is
stage 3.2's: test_fast_reduce.py.
"""

import math
import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import torchlight
from torchlight import Tensor, scalar
from torchlight.backends import fast, fast_cache, fast_parallel
from torchlight.tensor_data import TensorData

from .fast_cases import FAST, SIMPLE, compiled_as, pair, run_python, same, serial_or_parallel  # noqa: F401  (the fixture `path`)
from .strategies import LAYOUTS, broadcast_shapes, floats, layout_of

pytestmark = pytest.mark.task3_1


MAPS = [
    scalar.neg,
    scalar.id,
    scalar.exp,
    scalar.sigmoid,
    scalar.relu,
    scalar.tanh,
    scalar.abs,
    scalar.sign,
    scalar.inv,
]
ZIPS = [
    scalar.add,
    scalar.sub,
    scalar.mul,
    scalar.div,
    scalar.max,
    scalar.lt,
    scalar.eq,
    scalar.relu_back,
    scalar.is_close,
]


@pytest.mark.parametrize("fn", MAPS, ids=lambda f: f.__name__)
@given(data=st.data())
def test_map_equals_simple(path, fn, data):
    a_fast, a_simple = data.draw(pair())
    same(FAST.map(fn)(a_fast), SIMPLE.map(compiled_as(fn))(a_simple))


@pytest.mark.parametrize("fn", ZIPS, ids=lambda f: f.__name__)
@given(data=st.data())
def test_zip_equals_simple_on_broadcast_strided_inputs(path, fn, data):
    shape_a, shape_b = data.draw(broadcast_shapes(max_dims=4, max_side=4))
    elements = st.sampled_from([-1.0, 0.0, 0.5, 2.0]) if fn is scalar.eq else floats(-5, 5)
    a_fast, a_simple = data.draw(pair(shape_a, elements))
    b_fast, b_simple = data.draw(pair(shape_b, elements))
    same(FAST.zip(fn)(a_fast, b_fast), SIMPLE.zip(fn)(a_simple, b_simple))


def test_larger_tensors_in_every_layout(path):
    rng = np.random.default_rng(3)
    values = rng.standard_normal((6, 7, 33))
    for layout in LAYOUTS:
        a_fast, a_simple = (
            Tensor(layout_of(values, layout, (2, 0, 1)), FAST),
            Tensor(layout_of(values, layout, (2, 0, 1)), SIMPLE),
        )
        row = rng.standard_normal((1, 33))
        same(
            FAST.zip(scalar.mul)(a_fast, Tensor.from_numpy(row, FAST)),
            SIMPLE.zip(scalar.mul)(a_simple, Tensor.from_numpy(row, SIMPLE)),
            f"zip(mul) of a {layout} (6, 7, 33) tensor and a (1, 33) row",
        )
        same(
            FAST.map(scalar.sigmoid)(a_fast),
            SIMPLE.map(compiled_as(scalar.sigmoid))(a_simple),
            f"map(sigmoid) of a {layout} (6, 7, 33) tensor",
        )
    if path == "parallel" and fast.numba.get_num_threads() > 1:  # the launchers really ran
        assert {fast.parallel_map, fast.parallel_zip} <= set(fast_parallel._compiled)


def test_zero_dim_and_empty_tensors(path):
    x = torchlight.tensor(2.5, backend=FAST)
    got = FAST.map(scalar.neg)(x).item()
    assert got == -2.5, f"map(neg) of the 0-d tensor 2.5 gave {got}"
    got = FAST.zip(scalar.mul)(x, torchlight.tensor([1.0, 2.0], backend=FAST)).tolist()
    assert got == [2.5, 5.0], f"zip(mul) of the 0-d 2.5 (broadcast) and [1.0, 2.0] gave {got}"
    got = FAST.zip(scalar.mul)(x, x).item()
    assert got == 6.25, f"zip(mul) of the 0-d 2.5 and itself gave {got}"
    empty = torchlight.zeros(0, 3, backend=FAST)
    shape = FAST.map(scalar.exp)(empty).shape
    assert shape == (0, 3), f"map(exp) of a (0, 3) tensor has shape {shape}"
    shape = FAST.zip(scalar.add)(empty, torchlight.ones(3, backend=FAST)).shape
    assert shape == (0, 3), f"zip(add) of a (0, 3) tensor and a (3,) one has shape {shape}"


def test_out_may_be_a_strided_view(path):
    big = torchlight.zeros(4, 6, backend=FAST)
    window = big[1:3, ::2]
    FAST.map(scalar.id)(torchlight.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], backend=FAST), out=window)
    expected = np.zeros((4, 6))
    expected[1:3, ::2] = [[1, 2, 3], [4, 5, 6]]
    np.testing.assert_array_equal(big.to_numpy(), expected)


def test_division_by_zero_and_domain_edges_give_inf_and_nan_not_errors():
    a = torchlight.tensor([1.0, -1.0, 0.0], backend=FAST)
    zero = torchlight.zeros(3, backend=FAST)
    result = FAST.zip(scalar.div)(a, zero).to_numpy()
    assert result[0] == math.inf and result[1] == -math.inf and math.isnan(result[2]), (
        f"zip(div) of [1.0, -1.0, 0.0] and zeros gave {result.tolist()}, not [inf, -inf, nan]"
    )
    got = FAST.map(scalar.inv)(zero).tolist()
    assert got == [math.inf] * 3, f"map(inv) of [0.0, 0.0, 0.0] gave {got}"


def _halve(x):
    return 0.5 * scalar.relu(x)  # a user function calling one of torchlight.scalar's operators


# A lambda cannot be imported: its kernels are compiled in memory, once per process (one object
# for both paths, so once, not twice).
_square = lambda x: x * x  # noqa: E731


def test_any_function_can_be_lifted_importable_or_not(path):
    a = torchlight.tensor([[-2.0, 3.0], [4.0, -1.0]], backend=FAST)
    assert FAST.map(_halve)(a).tolist() == [[0.0, 1.5], [2.0, 0.0]]
    assert FAST.map(_square)(a).tolist() == [[4.0, 9.0], [16.0, 1.0]]


def test_a_second_backend_on_the_same_kernels_reuses_the_compiled_parts():
    from torchlight.backends.base import TensorBackend

    FAST.zip(scalar.add)(torchlight.ones(2, backend=FAST), torchlight.ones(2, backend=FAST))
    other = TensorBackend(fast, "fast-again")
    a = Tensor(TensorData(np.array([1.0, 2.0]), (2,)), other)
    assert other.zip(scalar.add)(a, a).tolist() == [2.0, 4.0]


def test_a_function_numba_cannot_compile_gets_a_clear_error():
    def as_text(x):
        return float(str(x))

    with pytest.raises(TypeError, match="cannot compile .*as_text.* use the 'simple' backend"):
        FAST.map(as_text)(torchlight.tensor([1.0], backend=FAST))


def test_storages_the_compiled_signature_does_not_take_still_work():
    readonly = np.arange(6.0)
    readonly.flags.writeable = False
    strided = np.arange(12.0)[::2]  # a 1-D storage with a stride: not contiguous
    for storage in (readonly, strided):
        a = Tensor(TensorData(storage, (2, 3)), FAST)
        np.testing.assert_array_equal(FAST.map(scalar.neg)(a).to_numpy(), -storage.reshape(2, 3))
        np.testing.assert_array_equal(FAST.zip(scalar.add)(a, a).to_numpy(), 2 * storage.reshape(2, 3))


def test_kernels_are_cached_on_disk_named_by_function_and_source(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHLIGHT_CACHE_DIR", str(tmp_path))
    module = tmp_path / "tl_cache_probe.py"
    module.write_text("def triple(x):\n    return 3.0 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import tl_cache_probe

    parts = fast_cache.kernels_for(tl_cache_probe.triple, fast.TEMPLATES, fast.HELPERS, fast.SOURCES)
    generated = parts.__file__
    assert os.path.dirname(generated) == fast_cache.cache_dir() == str(tmp_path / "fast_kernels")
    assert os.path.basename(generated).startswith("tl_tl_cache_probe_triple_")
    text = open(generated).read()
    assert "import tl_cache_probe as _home" in text and "def map_part(" in text
    # An edit to the function's source file gives another file name: stale code is never loaded.
    module.write_text("def triple(x):\n    return 3.0 * x  # edited\n")
    fast_cache._modules.clear()
    again = fast_cache.kernels_for(tl_cache_probe.triple, fast.TEMPLATES, fast.HELPERS, fast.SOURCES)
    assert again.__file__ != generated and os.path.exists(again.__file__)
    assert not os.path.exists(generated)  # the stale version was deleted
    fast_cache.clear()
    assert not (tmp_path / "fast_kernels").exists()


def test_parallel_results_do_not_depend_on_the_number_of_parts(monkeypatch):
    monkeypatch.setattr(fast, "PARALLEL_THRESHOLD", 0)
    rng = np.random.default_rng(0)
    values, row = rng.standard_normal((37, 41)), rng.standard_normal(37)
    a = Tensor.from_numpy(values, FAST).permute(1, 0)  # (41, 37), not contiguous: one row at a time
    a_simple = Tensor.from_numpy(values, SIMPLE).permute(1, 0)
    for parts in (1, 3, 8, 64):  # parts that begin and end inside rows, and parts with no elements
        monkeypatch.setattr(fast, "PARTS_PER_THREAD", parts)
        monkeypatch.setattr(fast.numba, "get_num_threads", lambda: 2)
        same(FAST.map(scalar.exp)(a), SIMPLE.map(compiled_as(scalar.exp))(a_simple), f"map in {2 * parts} parts")
        same(
            FAST.zip(scalar.mul)(a, Tensor.from_numpy(row, FAST)),
            SIMPLE.zip(scalar.mul)(a_simple, Tensor.from_numpy(row, SIMPLE)),
            f"zip in {2 * parts} parts",
        )


def _run(code, **env):
    return run_python(code, **env)


def test_numba_num_threads_is_honoured():
    code = (
        "import numba, numpy as np, torchlight\n"
        "from torchlight import scalar\n"
        "from torchlight.backends import fast\n"
        "fast.PARALLEL_THRESHOLD = 0\n"
        "x = torchlight.tensor(np.arange(6.0).reshape(2, 3), backend='fast')\n"
        "print(numba.get_num_threads(), x.backend.zip(scalar.add)(x, x).tolist())\n"
    )
    run = _run(code, NUMBA_NUM_THREADS="1")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split(maxsplit=1) == ["1", "[[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]\n"]


def test_default_backend_is_fast_and_a_missing_numba_says_what_to_do():
    run = _run("import torchlight; print(torchlight.zeros(1).backend.name)", TORCHLIGHT_BACKEND="")
    assert run.stdout.strip() == "fast", run.stderr
    code = (
        "import sys, warnings; sys.modules['numba'] = None  # as if numba were not installed\n"
        "import torchlight\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    print(torchlight.zeros(1).backend.name)\n"
        "print(caught[0].message)\n"
        "try:\n"
        "    torchlight.backends.get('fast')\n"
        "except torchlight.backends.BackendUnavailable as e:\n"
        "    print(e)\n"
    )
    run = _run(code, TORCHLIGHT_BACKEND="")
    lines = run.stdout.splitlines()
    assert run.returncode == 0, run.stderr
    assert lines[0] == "simple"
    assert "numba is not installed" in lines[1] and "pip install" in lines[1]
    assert "the 'fast' backend needs numba" in lines[2] and "pip install" in lines[2]
