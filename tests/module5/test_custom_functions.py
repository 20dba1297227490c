"""Task 5.1: custom Functions. Both forward styles, ctx's bookkeeping, and backward's validation.

Each custom Function here is written once, in a factory that takes the base class, and built
for torchlight and for PyTorch from the very same code: their gradients must agree.
"""

import numpy as np
import pytest

import torchlight
from torchlight import Scalar
from torchlight.autograd import (
    Function,
    InplaceFunction,
    NestedIOFunction,
    grad,
    gradcheck,
    once_differentiable,
)

from .helpers import assert_close, torch_leaves

pytestmark = pytest.mark.task5_1

RNG = np.random.default_rng(5)
X = RNG.uniform(-1.0, 1.0, (2, 3))
W = RNG.uniform(-1.0, 1.0, (3,))


# -- the same code, two libraries --------------------------------------------------------------


def legacy_style(base):
    class ScaledExp(base):
        """scale * exp(x * w); w broadcasts against x."""

        @staticmethod
        def forward(ctx, x, w, scale):
            out = (x * w).exp() * scale
            ctx.save_for_backward(x, w, out)
            return out

        @staticmethod
        def backward(ctx, g):
            x, w, out = ctx.saved_tensors
            # g * out * x has x's shape (2, 3): the engine sums it down to w's (3,)
            return g * out * w, g * out * x, None

    return ScaledExp


def combined_style(base):
    class ScaledExp(base):
        @staticmethod
        def forward(x, w, scale=2.0):
            return (x * w).exp() * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, w, scale = inputs
            ctx.save_for_backward(x, w, output)

        @staticmethod
        def backward(ctx, g):
            x, w, out = ctx.saved_tensors
            return g * out * w, g * out * x, None

    return ScaledExp


def run_both(torch, make, call):
    """Gradients of call(Fn, x, w).sum() for x, w in torchlight and in PyTorch."""
    x, w = torchlight.tensor(X, requires_grad=True), torchlight.tensor(W, requires_grad=True)
    tx, tw = torch_leaves(torch, [X, W])
    out = call(make(Function), x, w)
    tout = call(make(torch.autograd.Function), tx, tw)
    assert_close(out, tout)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    assert_close(x.grad, tx.grad)
    assert_close(w.grad, tw.grad)


@pytest.mark.parametrize("make", [legacy_style, combined_style], ids=["legacy", "combined"])
def test_both_styles_give_torchs_gradients(torch, make):
    run_both(torch, make, lambda fn, x, w: fn.apply(x, w, 3.0))


def test_combined_style_fills_defaults_and_keywords(torch):
    run_both(torch, combined_style, lambda fn, x, w: fn.apply(x, w))
    run_both(torch, combined_style, lambda fn, x, w: fn.apply(x, w, scale=0.5))


@pytest.mark.parametrize("make", [legacy_style, combined_style], ids=["legacy", "combined"])
def test_custom_function_passes_gradcheck(make):
    fn = make(Function)
    x, w = torchlight.tensor(X, requires_grad=True), torchlight.tensor(W, requires_grad=True)
    assert gradcheck(lambda a, b: fn.apply(a, b, 1.5), (x, w))


def test_setup_context_sees_inputs_with_defaults_and_the_output():
    seen = {}

    class Affine(Function):
        @staticmethod
        def forward(x, shift=1.0, *, scale=2.0):
            return x * scale + shift

        @staticmethod
        def setup_context(ctx, inputs, output):
            seen["inputs"], seen["output"] = inputs, output

        @staticmethod
        def backward(ctx, g):
            return g * 2.0, None

    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    y = Affine.apply(x)
    assert seen["inputs"][0] is x and seen["inputs"][1:] == (1.0, 2.0), (
        f"forward(x, shift=1.0, *, scale=2.0) applied to x alone: setup_context's inputs were {seen['inputs']}, "
        "not (x, 1.0, 2.0)"
    )
    assert seen["output"].tolist() == [3.0, 5.0]
    Affine.apply(x, 0.0, scale=3.0)
    assert seen["inputs"][1:] == (0.0, 3.0), (
        f"applied to (x, 0.0, scale=3.0): setup_context's inputs after x were {seen['inputs'][1:]}, not (0.0, 3.0)"
    )
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_setup_context_sees_var_positional_and_var_keyword_inputs_spread():
    seen = {}

    class Weighted(Function):
        @staticmethod
        def forward(x, *weights, shift=0.0, **extra):
            return x * sum(weights) + shift

        @staticmethod
        def setup_context(ctx, inputs, output):
            seen["inputs"] = inputs
            ctx.total = sum(inputs[1:-2])  # the weights: after x, before shift and extra's one value

        @staticmethod
        def backward(ctx, g):
            return g * ctx.total, None, None

    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    y = Weighted.apply(x, 2.0, 3.0, label=7.0)
    assert seen["inputs"][0] is x and seen["inputs"][1:] == (2.0, 3.0, 0.0, 7.0), (
        "forward(x, *weights, shift=0.0, **extra) applied to (x, 2.0, 3.0, label=7.0): setup_context's inputs "
        f"were {seen['inputs']}, not (x, 2.0, 3.0, 0.0, 7.0)"
    )
    assert y.tolist() == [5.0, 10.0]
    y.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_needs_input_grad_is_known_before_forward():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen.append(ctx.needs_input_grad)
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            return g, g, None

    a = torchlight.tensor([1.0], requires_grad=True)
    b = torchlight.tensor([2.0])
    Probe.apply(a, b, 3.0)
    Probe.apply(b, a, 3.0)
    assert seen == [(True, False, False), (False, True, False)]


