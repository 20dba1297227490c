"""Lifting functions that are not torchlight.scalar's on the fast backend (issue 10).

docs/backends.md promises: any function of floats that numba can compile can be lifted (the
math module's functions themselves included), and anything else gets a TypeError that names
the function, says why, and suggests the 'simple' backend, not numba's internals.
"""

import functools
import math
import os

import numpy as np
import pytest

import torchlight
from torchlight.backends import fast_cache

pytestmark = pytest.mark.task3_1

FAST = torchlight.backends.get("fast")
SIMPLE = torchlight.backends.get("simple")
VALUES = np.linspace(-3.0, 3.0, 13).reshape(13, 1) * np.array([1.0, -0.5])  # (13, 2), a broadcast-made grid


def both(values=VALUES):
    return torchlight.tensor(values, backend="fast"), torchlight.tensor(values, backend="simple")


def test_a_math_function_itself_is_lifted():
    a, s = both()
    # bit for bit the simple backend's results, which call the same function in Python
    assert FAST.map(math.exp)(a).tolist() == SIMPLE.map(math.exp)(s).tolist()
    assert FAST.zip(math.atan2)(a, a.permute(1, 0)[:1].permute(1, 0)).tolist() == (
        SIMPLE.zip(math.atan2)(s, s.permute(1, 0)[:1].permute(1, 0)).tolist()
    )
    # compiled from a module of its own, so that the next process loads it from the disk cache
    generated = fast_cache._modules[math.exp].__file__
    assert os.path.basename(generated).startswith("tl_math_exp_") and os.path.exists(generated)


def test_a_lambda_calling_the_math_module_is_lifted():
    a, s = both()
    bump = lambda x: math.exp(-x * x) + 1.0  # noqa: E731 (a lambda is the point)
    assert FAST.map(bump)(a).tolist() == SIMPLE.map(bump)(s).tolist()


class Scale:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        return self.k * x

    def __call__(self, x):
        return self.k * x


def _error(fn, arity=1):
    a, _ = both()
    with pytest.raises(TypeError) as caught:
        if arity == 1:
            FAST.map(fn)(a)
        else:
            FAST.zip(fn)(a, a)
    return str(caught.value)


def test_a_bound_method_is_a_type_error_that_says_what_to_lift_instead():
    message = _error(Scale(2.0).apply)
    assert message.startswith("the 'fast' backend cannot compile Scale.apply (")
    assert __file__ in message  # where it is defined
    assert "bound method" in message and "(a Scale)" in message and "plain function" in message
    assert "use the 'simple' backend" in message


def test_the_simple_backend_lifts_a_callable_object_and_a_method():
    # Python calls anything: the simple backend (the fallback the fast backend's message suggests) runs them.
    _, s = both()
    expected = (2.0 * VALUES).tolist()
    assert SIMPLE.map(Scale(2.0))(s).tolist() == expected
    assert SIMPLE.map(Scale(2.0).apply)(s).tolist() == expected
    assert SIMPLE.zip(functools.partial(max))(s, s).tolist() == VALUES.tolist()


def test_a_callable_object_is_a_type_error_that_says_it_is_not_a_function():
    message = _error(Scale(2.0))
    assert message.startswith("the 'fast' backend cannot compile <")
    assert "Scale object" in message and "not a function" in message and "use the 'simple' backend" in message


def test_a_function_numba_cannot_type_is_named_with_where_it_is_defined():
    as_text = lambda x: float(str(x))  # noqa: E731
    message = _error(as_text)
    assert message.startswith("the 'fast' backend cannot compile test_a_function_numba_cannot_type")
    assert f"<locals>.<lambda> ({__file__}, line " in message
    assert "numba says:" in message and "use the 'simple' backend" in message
    assert "not a function" not in message and "bound method" not in message


def test_a_builtin_given_the_wrong_number_of_arguments_is_named():
    message = _error(math.exp, arity=2)  # zip gives two
    assert message.startswith("the 'fast' backend cannot compile exp with numba")
    assert "not a function" not in message  # it is one
