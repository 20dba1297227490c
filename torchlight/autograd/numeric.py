"""Module 1: numerical derivatives, the yardstick every analytic gradient is checked against.

``central_difference`` differentiates a function of floats; ``gradcheck`` (module 2,
``gradcheck.py``) compares a tensor function's whole backward with it.
"""

from typing import Any, Callable


def central_difference(f: Callable[..., Any], *vals: float, arg: int = 0, epsilon: float = 1e-6) -> float:
    """(f(.., x+eps, ..) - f(.., x-eps, ..)) / (2 eps), the derivative of f in argument ``arg``.

    ``vals`` are the point (x is ``vals[arg]``; the other values are passed unchanged) and the
    result is a float. f returns a float, or a Scalar (module 1's value: its float is ``.data``)
    once Scalars compute: the tests differentiate Scalar code this way from stage 1.2 on.

    :param f: a function of floats, returning a float or a Scalar.
    :param vals: the point: one float per argument of f.
    :param arg: the index of the argument to differentiate in.
    :param epsilon: the step.
    :raises IndexError: when arg is not an index of vals.
    """
    if not 0 <= arg < len(vals):
        raise IndexError(f"central_difference: arg={arg} but f was given {len(vals)} values")
    # BEGIN SOLUTION 1.1
    # HINT: _value (below) turns either kind of result into a float.
    up = list(vals)
    down = list(vals)
    up[arg] = vals[arg] + epsilon
    down[arg] = vals[arg] - epsilon
    return float(_value(f(*up)) - _value(f(*down))) / (2.0 * epsilon)
    # END SOLUTION 1.1


def _value(x: Any) -> float:
    """f's result as a float: a Scalar's ``.data`` (anything with ``.data``), or the float itself."""
    return float(getattr(x, "data", x))
