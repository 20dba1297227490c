"""Task 5.4: forward-mode AD. Every built-in op's jvp against reverse mode, central differences
and ``torch.func.jvp``; dual levels; custom Functions' jvp; ``autograd.functional``."""

import numpy as np
import pytest

import torchlight
from torchlight import Scalar
from torchlight.autograd import (
    Function,
    GradcheckError,
    functional,
    grad,
    gradcheck,
    once_differentiable,
)
from torchlight.autograd import forward_ad as fwad

from .cases import CASES
from .helpers import assert_close, torch_leaves

pytestmark = [
    pytest.mark.task5_4,
    pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated"),  # inside torch.func
]


def tangents_for(case, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in case.shapes]


def forward_jvp(fn, xs, ts):
    """J @ t by forward mode: the output's tangent (as numpy, zeros if it has none)."""
    with fwad.dual_level():
        out = fn(*[fwad.make_dual(x, x.new_tensor(t)) for x, t in zip(xs, ts, strict=True)])
        tangent = fwad.unpack_dual(out).tangent
        return out.to_numpy(), (np.zeros(out.shape) if tangent is None else tangent.to_numpy())


def reverse_jvp(fn, xs, ts):
    """J @ t from the full Jacobian, built row by row with reverse mode."""
    out = fn(*xs)
    flat = np.zeros(out.numel())
    for k in range(out.numel()):
        onehot = np.zeros(out.numel())
        onehot[k] = 1.0
        rows = grad(out, xs, out.new_tensor(onehot.reshape(out.shape)), retain_graph=True, allow_unused=True)
        flat[k] = sum(0.0 if r is None else float(np.sum(r.to_numpy() * t)) for r, t in zip(rows, ts, strict=True))
    return flat.reshape(out.shape)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_forward_mode_equals_reverse_mode(case):
    xs, ts = case.tensors(), tangents_for(case)
    value, jvp = forward_jvp(case.fn, xs, ts)
    np.testing.assert_allclose(value, case.fn(*xs).to_numpy())
    np.testing.assert_allclose(jvp, reverse_jvp(case.fn, xs, ts), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_forward_mode_matches_torch_func_jvp(torch, case):
    arrays, ts = case.arrays(), tangents_for(case)
    out, jvp = functional.jvp(
        case.fn, tuple(case.tensors(requires_grad=False)), tuple(torchlight.tensor(t) for t in ts)
    )
    tout, tjvp = torch.func.jvp(
        lambda *a: case.run_torch(torch, *a),
        tuple(torch_leaves(torch, arrays, requires_grad=False)),
        tuple(torch_leaves(torch, ts, requires_grad=False)),
    )
    assert_close(out, tout)
    assert_close(jvp, tjvp)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_gradcheck_with_forward_ad(case):
    assert gradcheck(case.fn, case.tensors(), check_forward_ad=True)


def test_gradcheck_catches_a_wrong_jvp():
    class WrongJvp(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2.0 * x * g

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return x * t  # should be 2 * x * t

    x = torchlight.tensor([0.5, 1.5], requires_grad=True)
    assert gradcheck(WrongJvp.apply, x)  # reverse mode is right
    with pytest.raises(GradcheckError, match="forward-mode AD"):
        gradcheck(WrongJvp.apply, x, check_forward_ad=True)
    with pytest.raises(GradcheckError, match="forward-mode AD in random direction"):
        gradcheck(WrongJvp.apply, x, check_forward_ad=True, fast_mode=True)


# -- dual levels, make_dual, unpack_dual -----------------------------------------------------------


def test_dual_tensors_carry_tangents_inside_their_level():
    x = torchlight.tensor([1.0, 2.0])
    t = torchlight.tensor([1.0, 0.0])
    with fwad.dual_level():
        d = fwad.make_dual(x, t)
        primal, tangent = fwad.unpack_dual(d)
        assert tangent is t, "unpack_dual(make_dual(x, t)).tangent is the tangent t itself"
        assert primal.tolist() == [1.0, 2.0], (
            f"unpack_dual(make_dual(x, t)).primal is {primal.tolist()}, not x's [1, 2]"
        )
        assert primal is not d, "the primal of a dual tensor is a view of it without the tangent, not the dual itself"
        assert fwad.unpack_dual(primal).tangent is None, "the primal of a dual tensor carries no tangent"
        y = d * d
        got = fwad.unpack_dual(y).tangent.tolist()
        assert got == [2.0, 0.0], f"the tangent of d * d at d = [1, 2] along [1, 0] is {got}, not [2, 0]"
        assert fwad.unpack_dual(x).tangent is None, "make_dual(x, t) gave x itself a tangent"
    assert fwad.unpack_dual(y).tangent is None, "outside its dual level a tensor has no tangent"
    assert fwad.unpack_dual(y).primal is y, "the primal of a tensor without a tangent is the tensor itself"
    assert (y * 2.0).tolist() == [2.0, 8.0]  # and y is an ordinary tensor again


def test_a_non_differentiable_output_gets_no_tangent():
    class SignAndDouble(Function):
        @staticmethod
        def forward(ctx, x):
            sign = (x > 0.0) * 2.0 - 1.0
            ctx.mark_non_differentiable(sign)
            return x * 2.0, sign

        @staticmethod
        def backward(ctx, g, g_sign):
            return g * 2.0

        @staticmethod
        def jvp(ctx, t):
            return t * 2.0, t  # a tangent for sign too, which must be dropped

    with fwad.dual_level():
        x = fwad.make_dual(torchlight.tensor([-1.0, 3.0]), torchlight.tensor([1.0, 1.0]))
        doubled, sign = SignAndDouble.apply(x)
        got = fwad.unpack_dual(doubled).tangent.tolist()
        assert got == [2.0, 2.0], f"the tangent of the differentiable output is {got}, not the jvp's [2, 2]"
        assert fwad.unpack_dual(sign).tangent is None, "an output marked non-differentiable got a tangent"


def test_level_errors(torch):
    x = torchlight.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwad.make_dual(x, x)
    with fwad.dual_level():
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            with fwad.dual_level():
                pass
        with pytest.raises(RuntimeError, match="Trying to set a forward gradient that has a different size"):
            fwad.make_dual(x, torchlight.ones(3))
        with pytest.raises(RuntimeError, match="invalid tangent"):
            fwad.make_dual(x, 1.0)
    with torch.autograd.forward_ad.dual_level():
        with pytest.raises(RuntimeError, match="Trying to set a forward gradient that has a different size"):
            torch.autograd.forward_ad.make_dual(torch.ones(2), torch.ones(3))


def test_enter_and_exit_dual_level():
    level = fwad.enter_dual_level()
    try:
        d = fwad.make_dual(torchlight.tensor([3.0]), torchlight.tensor([1.0]))
        assert fwad.unpack_dual(d.exp()).tangent.item() == pytest.approx(np.exp(3.0))
    finally:
        fwad.exit_dual_level(level=level)
    with pytest.raises(RuntimeError, match="exit"):
        fwad.exit_dual_level()


def test_dual_tensors_stay_in_the_reverse_graph():
    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    with fwad.dual_level():
        d = fwad.make_dual(x, torchlight.tensor([1.0, 1.0]))
        y = (d * d * d).sum()
        jvp = fwad.unpack_dual(y).tangent
        y.backward()
    assert x.grad.tolist() == [3.0, 12.0]
    assert jvp.item() == pytest.approx(3.0 + 12.0)


def test_forward_mode_works_under_no_grad():
    with torchlight.no_grad(), fwad.dual_level():
        d = fwad.make_dual(torchlight.tensor([2.0]), torchlight.tensor([1.0]))
        y = d.sigmoid()
        s = 1.0 / (1.0 + np.exp(-2.0))
        assert fwad.unpack_dual(y).tangent.item() == pytest.approx(s * (1.0 - s))
        assert not y.requires_grad


def test_inplace_ops_update_the_tangent(torch):
    a, b, ta_, tb_ = np.array([1.0, 2.0]), np.array([0.5, -1.0]), np.array([1.0, 3.0]), np.array([2.0, 1.0])

    def f(x, y):
        z = x * 1.0
        z.mul_(y)
        z.add_(y, alpha=2.0)
        z[0] = y[1] * 3.0
        return z

    _, jvp = functional.jvp(
        f, (torchlight.tensor(a), torchlight.tensor(b)), (torchlight.tensor(ta_), torchlight.tensor(tb_))
    )
    _, tjvp = torch.func.jvp(
        f, tuple(torch_leaves(torch, [a, b], False)), tuple(torch_leaves(torch, [ta_, tb_], False))
    )
    assert_close(jvp, tjvp)


# -- custom Functions' jvp --------------------------------------------------------------------------


def scaled_product(base, seen=None):
    class ScaledProduct(base):
        @staticmethod
        def forward(x, y, k):
            return x * y * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y, k = inputs
            ctx.save_for_backward(x, y)
            ctx.save_for_forward(x, y)
            ctx.k = k

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y * ctx.k, g * x * ctx.k, None

        @staticmethod
        def jvp(ctx, tx, ty, tk):
            if seen is not None:
                seen.append((tx is None, ty is None, tk))
            x, y = ctx.saved_tensors
            out = 0.0
            if tx is not None:
                out = out + tx * y * ctx.k
            if ty is not None:
                out = out + x * ty * ctx.k
            return out

    return ScaledProduct


def test_custom_jvp_gets_none_for_inputs_without_a_tangent(torch):
    x, y, tx = np.array([1.0, 2.0]), np.array([3.0, -1.0]), np.array([1.0, 0.5])
    seen, tseen = [], []
    with fwad.dual_level():
        out = scaled_product(Function, seen).apply(
            fwad.make_dual(torchlight.tensor(x), torchlight.tensor(tx)), torchlight.tensor(y), 2.0
        )
        mine = fwad.unpack_dual(out).tangent
    with torch.autograd.forward_ad.dual_level():
        tfn = scaled_product(torch.autograd.Function, tseen)
        tout = tfn.apply(torch.autograd.forward_ad.make_dual(torch.tensor(x), torch.tensor(tx)), torch.tensor(y), 2.0)
        theirs = torch.autograd.forward_ad.unpack_dual(tout).tangent
    # torchlight passes None for y, as the reference page says; PyTorch passes zeros. Same result.
    assert seen == [(False, True, None)] and tseen == [(False, False, None)]
    assert_close(mine, theirs)


def test_custom_jvp_matches_its_backward():
    fn = scaled_product(Function)
    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    y = torchlight.tensor([3.0, -1.0], requires_grad=True)
    assert gradcheck(lambda a, b: fn.apply(a, b, 2.0), (x, y), check_forward_ad=True)


def test_legacy_style_jvp_reads_save_for_forward():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2.0 * x * g

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_for_forward
            return 2.0 * x * t

    out, jvp = functional.jvp(Square.apply, torchlight.tensor([3.0]), torchlight.tensor([1.0]))
    assert out.tolist() == [9.0] and jvp.tolist() == [6.0]


def test_a_function_without_jvp_is_an_error():
    class NoJvp(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g * 2.0

    x = torchlight.tensor([1.0])
    assert NoJvp.apply(x).tolist() == [2.0]  # fine without tangents
    with fwad.dual_level():
        assert NoJvp.apply(x).tolist() == [2.0]  # and inside a level without them
        with pytest.raises(NotImplementedError, match="You must implement the jvp function.*NoJvp"):
            NoJvp.apply(fwad.make_dual(x, torchlight.tensor([1.0])))


def test_jvp_must_return_one_tangent_per_output():
    class TwoOut(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0, x * 3.0

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2.0 + g2 * 3.0

        @staticmethod
        def jvp(ctx, t):
            return t * 2.0

    with fwad.dual_level():
        x = fwad.make_dual(torchlight.tensor([1.0]), torchlight.tensor([1.0]))
        with pytest.raises(
            RuntimeError, match=r"jvp returned an invalid number of forward gradients \(expected 2 but got 1\)"
        ):
            TwoOut.apply(x)


def test_a_tangent_that_broadcasts_is_expanded():
    class AddBias(Function):
        @staticmethod
        def forward(ctx, x, b):
            return x + b

        @staticmethod
        def backward(ctx, g):
            return g, g

        @staticmethod
        def jvp(ctx, tx, tb):
            return tb  # shape (3,) for an output of shape (2, 3)

    with fwad.dual_level():
        b = fwad.make_dual(torchlight.zeros(3), torchlight.tensor([1.0, 2.0, 3.0]))
        out = AddBias.apply(torchlight.zeros(2, 3), b)
        assert fwad.unpack_dual(out).tangent.tolist() == [[1.0, 2.0, 3.0]] * 2


def test_scalars_have_no_forward_mode_yet():
    # the engine does not special-case Scalar: its Functions define no jvp, and say so
    with fwad.dual_level():
        s = fwad.make_dual(Scalar(2.0), 1.0)
        with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
            s * s


# -- autograd.functional ---------------------------------------------------------------------------

A = np.random.default_rng(4).standard_normal((3, 3))


def f_tl(x):
    return ((x @ torchlight.tensor(A)).tanh() * x).sum() + (x * x * x).sum()


def f_torch(torch, x):
    return ((x @ torch.tensor(A)).tanh() * x).sum() + (x * x * x).sum()


def test_functional_jvp_vjp_hvp_match_torch(torch):
    x, v = np.array([0.1, -0.5, 0.8]), np.array([1.0, 2.0, -1.0])
    tx, tv = torch.tensor(x), torch.tensor(v)

    out, jvp = functional.jvp(
        lambda a: (a @ torchlight.tensor(A)).sigmoid(), torchlight.tensor(x), torchlight.tensor(v)
    )
    tout, tjvp = torch.func.jvp(lambda a: (a @ torch.tensor(A)).sigmoid(), (tx,), (tv,))
    assert_close(out, tout)
    assert_close(jvp, tjvp)

    out, vjp = functional.vjp(
        lambda a: (a @ torchlight.tensor(A)).sigmoid(), torchlight.tensor(x), torchlight.tensor(v)
    )
    tout, tvjp = torch.autograd.functional.vjp(lambda a: (a @ torch.tensor(A)).sigmoid(), tx, tv)
    assert_close(out, tout)
    assert_close(vjp, tvjp)

    out, hvp = functional.hvp(f_tl, torchlight.tensor(x), torchlight.tensor(v))
    tout, thvp = torch.autograd.functional.hvp(lambda a: f_torch(torch, a), tx, tv)
    assert_close(out, tout)
    assert_close(hvp, thvp)


def test_hvp_forward_over_reverse_equals_reverse_over_reverse():
    x, v = torchlight.tensor([0.3, 0.2, -0.7], requires_grad=True), torchlight.tensor([0.5, -1.0, 2.0])
    _, hvp = functional.hvp(f_tl, x, v)
    (g,) = grad(f_tl(x), x, create_graph=True)
    (expected,) = grad((g * v).sum(), x)
    np.testing.assert_allclose(hvp.to_numpy(), expected.to_numpy(), rtol=1e-10)


def test_functional_with_several_inputs_and_outputs(torch):
    a, b, ta_, tb_ = (np.random.default_rng(k).standard_normal(3) for k in range(4))

    def f(x, y, lib_exp):
        return x * y, lib_exp(x + y)

    outs, jvps = functional.jvp(
        lambda x, y: f(x, y, lambda t: t.exp()),
        (torchlight.tensor(a), torchlight.tensor(b)),
        (torchlight.tensor(ta_), torchlight.tensor(tb_)),
    )
    touts, tjvps = torch.func.jvp(
        lambda x, y: f(x, y, torch.exp),
        tuple(torch.tensor(z) for z in (a, b)),
        tuple(torch.tensor(z) for z in (ta_, tb_)),
    )
    assert isinstance(jvps, tuple) and len(jvps) == 2
    for mine, theirs in zip(jvps, tjvps, strict=True):
        assert_close(mine, theirs)
    _, vjps = functional.vjp(lambda x, y: x * y, (torchlight.tensor(a), torchlight.tensor(b)), torchlight.tensor(ta_))
    assert np.allclose(vjps[0].to_numpy(), ta_ * b) and np.allclose(vjps[1].to_numpy(), ta_ * a)


def test_functional_errors():
    x = torchlight.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="one entry of tangents per entry of primals"):
        functional.jvp(lambda a: a, (x,), (x, x))
    with pytest.raises(RuntimeError, match="shape"):
        functional.jvp(lambda a: a, x, torchlight.ones(3))
    with pytest.raises(TypeError, match="tensor or a tuple of tensors"):
        functional.jvp(lambda a: a, [1.0, 2.0], x)


def test_once_differentiable_blocks_forward_over_reverse():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            return x * x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3.0 * x * x * g

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 3.0 * x * x * t

    x = torchlight.tensor([1.0, 2.0])
    _, jvp = functional.jvp(Cube.apply, x, torchlight.ones(2))
    assert jvp.tolist() == [3.0, 12.0]  # first-order forward mode is fine
    with pytest.raises(RuntimeError, match="once_differentiable"):
        functional.hvp(lambda a: Cube.apply(a).sum(), x, torchlight.ones(2))
