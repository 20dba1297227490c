"""Module 0: plain-float operators and list helpers.

Backends lift these functions to tensors (``backend.zip(scalar.mul)``), so every
operator is plain arithmetic on floats: numba compiles them unchanged.
"""

import math
from typing import Callable, Iterable, List


def mul(x: float, y: float) -> float:
    """x * y"""
    # BEGIN SOLUTION 0.1
    return x * y
    # END SOLUTION 0.1


def id(x: float) -> float:
    """x unchanged"""
    return x


def add(x: float, y: float) -> float:
    """x + y"""
    # BEGIN SOLUTION 0.1
    return x + y
    # END SOLUTION 0.1


def neg(x: float) -> float:
    """-x"""
    # BEGIN SOLUTION 0.1
    return -x
    # END SOLUTION 0.1


def lt(x: float, y: float) -> float:
    """1.0 if x < y else 0.0 (0.0 when either is nan: every comparison with nan is false)"""
    # BEGIN SOLUTION 0.1
    return 1.0 if x < y else 0.0
    # END SOLUTION 0.1


def eq(x: float, y: float) -> float:
    """1.0 if x == y else 0.0"""
    # BEGIN SOLUTION 0.1
    return 1.0 if x == y else 0.0
    # END SOLUTION 0.1


def max(x: float, y: float) -> float:
    """The larger of x and y; nan when either is nan (as PyTorch), whatever the order.

    On a tie it returns y: max(0.0, -0.0) is -0.0, as PyTorch's max over [x, y] keeps the later.
    """
    # BEGIN SOLUTION 0.1
    # HINT: x > y is false when y is nan, and also when x is nan.
    return x if (x > y or math.isnan(x)) else y
    # END SOLUTION 0.1


def is_close(x: float, y: float) -> float:
    """1.0 if |x - y| < 1e-2 else 0.0"""
    # BEGIN SOLUTION 0.1
    # HINT: write it without abs(): this module defines its own abs, which shadows the
    # builtin, and numba cannot compile a call to a plain Python function.
    return 1.0 if (x - y < 1e-2 and y - x < 1e-2) else 0.0
    # END SOLUTION 0.1


def sigmoid(x: float) -> float:
    """1 / (1 + e^-x), computed without overflow for large |x|."""
    # BEGIN SOLUTION 0.1
    # HINT: exp of a large positive number overflows; for x < 0 use the mirrored form
    # e^x / (1 + e^x).
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)
    # END SOLUTION 0.1


def relu(x: float) -> float:
    """0.0 if x < 0 else x (so nan stays nan, as PyTorch)"""
    # BEGIN SOLUTION 0.1
    return 0.0 if x < 0.0 else x
    # END SOLUTION 0.1


def log(x: float) -> float:
    """Natural log, as PyTorch: -inf at 0 and nan below it (where math.log would raise)."""
    # BEGIN SOLUTION 0.1
    if x > 0.0:
        return math.log(x)
    return -math.inf if x == 0.0 else math.nan
    # END SOLUTION 0.1


def exp(x: float) -> float:
    """e^x (inf past the float range, where math.exp would raise; nan for nan)"""
    # BEGIN SOLUTION 0.1
    # HINT: 709.782712893384 is log of the largest float, the last x whose e^x is finite.
    return math.inf if x > 709.782712893384 else math.exp(x)
    # END SOLUTION 0.1


def inv(x: float) -> float:
    """1 / x (inf at 0.0 and -inf at -0.0, as IEEE and PyTorch; plain Python would raise)"""
    # BEGIN SOLUTION 0.1
    return 1.0 / x if x != 0.0 else math.copysign(math.inf, x)
    # END SOLUTION 0.1


def log_back(x: float, d: float) -> float:
    """d * d/dx log(x), that is d / x, as IEEE and PyTorch divide: at x = 0.0 or -0.0 an infinity
    with the sign of d / x (log_back(-0.0, 1.0) is -inf), nan when d is 0 too; plain Python's
    division by zero would raise."""
    # BEGIN SOLUTION 0.1
    return d / x if x != 0.0 else d * math.copysign(math.inf, x)
    # END SOLUTION 0.1


def inv_back(x: float, d: float) -> float:
    """d * d/dx (1/x), that is -d / x**2, as IEEE and PyTorch divide: where x**2 is 0 (either zero,
    and tiny x) -d times inf, so -inf for d > 0 and nan for d = 0."""
    # BEGIN SOLUTION 0.1
    # HINT: x * x is 0.0 for |x| < 1e-162 too, where plain Python would raise.
    return -d / (x * x) if x * x != 0.0 else -d * math.inf
    # END SOLUTION 0.1


def relu_back(x: float, d: float) -> float:
    """d * d/dx relu(x), as PyTorch: d where x > 0 and where x is nan; 0.0 (a positive zero)
    where x <= 0, the kink x == 0 included, whatever d is (nan too)."""
    # BEGIN SOLUTION 0.1
    return 0.0 if x <= 0.0 else d
    # END SOLUTION 0.1


