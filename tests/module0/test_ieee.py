"""Task 0.1: the operators at the edges of the float range: nan, inf, -0.0 and overflow.

They follow IEEE 754 and PyTorch: nan propagates through arithmetic, activations and max, every
comparison with nan is false, 1 / -0.0 is -inf, and e^x is finite as long as the result is. The
backends lift these functions unchanged, so what holds here holds for every tensor op built on
them. Each value is checked for Python floats and for numpy's float64 (what the simple backend
hands a lifted function), exactly: the sign of a zero or an infinity counts.
"""

import math

import numpy as np
import pytest

from torchlight import scalar as S

pytestmark = [pytest.mark.task0_1]

nan, inf = math.nan, math.inf

# Every argument that the edge cases below use, and then some: the comparison with PyTorch runs
# each operator on all of them (and on all pairs for the binary operators).
EDGES = [nan, inf, -inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, -3.0, 1e-200, -1e-200, 709.78, 709.8, -745.2]


def same(got, want):
    """Equal as IEEE values: nan matches nan, and 0.0 does not match -0.0."""
    got, want = float(got), float(want)
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


@pytest.fixture(params=[float, np.float64], ids=["float", "float64"])
def num(request):
    """The float type a test's arguments are given as."""
    return request.param


def named(cases):
    """The cases of a ``fn, args, want`` table, each with an id that shows the call: log_back(-0.0, 1.0)."""
    return [pytest.param(fn, args, want, id=f"{fn.__name__}({', '.join(map(repr, args))})") for fn, args, want in cases]


def check(fn, args, want, num):
    with np.errstate(all="ignore"):  # numpy warns where IEEE gives inf or nan, as it should here
        got = fn(*(num(a) for a in args))
    assert same(got, want), f"{fn.__name__}{tuple(args)} is {got!r}, expected {want!r}"


@pytest.mark.parametrize(
    "fn, args, want",
    named(
        [
            (S.exp, (nan,), nan),
            (S.relu, (nan,), nan),
            (S.sigmoid, (nan,), nan),
            (S.log, (nan,), nan),
            (S.inv, (nan,), nan),
            (S.neg, (nan,), nan),
            (S.add, (nan, 1.0), nan),
            (S.mul, (0.0, nan), nan),
            (S.max, (nan, 1.0), nan),
            (S.max, (1.0, nan), nan),
            (S.max, (-inf, nan), nan),
            (S.max, (nan, -inf), nan),
            (S.pow, (-1.0, nan), nan),
            (S.pow, (nan, 2.0), nan),
        ]
    ),
)
def test_nan_propagates(fn, args, want, num):
    check(fn, args, want, num)


def test_max_fold_propagates_nan_whatever_its_position(num):
    # What a max reduction computes: a fold from -inf, left to right.
    for xs in ([nan, 1.0], [1.0, nan], [2.0, nan, 1.0], [nan, nan]):
        acc = num(-inf)
        for x in xs:
            acc = S.max(acc, num(x))
        assert math.isnan(acc), f"max of {xs} is {acc}, expected nan"


@pytest.mark.parametrize("x, y", [(nan, 0.0), (0.0, nan), (nan, nan), (nan, inf), (-inf, nan)])
def test_comparisons_with_nan_are_false(x, y, num):
    for fn in (S.lt, S.gt, S.eq):
        check(fn, (x, y), 0.0, num)
    check(S.is_close, (x, y), 0.0, num)


@pytest.mark.parametrize(
    "fn, args, want",
    named(
        [
            (S.inv, (-0.0,), -inf),
            (S.inv, (0.0,), inf),
            (S.div, (1.0, -0.0), -inf),
            (S.div, (-1.0, -0.0), inf),
            (S.div, (1.0, 0.0), inf),
            (S.div, (0.0, -0.0), nan),
            (S.pow, (-0.0, -3.0), -inf),
            (S.pow, (-0.0, -2.0), inf),
            (S.pow, (-0.0, -2.5), inf),
            (S.pow, (0.0, -3.0), inf),
            (S.pow, (-0.0, -inf), inf),
            (S.pow, (-0.0, 3.0), -0.0),
            (S.log, (-0.0,), -inf),
            (S.relu, (-0.0,), -0.0),  # as PyTorch: relu keeps x unless x < 0
            (S.abs, (-0.0,), 0.0),
            (S.sqrt, (-0.0,), -0.0),
        ]
    ),
)
def test_signed_zero(fn, args, want, num):
    check(fn, args, want, num)


