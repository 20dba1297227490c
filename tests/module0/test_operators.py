"""Task 0.1: the plain-float operators in torchlight.scalar, checked by their properties."""

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from torchlight import scalar as S

pytestmark = [pytest.mark.task0_1]

small = st.floats(min_value=-100.0, max_value=100.0, allow_nan=False)
# Away from 0, where relu has its kink and 1/x blows up.
away_from_zero = st.floats(min_value=0.1, max_value=100.0).flatmap(lambda x: st.sampled_from([x, -x]))
positive = st.floats(min_value=0.1, max_value=100.0)
huge = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False)


def central(f, x, eps=1e-6):
    """A derivative from two nearby values: the yardstick for the *_back operators."""
    return (f(x + eps) - f(x - eps)) / (2.0 * eps)


# -- arithmetic -----------------------------------------------------------------------


@given(small, small)
def test_mul(x, y):
    assert S.mul(x, y) == x * y
    assert S.mul(x, y) == S.mul(y, x)
    assert S.mul(x, 1.0) == x
    assert S.mul(x, 0.0) == 0.0


@given(small, small, small)
def test_mul_distributes_over_add(x, y, z):
    assert S.mul(z, S.add(x, y)) == pytest.approx(S.add(S.mul(z, x), S.mul(z, y)), abs=1e-9)


@given(small)
def test_id(x):
    assert S.id(x) == x


@given(small, small)
def test_add(x, y):
    assert S.add(x, y) == x + y
    assert S.add(x, y) == S.add(y, x)
    assert S.add(x, 0.0) == x


@given(small)
def test_neg(x):
    assert S.neg(x) == -x
    assert S.neg(S.neg(x)) == x
    assert S.add(x, S.neg(x)) == 0.0


@given(small, small)
def test_sub_and_div(x, y):
    assert S.sub(x, y) == x - y
    assume(abs(y) > 1e-3)
    assert S.div(x, y) == pytest.approx(x / y)
    assert S.mul(S.div(x, y), y) == pytest.approx(x, abs=1e-9)


# -- comparisons ----------------------------------------------------------------------


@given(small, small)
def test_lt(x, y):
    assert S.lt(x, y) == (1.0 if x < y else 0.0)
    assert S.lt(x, x) == 0.0
    # At most one of x < y and y < x; exactly one when they differ.
    assert S.lt(x, y) + S.lt(y, x) == (0.0 if x == y else 1.0)


@given(small, small)
def test_gt_mirrors_lt(x, y):
    assert S.gt(x, y) == S.lt(y, x)


@given(small, small)
def test_eq(x, y):
    assert S.eq(x, x) == 1.0
    assert S.eq(x, y) == S.eq(y, x)
    assert S.eq(x, y) == (1.0 if x == y else 0.0)
    assert S.eq(x, x + 1.0) == 0.0


@given(small, small)
def test_max(x, y):
    m = S.max(x, y)
    assert m >= x and m >= y
    assert m in (x, y)
    assert S.max(x, y) == S.max(y, x)
    assert S.max(x, x) == x


@given(small, small)
def test_is_close(x, y):
    assert S.is_close(x, x) == 1.0
    assert S.is_close(x, y) == S.is_close(y, x)
    assert S.is_close(x, x + 0.005) == 1.0
    assert S.is_close(x, x + 0.02) == 0.0
    assert S.is_close(x, y) == (1.0 if abs(x - y) < 1e-2 else 0.0)


# -- sigmoid, relu, log, exp, inv -----------------------------------------------------


@given(st.floats(min_value=-30.0, max_value=30.0))
def test_sigmoid_in_open_unit_interval(x):
    assert 0.0 < S.sigmoid(x) < 1.0


@given(small)
def test_sigmoid_symmetric(x):
    assert S.sigmoid(-x) == pytest.approx(1.0 - S.sigmoid(x), abs=1e-12)
    assert S.sigmoid(0.0) == 0.5


@given(small, small)
def test_sigmoid_monotone(x, y):
    assume(x < y)
    assert S.sigmoid(x) <= S.sigmoid(y)


