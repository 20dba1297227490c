"""Task 1.2: Scalar values compute the same numbers as floats and know their place in the graph."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import torchlight
from torchlight import Scalar
from torchlight import scalar as op
from torchlight.autograd import Function, central_difference
from torchlight.autograd import scalar_functions as F

from .strategies import BINARY, FLOAT_BINARY, FLOAT_UNARY, UNARY, small_floats

pytestmark = pytest.mark.task1_2


def ids(table):
    return [row[0] for row in table]


@pytest.mark.parametrize("name, fn, inputs", BINARY, ids=ids(BINARY))
@given(data=st.data())
def test_binary_ops_match_floats(name, fn, inputs, data):
    x, y = data.draw(inputs)
    expected = FLOAT_BINARY[name](x, y)
    # Scalar with Scalar, Scalar with number, number with Scalar: all give the float result.
    for a, b in [(Scalar(x), Scalar(y)), (Scalar(x), y), (x, Scalar(y))]:
        out = fn(a, b)
        assert isinstance(out, Scalar), f"{name}({type(a).__name__}, {type(b).__name__})"
        assert type(out.data) is float
        assert out.data == pytest.approx(expected, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("name, fn, inputs", UNARY, ids=ids(UNARY))
@given(data=st.data())
def test_unary_ops_match_floats(name, fn, inputs, data):
    x = data.draw(inputs)
    out = fn(Scalar(x))
    assert isinstance(out, Scalar)
    assert out.data == pytest.approx(FLOAT_UNARY[name](x), rel=1e-12, abs=1e-15)


@given(small_floats)
def test_log_is_the_module0_operator(x):
    x = abs(x)
    assert Scalar(x).log().data == op.log(x)


def test_out_of_domain_values_are_inf_and_nan_as_in_pytorch():
    assert Scalar(0.0).log().data == -math.inf
    assert math.isnan(Scalar(-1.0).log().data)
    assert (1.0 / Scalar(0.0)).data == math.inf
    assert (Scalar(0.0) ** -1.0).data == math.inf
    # A negative base to a non-integer power has no real value (Python would give a complex).
    assert math.isnan((Scalar(-8.0) ** (1 / 3)).data)
    assert math.isnan((Scalar(-8.0) ** Scalar(0.5)).data)


@given(small_floats)
def test_equal_values_compare_equal(x):
    assert (Scalar(x) == x).data == 1.0
    assert (x == Scalar(x)).data == 1.0
    assert (Scalar(x) < x).data == 0.0
    assert (Scalar(x) > x).data == 0.0


@given(st.floats(-10.0, -0.1), st.integers(-3, 3))
def test_negative_base_with_integer_power(x, n):
    assert (Scalar(x) ** n).data == pytest.approx(x**n, rel=1e-12)


def test_sigmoid_is_stable_for_large_inputs():
    assert Scalar(1000.0).sigmoid().data == 1.0
    assert Scalar(-1000.0).sigmoid().data == 0.0
    assert Scalar(50.0).tanh().data == pytest.approx(1.0)


def test_data_is_a_float():
    s = Scalar(3)
    assert type(s.data) is float and s.data == 3.0
    assert float(Scalar(2.5)) == 2.5
    assert bool(Scalar(0.0)) is False and bool(Scalar(-1.0)) is True


def test_leaves_and_constants():
    leaf = Scalar(1.0)
    assert leaf.is_leaf() and not leaf.is_constant()
    assert leaf.grad is None and leaf.parents == []
    const = Scalar(1.0, history=None)
    assert const.is_constant() and not const.is_leaf()
    assert const.parents == []


def test_results_of_operations_are_neither_leaves_nor_constants():
    x, y = Scalar(1.0), Scalar(2.0)
    z = x * y
    assert not z.is_leaf() and not z.is_constant()
    assert len(z.parents) == 2 and z.parents[0] is x and z.parents[1] is y
    assert z.history.last_fn is F.Mul


def test_numbers_become_constants_and_are_no_parents():
    x = Scalar(1.0)
    y = 2.0 * x
    z = y + 3.0
    assert len(y.parents) == 1 and y.parents[0] is x
    assert len(y.history.inputs) == 2 and y.history.inputs[0].is_constant()
    assert len(z.parents) == 1 and z.parents[0] is y


def test_operations_on_constants_give_constants():
    a, b = Scalar(1.0, history=None), Scalar(2.0, history=None)
    for out in [a + b, a * b, -a, a.exp(), a / b, a**b, a < b, (a * b).sigmoid()]:
        assert out.is_constant()


def test_unique_ids_and_names():
    a, b = Scalar(1.0, name="a"), Scalar(1.0)
    assert a.unique_id != b.unique_id
    assert a.name == "a" and b.name is None


def test_repr():
    assert repr(Scalar(2.5)) == "Scalar(2.5)"


@pytest.mark.parametrize("bad", ["a", None, [1.0], 1 + 2j])
def test_non_numbers_are_a_type_error(bad):
    with pytest.raises(TypeError, match="real number"):
        Scalar(bad)


def test_scalar_of_a_scalar_is_a_type_error():
    with pytest.raises(TypeError, match=r"\.data"):
        Scalar(Scalar(1.0))


@pytest.mark.parametrize("bad", ["a", None, [1.0]])
def test_combining_with_non_numbers_is_a_type_error(bad):
    with pytest.raises(TypeError, match="cannot combine a Scalar"):
        Scalar(1.0) + bad
    with pytest.raises(TypeError, match="cannot combine a Scalar"):
        Scalar(1.0) * bad


def test_function_names_and_repr():
    assert F.Mul.name == "MulBackward"
    assert F.Add.name == "AddBackward"
    assert "Mul" in repr(F.Mul) and repr(F.Mul).startswith("<")

    class Cube(Function):
        pass

    assert Cube.name == "CubeBackward"
    assert "Cube" in repr(Cube)


def test_scalar_is_exported():
    assert torchlight.Scalar is Scalar
    assert math.isclose(torchlight.Scalar(2.0).exp().data, math.e**2)


def test_requires_grad_and_detach_as_tensor():
    c = Scalar(2.0, history=None)
    assert c.requires_grad_() is c and c.is_leaf() and c.requires_grad
    # (that c then receives its gradient from backward is task 1.4's: test_scalar_gradients.py)
    d = (c * 3.0).detach()
    assert d.is_constant() and d.data == 6.0
    with pytest.raises(RuntimeError, match="leaf"):
        (c * 3.0).requires_grad_(False)
    assert c.requires_grad_(False).is_constant()


# -- central differences of Scalar code (moved from test_central_difference.py) -------------------


def test_central_difference_of_a_function_returning_scalars():
    # The tests gradcheck Scalar code by wrapping it: f takes floats and returns a Scalar, and
    # central_difference (stage 1.1; its docstring says so) still returns a float.
    d = central_difference(lambda a: Scalar(a).exp(), 1.0)
    assert type(d) is float, f"central_difference of an f returning Scalars gave a {type(d).__name__}, not a float"
    assert d == pytest.approx(math.e, rel=1e-6), "the derivative of exp at 1.0 is e"


@pytest.mark.parametrize("name, fn, inputs", UNARY, ids=ids(UNARY))
@given(data=st.data())
def test_unary_ops_have_the_floats_derivatives(name, fn, inputs, data):
    # A forward that is right at every point has the right slope: central differences of the
    # Scalar op and of the float op agree (a check of forward only, nothing is differentiated).
    x = data.draw(inputs)
    ours = central_difference(lambda a: fn(Scalar(a)), x)
    theirs = central_difference(FLOAT_UNARY[name], x)
    assert ours == pytest.approx(theirs, rel=1e-6, abs=1e-6)
