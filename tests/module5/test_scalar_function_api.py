"""Task 5.1: the Function API on Scalars (moved from tests/module1/test_chain_rule.py: the combined
style with setup_context, ctx.needs_input_grad and extra trailing None gradients are module 5's)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from torchlight import Scalar
from torchlight.autograd import Context, Function, central_difference

pytestmark = pytest.mark.task5_1

small_floats = st.floats(min_value=-100.0, max_value=100.0, allow_nan=False, allow_infinity=False)


def check_gradients(fn, *values):
    """Backward through fn(*Scalars) gives, for every argument, the central difference."""
    leaves = [Scalar(v) for v in values]
    out = fn(*leaves)
    out.backward()
    for i, leaf in enumerate(leaves):
        expected = central_difference(lambda *vs: fn(*[Scalar(v) for v in vs]), *values, arg=i)
        assert leaf.grad is not None, f"argument {i} got no gradient"
        assert leaf.grad == pytest.approx(expected, rel=1e-5, abs=1e-5), f"argument {i}"


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


def test_needs_input_grad_is_known_before_forward_for_scalars():
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


def test_trailing_none_gradients_are_allowed_for_scalars():
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