@given(small)
def test_sigmoid_derivative(x):
    s = S.sigmoid(x)
    assert central(S.sigmoid, x) == pytest.approx(s * (1.0 - s), abs=1e-7)


@given(huge)
def test_sigmoid_stable_for_large_inputs(x):
    # The naive 1 / (1 + exp(-x)) overflows at x = -1e3; a stable one returns a finite value.
    s = S.sigmoid(x)
    assert math.isfinite(s)
    assert 0.0 <= s <= 1.0


def test_sigmoid_extremes():
    assert S.sigmoid(1e3) == 1.0
    assert S.sigmoid(-1e3) == 0.0
    assert S.sigmoid(-1e3) == pytest.approx(1.0 - S.sigmoid(1e3))


@given(small)
def test_relu(x):
    r = S.relu(x)
    assert r >= 0.0
    assert r == (x if x > 0 else 0.0)
    assert S.relu(r) == r  # idempotent


@given(positive)
def test_log(x):
    assert S.log(x) == pytest.approx(math.log(x), rel=1e-12)


@given(st.floats(min_value=-2.0, max_value=20.0))
def test_log_inverts_exp(x):
    assert S.exp(x) == pytest.approx(math.exp(x))
    assert S.log(S.exp(x)) == pytest.approx(x, rel=1e-12, abs=1e-12)


@given(st.floats(min_value=-20.0, max_value=20.0), st.floats(min_value=-20.0, max_value=20.0))
def test_exp_of_sum(x, y):
    assert S.exp(x + y) == pytest.approx(S.exp(x) * S.exp(y))


def test_log_outside_its_domain_as_pytorch():
    assert S.log(0.0) == -math.inf
    assert math.isnan(S.log(-1.0))


@given(away_from_zero)
def test_inv(x):
    assert S.inv(x) == pytest.approx(1.0 / x)
    assert S.mul(S.inv(x), x) == pytest.approx(1.0)
    assert S.inv(S.inv(x)) == pytest.approx(x)


# -- the *_back operators against central differences ----------------------------------


@given(away_from_zero, small)
def test_relu_back(x, d):
    assert S.relu_back(x, d) == pytest.approx(d * central(S.relu, x), rel=1e-6, abs=1e-6)


def test_relu_back_at_zero_is_zero():
    # PyTorch's choice at the kink.
    assert S.relu_back(0.0, 5.0) == 0.0


@given(positive, small)
def test_log_back(x, d):
    assert S.log_back(x, d) == pytest.approx(d * central(S.log, x), rel=1e-5, abs=1e-6)


@given(away_from_zero, small)
def test_inv_back(x, d):
    assert S.inv_back(x, d) == pytest.approx(d * central(S.inv, x), rel=1e-5, abs=1e-6)


# -- the operators the backends also lift ----------------------------------------------


@given(positive, st.floats(min_value=-3.0, max_value=3.0))
def test_pow(x, y):
    assert S.pow(x, y) == pytest.approx(x**y)
    assert S.pow(x, 1.0) == x


@given(small)
def test_tanh_sqrt_abs_sign(x):
    assert S.tanh(x) == pytest.approx(math.tanh(x))
    assert S.tanh(-x) == -S.tanh(x)
    assert S.abs(x) >= 0.0 and S.abs(x) in (x, -x)
    assert S.sqrt(S.abs(x)) ** 2 == pytest.approx(S.abs(x))
    assert S.sign(x) * S.abs(x) == x


# -- numba can compile every operator (the backends rely on it) ------------------------

UNARY = ["id", "neg", "sigmoid", "relu", "log", "exp", "inv", "tanh", "sqrt", "abs", "sign"]
BINARY = ["mul", "add", "sub", "div", "lt", "gt", "eq", "max", "is_close", "pow", "log_back", "inv_back", "relu_back"]


@pytest.mark.parametrize("name", UNARY + BINARY)
def test_operator_compiles_with_numba(name):
    numba = pytest.importorskip("numba")
    fn = getattr(S, name)
    compiled = numba.njit(fn)
    args = (0.75,) if name in UNARY else (0.75, 1.5)
    assert compiled(*args) == pytest.approx(fn(*args), rel=1e-12)