# The remaining operators are not in the module-0 exercise list but are lifted by the
# backends for tensor ops (sub, div, pow, tanh, sqrt, abs and friends).


def sub(x: float, y: float) -> float:
    """x - y"""
    return x - y


def div(x: float, y: float) -> float:
    """x / y (signed inf or nan when y is 0 or -0.0, as IEEE and PyTorch)"""
    return x / y if y != 0.0 else x * math.copysign(math.inf, y)


def gt(x: float, y: float) -> float:
    """1.0 if x > y else 0.0"""
    return 1.0 if x > y else 0.0


def pow(x: float, y: float) -> float:
    """x ** y (nan for a finite negative base and a fractional exponent, where Python would go
    complex)"""
    # (y % 1.0, not math.floor: floor raises at nan and inf in Python, and in numba gives an int
    # that overflows past 2 ** 63)
    if -math.inf < x < 0.0 and math.isfinite(y) and y % 1.0 != 0.0:
        return math.nan
    if x == 0.0 and y < 0.0:  # 1 / 0 ** -y, signed: (-0.0) ** -3 is -inf, (-0.0) ** -2 is inf
        return math.copysign(math.inf, x**-y)
    return x**y


def tanh(x: float) -> float:
    """Hyperbolic tangent."""
    return math.tanh(x)


def sin(x: float) -> float:
    """Sine (nan at +-inf, as PyTorch; math.sin would raise)."""
    return math.sin(x) if not math.isinf(x) else math.nan


def cos(x: float) -> float:
    """Cosine (nan at +-inf, as PyTorch; math.cos would raise)."""
    return math.cos(x) if not math.isinf(x) else math.nan


def sqrt(x: float) -> float:
    """Square root (nan below 0, as PyTorch; math.sqrt would raise)."""
    return math.sqrt(x) if x >= 0.0 else math.nan


def abs(x: float) -> float:
    """|x| (0.0 for -0.0)"""
    return math.fabs(x)


def sign(x: float) -> float:
    """-1.0, 0.0 or 1.0"""
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)


# List helpers: the same three shapes of computation (map, zip, reduce) that the
# tensor backends implement, here on Python lists.


def map(fn: Callable[[float], float]) -> Callable[[Iterable[float]], List[float]]:
    """Lift fn to a function on lists: map(fn)(xs) == [fn(x) for x in xs].

    xs may be any iterable (a generator too); the result is a list.
    """
    # BEGIN SOLUTION 0.2

    def apply(xs: Iterable[float]) -> List[float]:
        return [fn(x) for x in xs]

    return apply
    # END SOLUTION 0.2


def zip_with(fn: Callable[[float, float], float]) -> Callable[[Iterable[float], Iterable[float]], List[float]]:
    """Lift fn to pairs of lists of equal length: zip_with(fn)(xs, ys)[i] == fn(xs[i], ys[i]).

    Lists of different lengths are an error, never a shorter result: ValueError with both lengths
    in its message, "zip_with needs lists of equal length, got 3 and 2".
    """
    # BEGIN SOLUTION 0.2

    def apply(xs: Iterable[float], ys: Iterable[float]) -> List[float]:
        xs, ys = list(xs), list(ys)
        if len(xs) != len(ys):
            raise ValueError(f"zip_with needs lists of equal length, got {len(xs)} and {len(ys)}")
        return [fn(x, y) for x, y in zip(xs, ys, strict=True)]

    return apply
    # END SOLUTION 0.2


def reduce(fn: Callable[[float, float], float], start: float) -> Callable[[Iterable[float]], float]:
    """Fold a list from the left: reduce(fn, s)([a, b]) == fn(fn(s, a), b), and reduce(fn, s)([]) == s."""
    # BEGIN SOLUTION 0.2

    def apply(xs: Iterable[float]) -> float:
        acc = start
        for x in xs:
            acc = fn(acc, x)
        return acc

    return apply
    # END SOLUTION 0.2


def neg_list(xs: Iterable[float]) -> List[float]:
    """Negate every element."""
    # BEGIN SOLUTION 0.2
    return map(neg)(xs)
    # END SOLUTION 0.2


def add_lists(xs: Iterable[float], ys: Iterable[float]) -> List[float]:
    """Elementwise sum of two lists of equal length (different lengths: zip_with's ValueError)."""
    # BEGIN SOLUTION 0.2
    return zip_with(add)(xs, ys)
    # END SOLUTION 0.2


def sum(xs: Iterable[float]) -> float:
    """Sum of a list (0.0 when empty)."""
    # BEGIN SOLUTION 0.2
    return reduce(add, 0.0)(xs)
    # END SOLUTION 0.2


def prod(xs: Iterable[float]) -> float:
    """Product of a list (1.0 when empty)."""
    # BEGIN SOLUTION 0.2
    return reduce(mul, 1.0)(xs)
    # END SOLUTION 0.2