def test_keyword_arguments_reach_forward_as_constants():
    class Scale(Function):
        @staticmethod
        def forward(ctx, x, factor=1.0):
            ctx.factor = factor
            return x * factor

        @staticmethod
        def backward(ctx, g):
            return g * ctx.factor

    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    y = Scale.apply(x, factor=4.0)
    assert y.tolist() == [4.0, 8.0]
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]


def test_forward_sees_tensors_with_recording_off():
    seen = []

    class Peek(Function):
        @staticmethod
        def forward(ctx, x):
            seen.append((torchlight.autograd.is_grad_enabled(), (x * 2.0).requires_grad))
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g * 2.0

    Peek.apply(torchlight.tensor([1.0], requires_grad=True))
    assert seen == [(False, False)]


# -- saved tensors -----------------------------------------------------------------------------


def square(base):
    class Square(base):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2.0 * x * g

    return Square


def test_saved_tensors_are_freed_after_backward():
    fn = square(Function)
    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    y = fn.apply(x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time.*retain_graph=True"):
        y.backward()


def test_retain_graph_keeps_them_and_gradients_accumulate(torch):
    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    (tx,) = torch_leaves(torch, [[1.0, 2.0]])
    y, ty = square(Function).apply(x).sum(), square(torch.autograd.Function).apply(tx).sum()
    y.backward(retain_graph=True)
    ty.backward(retain_graph=True)
    y.backward()
    ty.backward()
    assert_close(x.grad, tx.grad)
    assert x.grad.tolist() == [4.0, 8.0]


# -- outputs: several, non-differentiable, non-tensor ------------------------------------------


def two_outputs(base, materialize=True, seen=None):
    class ExpAndSquare(base):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            e = x.exp()
            ctx.save_for_backward(x, e)
            return e, x * x

        @staticmethod
        def backward(ctx, ge, gs):
            if seen is not None:
                seen.append((ge is None, gs is None))
            x, e = ctx.saved_tensors
            total = 0.0
            if ge is not None:
                total = total + ge * e
            if gs is not None:
                total = total + gs * 2.0 * x
            return total

    return ExpAndSquare


def test_multiple_outputs_match_torch(torch):
    x = torchlight.tensor(X, requires_grad=True)
    (tx,) = torch_leaves(torch, [X])
    e, s = two_outputs(Function).apply(x)
    te, ts = two_outputs(torch.autograd.Function).apply(tx)
    (e * 3.0 + s.tanh()).sum().backward()
    (te * 3.0 + ts.tanh()).sum().backward()
    assert_close(x.grad, tx.grad)


@pytest.mark.parametrize("materialize", [True, False])
def test_unused_output_gets_zeros_or_none(torch, materialize):
    seen, tseen = [], []
    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    (tx,) = torch_leaves(torch, [[1.0, 2.0]])
    e, _ = two_outputs(Function, materialize, seen).apply(x)
    te, _ = two_outputs(torch.autograd.Function, materialize, tseen).apply(tx)
    e.sum().backward()
    te.sum().backward()
    assert seen == tseen == [(False, not materialize)], (
        f"set_materialize_grads({materialize}), only the first output used: backward saw (ge is None, gs is None) "
        f"= {seen}, PyTorch's {tseen}"
    )
    assert_close(x.grad, tx.grad)


def test_mark_non_differentiable(torch):
    def sort_of(base):
        class MaxAndMask(base):
            @staticmethod
            def forward(ctx, x):
                m = x.max()
                mask = x == m
                ctx.mark_non_differentiable(mask)
                ctx.save_for_backward(mask)
                return m * 1.0, mask

            @staticmethod
            def backward(ctx, g, g_mask):
                (mask,) = ctx.saved_tensors
                return g * mask

        return MaxAndMask

    x = torchlight.tensor([1.0, 3.0, 2.0], requires_grad=True)
    (tx,) = torch_leaves(torch, [[1.0, 3.0, 2.0]])
    m, mask = sort_of(Function).apply(x)
    tm, tmask = sort_of(torch.autograd.Function).apply(tx)
    assert not mask.requires_grad and not tmask.requires_grad
    assert m.requires_grad
    m.backward()
    tm.backward()
    assert_close(x.grad, tx.grad)


def test_non_tensor_outputs_pass_through():
    class WithCount(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0, 7

        @staticmethod
        def backward(ctx, g, g_count):
            assert g_count is None
            return g * 2.0

    x = torchlight.tensor([1.0], requires_grad=True)
    y, n = WithCount.apply(x)
    assert n == 7 and isinstance(n, int)
    y.sum().backward()
    assert x.grad.tolist() == [2.0]


def test_returning_an_input_makes_a_new_node():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3.0  # deliberately not 1, to see that this backward is used

    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    y = Identity.apply(x)
    assert y is not x and y.grad_fn is Identity and x.is_leaf
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


# -- backward's results are checked --------------------------------------------------------------


def bad_backward(result):
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return result(g)

    return Bad


def test_wrong_number_of_gradients_is_an_error():
    x, y = torchlight.tensor([1.0], requires_grad=True), torchlight.tensor([2.0], requires_grad=True)
    out = bad_backward(lambda g: g).apply(x, y)
    with pytest.raises(
        RuntimeError, match=r"function BadBackward returned an incorrect number of gradients \(expected 2, got 1\)"
    ):
        out.backward()
    out = bad_backward(lambda g: (g, g, g)).apply(x, y)
    with pytest.raises(RuntimeError, match=r"expected 2, got 3"):
        out.backward()


def test_extra_trailing_none_gradients_are_allowed():
    x, y = torchlight.tensor([1.0], requires_grad=True), torchlight.tensor([2.0], requires_grad=True)
    bad_backward(lambda g: (g, g * 2.0, None, None)).apply(x, y).backward()
    assert x.grad.tolist() == [1.0] and y.grad.tolist() == [2.0]


def test_gradient_of_the_wrong_shape_is_an_error():
    x = torchlight.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = bad_backward(lambda g: (torchlight.ones(4), None)).apply(x, 2.0)
    with pytest.raises(
        RuntimeError,
        match=r"BadBackward returned an invalid gradient at index 0 - "
        r"got \[4\] but expected shape compatible with \[3\]",
    ):
        out.sum().backward()


def test_gradient_for_a_non_tensor_input_is_an_error():
    x = torchlight.tensor([1.0], requires_grad=True)
    out = bad_backward(lambda g: (g, g)).apply(x, 2.0)
    with pytest.raises(
        RuntimeError, match=r"BadBackward returned a gradient different than None at position 1.*not a Variable"
    ):
        out.backward()


def test_a_gradient_that_broadcasts_is_summed_down(torch):
    def outer(base):
        class Outer(base):
            @staticmethod
            def forward(ctx, col, row):
                ctx.save_for_backward(col, row)
                return col * row  # (3, 1) * (2,) -> (3, 2)

            @staticmethod
            def backward(ctx, g):
                col, row = ctx.saved_tensors
                return g * row, g * col  # both (3, 2): summed down to (3, 1) and (2,)

        return Outer

    c, r = RNG.standard_normal((3, 1)), RNG.standard_normal(2)
    col, row = torchlight.tensor(c, requires_grad=True), torchlight.tensor(r, requires_grad=True)
    tcol, trow = torch_leaves(torch, [c, r])
    outer(Function).apply(col, row).sum().backward()
    outer(torch.autograd.Function).apply(tcol, trow).sum().backward()
    assert col.grad.shape == (3, 1) and row.grad.shape == (2,)
    assert_close(col.grad, tcol.grad)
    assert_close(row.grad, trow.grad)


# -- names, compatibility, scalars --------------------------------------------------------------


def test_name_and_repr():
    Square = square(Function)
    assert Square.name == "SquareBackward"
    assert repr(Square) == "<torchlight Function Square>"
    y = Square.apply(torchlight.tensor([1.0], requires_grad=True))
    assert y.grad_fn is Square and "grad_fn=<SquareBackward>" in repr(y)


def test_vmap_is_not_implemented():
    with pytest.raises(NotImplementedError, match="vmap"):
        square(Function).vmap(None, (0,), torchlight.tensor([1.0]))


def test_compatibility_names_are_importable_and_work():
    class Double(InplaceFunction):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g * 2.0

    x = torchlight.tensor([1.0], requires_grad=True)
    Double.apply(x).backward()
    assert x.grad.tolist() == [2.0]
    assert issubclass(NestedIOFunction, Function) and callable(once_differentiable)
    assert Double(inplace=True).inplace


def test_the_same_function_serves_scalars():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3.0 * x * x * g

    s = Scalar(2.0)
    Cube.apply(s).backward()
    assert s.grad == 12.0
    t = torchlight.tensor([2.0], requires_grad=True)
    (g,) = grad(Cube.apply(t), t)
    assert g.tolist() == [12.0]
