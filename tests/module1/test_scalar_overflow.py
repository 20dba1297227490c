"""Scalar ** follows IEEE where the result passes the float range: inf (signed), not the
OverflowError plain Python raises for 10.0 ** 400, so Scalars give the tensor ops' answers (and
PyTorch's) there too, forward and backward."""

import itertools
import math

import pytest

from torchlight import Scalar

inf = math.inf

# (base, exponent, a ** b): results past the float range, and their neighbours that are not
OVERFLOWING = [
    (10.0, 400.0, inf),
    (-10.0, 400.0, inf),  # an even power of a negative base is positive
    (-10.0, 401.0, -inf),  # an odd one keeps the sign
    (0.1, -400.0, inf),
    (-0.1, -401.0, -inf),
    (2.0, 1e300, inf),
    (-2.0, 1e300, inf),  # floats this large are even integers
    (1e300, 2.0, inf),
    (-1e300, 3.0, -inf),
    (1e-300, -2.0, inf),
    (10.0, 308.0, 1e308),  # the largest powers of ten that fit stay exact
    (10.0, -400.0, 0.0),  # underflow was never an error
]


def _same(got, expected):
    if math.isnan(expected):
        return math.isnan(got)
    return got == expected and math.copysign(1.0, got) == math.copysign(1.0, expected)


@pytest.mark.task1_2
@pytest.mark.parametrize("a, b, expected", OVERFLOWING, ids=str)
def test_pow_past_the_float_range_is_inf(a, b, expected):
    for out in (Scalar(a) ** b, Scalar(a) ** Scalar(b), a ** Scalar(b)):
        assert _same(out.data, expected), f"{a} ** {b} gave {out.data}, expected {expected}"


@pytest.mark.task1_4
def test_pow_backward_past_the_float_range_is_inf():
    x, y = Scalar(10.0), Scalar(400.0)
    (x**y).backward()
    assert x.grad == inf  # 400 * 10 ** 399
    assert y.grad == inf  # 10 ** 400 * log(10)
    x = Scalar(-10.0)
    (x**401.0).backward()
    assert x.grad == inf  # 401 * (-10) ** 400
    x = Scalar(-10.0)
    (x**400.0).backward()
    assert x.grad == -inf  # 400 * (-10) ** 399


VALUES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 400.0, 401.0, -401.0, 1e300, -1e300, 1e-300, inf, -inf]


@pytest.mark.task1_2
def test_pow_matches_pytorch_everywhere():
    torch = pytest.importorskip("torch")
    for a, b in itertools.product(VALUES + [math.nan], repeat=2):
        # (tensor ** tensor: PyTorch's general pow; with a number 0.5 it takes sqrt, giving -0.0 for -0.0)
        expected = (torch.tensor(a, dtype=torch.float64) ** torch.tensor(b, dtype=torch.float64)).item()
        got = (Scalar(a) ** b).data
        assert _same(got, expected), f"{a} ** {b}: {got}, PyTorch {expected}"


@pytest.mark.task1_4
def test_pow_gradient_matches_pytorch_past_the_float_range():
    torch = pytest.importorskip("torch")
    for a, b in [(10.0, 400.0), (-10.0, 401.0), (-10.0, 400.0), (0.1, -400.0), (1e300, 2.0), (-1e300, 3.0)]:
        x, y = Scalar(a), Scalar(b)
        (x**y).backward()
        tx = torch.tensor(a, dtype=torch.float64, requires_grad=True)
        (tx**b).backward()
        assert _same(x.grad, tx.grad.item()), f"d/da {a} ** {b}: {x.grad}, PyTorch {tx.grad.item()}"
