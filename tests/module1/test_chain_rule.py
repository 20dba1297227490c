"""Task 1.3: each operation's derivative, one step of the chain rule, and custom Functions."""

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from torchlight import Scalar
from torchlight.autograd import Context, Function, central_difference

from .strategies import BINARY, UNARY, nonzero_floats, small_floats

pytestmark = pytest.mark.task1_3


def ids(table):
    return [row[0] for row in table]


def check_gradients(fn, *values):
    """Backward through fn(*Scalars) gives, for every argument, the central difference."""
    leaves = [Scalar(v) for v in values]
    out = fn(*leaves)
    out.backward()
    for i, leaf in enumerate(leaves):
        expected = central_difference(lambda *vs: fn(*[Scalar(v) for v in vs]), *values, arg=i)
        assert leaf.grad is not None, f"argument {i} got no gradient"
        assert leaf.grad == pytest.approx(expected, rel=1e-5, abs=1e-5), f"argument {i}"


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
def test_unary_gradients(name, fn, inputs, data):
    check_gradients(fn, data.draw(inputs))


@pytest.mark.parametrize("name, fn, inputs", BINARY, ids=ids(BINARY))
@given(data=st.data())
def test_binary_gradients(name, fn, inputs, data):
    check_gradients(fn, *data.draw(inputs))


@pytest.mark.parametrize("name, fn, inputs", BINARY, ids=ids(BINARY))
@given(data=st.data())
def test_binary_gradients_with_a_number_on_either_side(name, fn, inputs, data):
    x, y = data.draw(inputs)
    check_gradients(lambda a: fn(a, y), x)
    check_gradients(lambda b: fn(x, b), y)


@given(st.floats(0.5, 2.0), st.floats(-2.0, 2.0), st.floats(-2.0, 2.0))
def test_composite_expression(x, y, z):
    assume(abs(z - y) > 1e-3 and abs(x - y) > 1e-3)  # away from the kinks of relu and <

    def f(a, b, c):
        return ((a * b + c).sigmoid() * a.log() - (b / a) ** 2 + (c - b).relu() * 3.0).tanh() + (a < b) * c

    check_gradients(f, x, y, z)


def test_relu_derivative_at_zero_is_zero():
    x = Scalar(0.0)
    x.relu().backward()
    assert x.grad == 0.0


# -- against PyTorch -------------------------------------------------------------------


@pytest.mark.parametrize("name, fn, inputs", UNARY + BINARY, ids=ids(UNARY + BINARY))
@given(data=st.data())
def test_gradients_match_torch(name, fn, inputs, data):
    torch = pytest.importorskip("torch")
    values = data.draw(inputs)
    values = values if isinstance(values, tuple) else (values,)
    ours = [Scalar(v) for v in values]
    fn(*ours).backward()
    theirs = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    out = fn(*theirs)
    if not out.requires_grad:
        # torch's comparisons are not differentiable; their derivative is zero where defined.
        assert [s.grad for s in ours] == [0.0] * len(ours)
        return
    out.backward()
    for s, t in zip(ours, theirs):
        assert s.grad == pytest.approx(t.grad.item(), rel=1e-9, abs=1e-12)


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


class ScaledProduct(Function):
    """k * a * b, combined style: forward without ctx and a separate setup_context."""

    @staticmethod
    def forward(a, b, k):
        return k * a * b

    @staticmethod
    def setup_context(ctx, inputs, output):
        a, b, k = inputs
        ctx.save_for_backward(a, b)
        ctx.k = k

    @staticmethod
    def backward(ctx, d):
        a, b = ctx.saved_tensors
        return ctx.k * b * d, ctx.k * a * d, None


@given(small_floats)
def test_custom_function_legacy_style(x):
    check_gradients(lambda a: Cube.apply(a) + a, x)


@given(small_floats, small_floats, st.floats(-3.0, 3.0))
def test_custom_function_combined_style(x, y, k):
    out = ScaledProduct.apply(Scalar(x), Scalar(y), k)
    assert out.data == pytest.approx(k * x * y)
    assert out.history.last_fn is ScaledProduct
    check_gradients(lambda a, b: ScaledProduct.apply(a, b, k), x, y)


def test_combined_style_forward_receives_no_context():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(a):
            seen.append(a)
            return 2.0 * a

        @staticmethod
        def setup_context(ctx, inputs, output):
            seen.append((type(ctx), inputs, output))

        @staticmethod
        def backward(ctx, d):
            return 2.0 * d

    x = Scalar(1.5)
    Probe.apply(x).backward()
    assert seen == [1.5, (Context, (1.5,), 3.0)]
    assert x.grad == 2.0


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


def test_needs_input_grad_is_known_before_forward():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b, c, k):
            seen.append(ctx.needs_input_grad)
            return a * b * c * k

        @staticmethod
        def backward(ctx, d):
            return d, d, d, None

    leaf, const = Scalar(1.0), Scalar(2.0, history=None)
    Probe.apply(leaf, const, leaf * 2.0, 3.0)
    assert seen == [(True, False, True, False)]


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
        out.backward()


def test_too_many_gradients_is_an_error_but_trailing_nones_are_allowed():
    class TooMany(Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, d):
            return d, 1.0

    with pytest.raises(RuntimeError, match=r"incorrect number of gradients \(expected 1, got 2\)"):
        TooMany.apply(Scalar(1.0)).backward()

    class TrailingNone(Function):
        @staticmethod
        def forward(ctx, a):
            return 2.0 * a

        @staticmethod
        def backward(ctx, d):
            return 2.0 * d, None

    x = Scalar(1.0)
    TrailingNone.apply(x).backward()
    assert x.grad == 2.0


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
        out.backward()


def test_gradient_of_the_wrong_type_is_an_error():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, d):
            return "one"

    with pytest.raises(RuntimeError, match="WrongBackward returned an invalid gradient"):
        Wrong.apply(Scalar(1.0)).backward()


def test_none_gradient_means_no_contribution():
    class FirstOnly(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, d):
            return d, None

    x, y = Scalar(1.0), Scalar(2.0)
    FirstOnly.apply(x, y).backward()
    assert x.grad == 1.0 and y.grad is None


@given(nonzero_floats)
def test_function_without_variables_returns_the_raw_result(x):
    assert Cube.apply(x) == pytest.approx(x**3)
