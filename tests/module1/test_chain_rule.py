"""Task 1.3: each operation's derivative (its Function's backward) and one step of the chain rule.

Backpropagation is task 1.4's, so nothing here calls ``backward()``: the derivatives come from
``chain_rule`` alone (``gradients_by_chain_rule`` follows it from the output back to the leaves)
and are checked against central differences and PyTorch. The same checks through ``backward()``
are task 1.4's (test_scalar_gradients.py); ``setup_context`` and ``needs_input_grad`` are module
5's (tests/module5/test_scalar_function_api.py).
"""

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from torchlight import Scalar
from torchlight.autograd import Function, central_difference

from .strategies import BINARY, UNARY, gradients_by_chain_rule, nonzero_floats, small_floats

pytestmark = pytest.mark.task1_3


def ids(table):
    return [row[0] for row in table]


def check_chain_rule(fn, *values):
    """The chain rule through fn(*Scalars) gives, for every argument, the central difference."""
    leaves = [Scalar(v) for v in values]
    grads = gradients_by_chain_rule(fn(*leaves))
    for i, leaf in enumerate(leaves):
        expected = central_difference(lambda *vs: fn(*[Scalar(v) for v in vs]), *values, arg=i)
        at = ", ".join(map(repr, values))
        assert leaf.unique_id in grads, f"argument {i} of f({at}) got no derivative"
        assert grads[leaf.unique_id] == pytest.approx(expected, rel=1e-5, abs=1e-5), (
            f"the derivative in argument {i} of f({at}): the chain rule gives {grads[leaf.unique_id]!r}, "
            f"the central difference {expected!r}"
        )


# -- chain_rule: one step backwards ------------------------------------------------------


def test_chain_rule_of_mul_pairs_each_parent_with_its_derivative():
    x, y = Scalar(3.0), Scalar(5.0)
    pairs = list((x * y).chain_rule(2.0))
    assert len(pairs) == 2
    (p0, d0), (p1, d1) = pairs
    assert p0 is x and d0 == 10.0
    assert p1 is y and d1 == 6.0


def test_chain_rule_skips_constants():
    x = Scalar(3.0)
    pairs = list((x * Scalar(4.0, history=None)).chain_rule(1.0))
    assert len(pairs) == 1 and pairs[0][0] is x and pairs[0][1] == 4.0
    pairs = list((4.0 - x).chain_rule(1.0))
    assert len(pairs) == 1 and pairs[0][1] == 1.0  # 4 - x is 4 + (-x): the parent is -x


def test_chain_rule_lists_a_repeated_input_twice():
    x = Scalar(3.0)
    pairs = list((x * x).chain_rule(1.0))
    assert [p is x for p, _ in pairs] == [True, True]
    assert [d for _, d in pairs] == [3.0, 3.0]


def test_chain_rule_of_a_leaf_is_empty():
    assert list(Scalar(1.0).chain_rule(1.0)) == []


@given(st.floats(0.1, 10.0), small_floats)
def test_chain_rule_of_unary_ops(x, d):
    leaf = Scalar(x)
    ((p, g),) = leaf.log().chain_rule(d)
    assert p is leaf and g == pytest.approx(d / x, rel=1e-12)
    ((p, g),) = leaf.exp().chain_rule(d)
    assert p is leaf and g == pytest.approx(d * math.exp(x), rel=1e-12)


# -- every operation against central differences, every argument --------------------------


@pytest.mark.parametrize("name, fn, inputs", UNARY, ids=ids(UNARY))
@given(data=st.data())
def test_unary_derivatives(name, fn, inputs, data):
    check_chain_rule(fn, data.draw(inputs))


@pytest.mark.parametrize("name, fn, inputs", BINARY, ids=ids(BINARY))
@given(data=st.data())
def test_binary_derivatives(name, fn, inputs, data):
    check_chain_rule(fn, *data.draw(inputs))


@pytest.mark.parametrize("name, fn, inputs", BINARY, ids=ids(BINARY))
@given(data=st.data())
def test_binary_derivatives_with_a_number_on_either_side(name, fn, inputs, data):
    x, y = data.draw(inputs)
    check_chain_rule(lambda a: fn(a, y), x)
    check_chain_rule(lambda b: fn(x, b), y)


