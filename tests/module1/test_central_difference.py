"""Task 1.1: central differences, the numerical yardstick for every gradient in the course.

Every f here takes and returns plain floats; an f that returns a Scalar is stage 1.2's
(test_scalar_forward.py), once Scalars compute."""

import math

import pytest
from hypothesis import given

from torchlight.autograd import central_difference

from .strategies import moderate_floats, positive_floats, small_floats

pytestmark = pytest.mark.task1_1


@given(small_floats)
def test_derivative_of_square(x):
    assert central_difference(lambda a: a * a, x) == pytest.approx(2 * x, abs=1e-5)


@given(moderate_floats)
def test_derivative_of_known_functions(x):
    assert central_difference(math.sin, x) == pytest.approx(math.cos(x), abs=1e-6)
    assert central_difference(math.exp, x) == pytest.approx(math.exp(x), rel=1e-6)
    assert central_difference(math.atan, x) == pytest.approx(1 / (1 + x * x), abs=1e-6)


@given(positive_floats)
def test_derivative_of_log(x):
    assert central_difference(math.log, x) == pytest.approx(1 / x, rel=1e-5)


def test_returns_a_float():
    assert type(central_difference(lambda a: 3 * a, 1.0)) is float


@given(small_floats, small_floats, small_floats)
def test_arg_selects_the_variable(x, y, z):
    def f(a, b, c):
        return a + 2 * b * b + 3 * c * a

    assert central_difference(f, x, y, z, arg=0) == pytest.approx(1 + 3 * z, abs=1e-4)
    assert central_difference(f, x, y, z, arg=1) == pytest.approx(4 * y, abs=1e-4)
    assert central_difference(f, x, y, z, arg=2) == pytest.approx(3 * x, abs=1e-4)


def test_default_arg_is_the_first():
    assert central_difference(lambda a, b: a * b, 2.0, 5.0) == pytest.approx(5.0)


def test_uses_the_given_epsilon():
    # For x**3 the central difference is 3 x^2 + eps^2 exactly: a large epsilon shows.
    assert central_difference(lambda a: a**3, 1.0, epsilon=0.1) == pytest.approx(3.01, abs=1e-12)
    assert central_difference(lambda a: a**3, 1.0, epsilon=1e-3) == pytest.approx(3.000001, abs=1e-9)


def test_does_not_change_the_other_arguments():
    seen = []

    def f(a, b):
        seen.append(b)
        return a * b

    central_difference(f, 1.0, 7.0, arg=0)
    assert seen == [7.0, 7.0]


@pytest.mark.parametrize("arg", [2, 5, -1])
def test_bad_arg_is_an_error(arg):
    with pytest.raises(IndexError, match=f"arg={arg}"):
        central_difference(lambda a, b: a * b, 1.0, 2.0, arg=arg)