@pytest.mark.parametrize(
    "fn, args, want",
    named(
        [
            (S.exp, (709.78,), math.exp(709.78)),
            (S.exp, (709.782712893384,), math.exp(709.782712893384)),  # log of the largest float
            (S.exp, (709.7827128933841,), inf),  # the next float up: e^x is past the range
            (S.exp, (1000.0,), inf),
            (S.exp, (inf,), inf),
            (S.exp, (-inf,), 0.0),
            (S.sigmoid, (-745.2,), 0.0),
            (S.sigmoid, (inf,), 1.0),
            (S.sigmoid, (-inf,), 0.0),
            (S.pow, (-1.0, 1e300), 1.0),  # an even integer exponent, past what an int64 holds
            (S.pow, (-1.0, inf), 1.0),
            (S.pow, (-2.0, inf), inf),
            (S.pow, (-inf, 0.5), inf),
            (S.pow, (-inf, -0.5), 0.0),
            (S.pow, (-8.0, 1.0 / 3.0), nan),
        ]
    ),
)
def test_overflow_and_infinities(fn, args, want, num):
    check(fn, args, want, num)


@pytest.mark.parametrize(
    "fn, args, want",
    named(
        [
            # relu_back passes d where relu passes x (x > 0, and nan: PyTorch's threshold_backward)
            (S.relu_back, (nan, 2.0), 2.0),
            (S.relu_back, (0.0, 2.0), 0.0),
            (S.relu_back, (-0.0, 2.0), 0.0),
            (S.relu_back, (-1.0, 2.0), 0.0),
            # log_back is d / x, with the sign of a zero x
            (S.log_back, (-0.0, 1.0), -inf),
            (S.log_back, (0.0, 1.0), inf),
            (S.log_back, (0.0, -1.0), -inf),
            (S.log_back, (0.0, 0.0), nan),
            (S.log_back, (nan, 1.0), nan),
            # inv_back is -d / x**2: -inf at either zero, and where x**2 underflows to 0
            (S.inv_back, (-0.0, 1.0), -inf),
            (S.inv_back, (0.0, 1.0), -inf),
            (S.inv_back, (1e-200, 1.0), -inf),
            (S.inv_back, (nan, 1.0), nan),
        ]
    ),
)
def test_derivative_helpers_at_the_edges(fn, args, want, num):
    check(fn, args, want, num)


# -- against PyTorch, where it is installed ---------------------------------------------------

UNARY = {"exp": "exp", "relu": "relu", "sigmoid": "sigmoid", "log": "log", "inv": "reciprocal",
         "neg": "neg", "tanh": "tanh", "sqrt": "sqrt", "abs": "abs", "sign": "sign"}  # fmt: skip
BINARY = {"add": "add", "mul": "mul", "sub": "sub", "div": "div", "pow": "pow", "lt": "lt",
          "gt": "gt", "eq": "eq"}  # fmt: skip


def agrees(got, want):
    """Equal as IEEE values, up to a few ulps where both are finite and nonzero (PyTorch's exp,
    tanh and sigmoid may round differently from the C library's)."""
    if same(got, want):
        return True
    return math.isfinite(want) and want != 0.0 and math.isclose(got, want, rel_tol=1e-14)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_operators_agree_with_torch(name):
    torch = pytest.importorskip("torch")
    fn, torch_fn = getattr(S, name), getattr(torch, UNARY[name])
    for x in EDGES:
        want = float(torch_fn(torch.tensor(x, dtype=torch.float64)))
        assert agrees(fn(x), want), f"{name}({x!r}) is {fn(x)!r}; PyTorch says {want!r}"


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_operators_agree_with_torch(name):
    torch = pytest.importorskip("torch")
    fn, torch_fn = getattr(S, name), getattr(torch, BINARY[name])
    for x in EDGES:
        for y in EDGES:
            try:
                got = fn(x, y)
            except OverflowError:
                # Python's float ** raises where the result is past the range; numpy's float64
                # (what the backends lift) gives inf, checked just below.
                assert name == "pow"
                with np.errstate(all="ignore"):
                    got = fn(np.float64(x), np.float64(y))
            t = torch_fn(torch.tensor(x, dtype=torch.float64), torch.tensor(y, dtype=torch.float64))
            want = float(t)
            assert agrees(got, want), f"{name}({x!r}, {y!r}) is {got!r}; PyTorch says {want!r}"


def test_max_agrees_with_torch():
    # scalar.max is the step of a max reduction: compare with PyTorch's max over [x, y] (on a tie
    # of 0.0 and -0.0 both keep the later one).
    torch = pytest.importorskip("torch")
    for x in EDGES:
        for y in EDGES:
            want = float(torch.tensor([x, y], dtype=torch.float64).max())
            assert agrees(S.max(x, y), want), f"max({x!r}, {y!r}) is {S.max(x, y)!r}; PyTorch says {want!r}"


@pytest.mark.parametrize(
    "name, torch_name",
    [("relu_back", "relu"), ("log_back", "log"), ("inv_back", "reciprocal")],
)
def test_derivative_helpers_agree_with_torch(name, torch_name):
    torch = pytest.importorskip("torch")
    fn, torch_fn = getattr(S, name), getattr(torch, torch_name)
    for x in EDGES:
        for d in (1.0, -2.0, 0.0, nan):
            t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
            torch_fn(t).backward(torch.tensor(d, dtype=torch.float64))
            want = float(t.grad)
            assert agrees(fn(x, d), want), f"{name}({x!r}, {d!r}) is {fn(x, d)!r}; PyTorch says {want!r}"