@given(st.floats(0.5, 2.0), st.floats(-2.0, 2.0), st.floats(-2.0, 2.0))
def test_composite_expression(x, y, z):
    assume(abs(z - y) > 1e-3 and abs(x - y) > 1e-3)  # away from the kinks of relu and <

    def f(a, b, c):
        return ((a * b + c).sigmoid() * a.log() - (b / a) ** 2 + (c - b).relu() * 3.0).tanh() + (a < b) * c

    check_chain_rule(f, x, y, z)


def test_relu_derivative_at_zero_is_zero():
    x = Scalar(0.0)
    ((p, g),) = x.relu().chain_rule(1.0)
    assert p is x and g == 0.0


# -- against PyTorch -------------------------------------------------------------------


@pytest.mark.parametrize("name, fn, inputs", UNARY + BINARY, ids=ids(UNARY + BINARY))
@given(data=st.data())
def test_derivatives_match_torch(name, fn, inputs, data):
    torch = pytest.importorskip("torch")
    values = data.draw(inputs)
    values = values if isinstance(values, tuple) else (values,)
    ours = [Scalar(v) for v in values]
    grads = gradients_by_chain_rule(fn(*ours))
    theirs = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    out = fn(*theirs)
    if not out.requires_grad:
        # torch's comparisons are not differentiable; their derivative is zero where defined.
        assert [grads.get(s.unique_id) for s in ours] == [0.0] * len(ours)
        return
    out.backward()
    for i, (s, t) in enumerate(zip(ours, theirs, strict=True)):
        assert grads[s.unique_id] == pytest.approx(t.grad.item(), rel=1e-9, abs=1e-12), (
            f"the derivative of {name}{values} in argument {i}: {grads[s.unique_id]!r}, PyTorch's {t.grad.item()!r}"
        )


# -- custom Functions --------------------------------------------------------------------


class Cube(Function):
    """x ** 3, legacy style: forward receives ctx."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a * a

    @staticmethod
    def backward(ctx, d):
        (a,) = ctx.saved_tensors
        return 3.0 * a * a * d


@given(small_floats)
def test_custom_function_legacy_style(x):
    check_chain_rule(lambda a: Cube.apply(a) + a, x)


# The combined style (forward without ctx, setup_context) and ctx.needs_input_grad are module 5's
# Function API: tests/module5/test_scalar_function_api.py.


def test_forward_receives_floats():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b):
            seen.extend([a, b])
            return a + b

        @staticmethod
        def backward(ctx, d):
            return d, d

    Probe.apply(Scalar(1.0), 2.0)
    assert seen == [1.0, 2.0] and all(type(v) is float for v in seen)


def test_wrong_number_of_gradients_is_an_error():
    class BadMul(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, d):
            return d

    out = BadMul.apply(Scalar(1.0), Scalar(2.0))
    with pytest.raises(RuntimeError, match=r"BadMulBackward.*incorrect number of gradients \(expected 2, got 1\)"):
        list(out.chain_rule(1.0))


def test_too_many_gradients_is_an_error():
    class TooMany(Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, d):
            return d, 1.0

    with pytest.raises(RuntimeError, match=r"incorrect number of gradients \(expected 1, got 2\)"):
        list(TooMany.apply(Scalar(1.0)).chain_rule(1.0))
    # (that extra trailing Nones are allowed, as PyTorch allows them, is module 5's Function API)


def test_gradient_for_a_non_variable_input_is_an_error():
    class Scale(Function):
        @staticmethod
        def forward(ctx, a, k):
            return a * k

        @staticmethod
        def backward(ctx, d):
            return d * 3.0, d  # wrong: k is a plain number and must get None

    out = Scale.apply(Scalar(1.0), 3.0)
    with pytest.raises(RuntimeError, match=r"ScaleBackward.*position 1.*not a Variable"):
        list(out.chain_rule(1.0))


def test_gradient_of_the_wrong_type_is_an_error():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, d):
            return "one"

    with pytest.raises(RuntimeError, match="WrongBackward returned an invalid gradient"):
        list(Wrong.apply(Scalar(1.0)).chain_rule(1.0))


def test_none_gradient_means_no_contribution():
    class FirstOnly(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, d):
            return d, None

    x, y = Scalar(1.0), Scalar(2.0)
    pairs = list(FirstOnly.apply(x, y).chain_rule(1.0))
    assert len(pairs) == 1 and pairs[0][0] is x and pairs[0][1] == 1.0


@given(nonzero_floats)
def test_function_without_variables_returns_the_raw_result(x):
    assert Cube.apply(x) == pytest.approx(x**3)
