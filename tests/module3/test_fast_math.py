"""The fast backend's exp, log, sigmoid and tanh (backends/fast_math.py): within a stated number of
ulps of the scalar functions (the C library's results), equal to them at every edge, the same
compiled as in Python, and what the fast backend's maps compute."""

import math

import numpy as np
import pytest
from numba import njit

from torchlight import Tensor, backends, scalar
from torchlight.backends import fast_math

# The most each may differ from the scalar function, in units in the last place (docs/backends.md).
ULPS = {"exp": 1, "log": 1, "sigmoid": 2, "tanh": 3}

# Random inputs over each function's interesting range, and edges where the result must be exact.
RANGES = {
    "exp": [(-750.0, 715.0), (-1.0, 1.0), (-1e-8, 1e-8)],
    "log": [(0.0, 4.0), (0.5, 2.0), (1e-320, 1e-300)],
    "sigmoid": [(-40.0, 40.0), (-1.0, 1.0)],
    "tanh": [(-25.0, 25.0), (-1.0, 1.0), (-1e-4, 1e-4)],
}
EDGES = [
    0.0, -0.0, 5e-324, -5e-324, 1e-310, 2.2250738585072014e-308, 1.0, -1.0, 2.0, 0.5,
    math.inf, -math.inf, math.nan, 709.782712893384, 709.8, -745.13, -745.2, 1e308, -1e308,
    19.1, -19.1, 20.0, 1e-20, -1e-20,
]  # fmt: skip


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in units of want's last place; 0 where equal (nan equal to nan, inf to inf)."""
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    with np.errstate(invalid="ignore"):
        return np.where(same, 0.0, np.abs(got - want) / np.spacing(np.abs(want)))


@pytest.fixture(scope="module")
def compiled():
    """Each stand-in compiled as the fast backend compiles it, in a loop over an array."""
    loops = {}
    for name in ULPS:
        fn = njit(error_model="numpy")(getattr(fast_math, name))

        @njit(error_model="numpy")
        def loop(out, a, fn=fn):
            for i in range(len(a)):
                out[i] = fn(a[i])

        loops[name] = loop
    return loops


def _apply(loop, xs):
    out = np.empty_like(xs)
    loop(out, xs)
    return out


@pytest.mark.parametrize("name", list(ULPS))
def test_within_its_ulps_of_the_scalar_function(name, compiled):
    rng = np.random.default_rng(0)
    for lo, hi in RANGES[name]:
        xs = rng.uniform(lo, hi, 20_000)
        want = np.array([getattr(scalar, name)(x) for x in xs])
        got = _apply(compiled[name], xs)
        worst = ulps(got, want)
        i = int(worst.argmax())
        assert worst[i] <= ULPS[name], (
            f"fast_math.{name}({xs[i]!r}) = {got[i]!r}, scalar.{name} gives {want[i]!r}: "
            f"{worst[i]:.1f} ulps apart, more than {ULPS[name]}"
        )
        # not merely within bounds: most results are the correctly rounded ones
        assert np.mean(worst == 0) > 0.5, f"{name} on [{lo}, {hi}]: only {np.mean(worst == 0):.0%} exact"


@pytest.mark.parametrize("name", list(ULPS))
def test_exact_at_the_edges(name, compiled):
    xs = np.array(EDGES)
    want = [getattr(scalar, name)(x) for x in EDGES]
    got = _apply(compiled[name], xs)
    for x, g, w in zip(EDGES, got, want, strict=True):
        if math.isnan(w):
            assert math.isnan(g), f"fast_math.{name}({x!r}) = {g!r}, not nan"
        elif w == 0.0 or math.isinf(w) or abs(w) == 1.0 or abs(x) < 1e-8:
            # zeros keep their sign, infinities and +-1 are exact, tiny x gives its own limit
            assert g == w and math.copysign(1.0, g) == math.copysign(1.0, w), (
                f"fast_math.{name}({x!r}) = {g!r}, not {w!r}"
            )
        else:
            assert ulps(np.array([g]), np.array([w]))[0] <= ULPS[name], f"fast_math.{name}({x!r}) = {g!r}, not {w!r}"


@pytest.mark.parametrize("name", list(ULPS))
def test_python_and_compiled_agree_bit_for_bit(name, compiled):
    """The Python form (what a reader can step through) is the compiled one."""
    xs = np.concatenate([np.random.default_rng(1).uniform(-30, 30, 500), np.array(EDGES)])
    if name == "log":
        xs = np.abs(xs)
    python = np.array([getattr(fast_math, name)(float(x)) for x in xs])
    np.testing.assert_array_equal(python, _apply(compiled[name], xs))


@pytest.mark.parametrize("name", list(ULPS))
def test_the_fast_backend_maps_with_them(name):
    """fast's map of the scalar function is the stand-in's result; simple's is the scalar function's."""
    xs = np.random.default_rng(2).uniform(0.01 if name == "log" else -20, 20, (40, 50))
    fn = getattr(scalar, name)
    fast_result = backends.get("fast").map(fn)(Tensor.from_numpy(xs, "fast")).to_numpy()
    simple_result = backends.get("simple").map(fn)(Tensor.from_numpy(xs, "simple")).to_numpy()
    np.testing.assert_array_equal(fast_result, np.vectorize(getattr(fast_math, name))(xs))
    assert ulps(fast_result, simple_result).max() <= ULPS[name]


def test_stand_ins_name_their_scalar_functions():
    assert set(fast_math.STAND_INS) == {scalar.exp, scalar.log, scalar.sigmoid, scalar.tanh}
    for original, stand_in in fast_math.STAND_INS.items():
        assert stand_in.__name__ == original.__name__
