"""Module 2: elementwise operations, each a Function: the primitives, then what is composed of them.

An elementwise op applies one ``torchlight.scalar`` function to every element (``Exp``: ``exp``)
or to every pair of elements of two tensors broadcast together (``Mul``: ``mul``). Its forward is
one backend call, ``a.backend.map(op.exp)(a)`` (stage 2.3), saving what its derivative needs;
the derivative is the rest (stage 2.4).

The Jacobian of an elementwise op is diagonal, so one product gives both directions of the chain
rule: ``derivative(ctx, v) = v * f'(a)`` is the gradient's step back (backward, module 2) and the
tangent's step forward (jvp, module 5). ``_Unary`` and ``_Binary`` turn it into both; a new op
writes ``forward`` and the derivative and nothing else (see docs/adding_an_operation.md).

Derivatives are written in tensor operations, so that a graph is built through them when
``create_graph=True`` and higher-order gradients work. Where no composition of other ops gives
the derivative, the derivative is an op of its own (``InvBack``, ``LogBack``, ``ReluBack``).

Broadcasting needs no code here: a backward returns the gradient in the output's shape and the
engine sums it down to each input's (``Tensor._match_grad``), and a tangent may have any shape
that broadcasts to the output's (``Tensor._match_tangent``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional, Tuple

from .. import scalar as op
from ..autograd.function import Context, Function
from ..extension import extension_point

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = [
    "Abs",
    "Add",
    "Cos",
    "EQ",
    "Exp",
    "GT",
    "Inv",
    "InvBack",
    "IsClose",
    "LT",
    "Log",
    "LogBack",
    "Map",
    "Mul",
    "Neg",
    "Pow",
    "ReLU",
    "ReluBack",
    "Sigmoid",
    "Sin",
    "Sqrt",
    "div",
    "sub",
    "tanh",
]

Grad = Optional["Tensor"]  # a gradient or tangent; None stands for zero (no gradient, no tangent)


def save(ctx: Context, *values: Tensor) -> None:
    """Keep ``values`` for the derivative, which reads them as ``ctx.saved_tensors`` in both modes."""
    ctx.save_for_backward(*values)
    ctx.save_for_forward(*values)  # (module 5: what jvp reads as ctx.saved_tensors)


def _plus(x: Grad, y: Grad) -> Grad:
    """x + y, where None (no tangent) counts as zero."""
    if x is None:
        return y
    if y is None:
        return x
    return x + y


class _Unary(Function):
    """f(a), elementwise. A subclass writes ``forward`` and ``derivative(ctx, v)``: v * f'(a)."""

    @staticmethod
    def derivative(ctx: Context, v: Tensor) -> Grad:
        raise NotImplementedError

    @classmethod
    def backward(cls, ctx: Context, g: Tensor) -> Grad:
        return cls.derivative(ctx, g)

    @classmethod
    def jvp(cls, ctx: Context, t: Tensor) -> Grad:
        # BEGIN SOLUTION 5.4: the tangent's step forward (module 5), from the same derivative
        return cls.derivative(ctx, t)
        # END SOLUTION 5.4


class _Binary(Function):
    """f(a, b), elementwise. A subclass writes ``forward``, ``partial_a(ctx, v)`` (v * df/da) and
    ``partial_b(ctx, v)`` (v * df/db); None stands for a derivative that is zero."""

    @staticmethod
    def partial_a(ctx: Context, v: Tensor) -> Grad:
        raise NotImplementedError

    @staticmethod
    def partial_b(ctx: Context, v: Tensor) -> Grad:
        raise NotImplementedError

    @classmethod
    def backward(cls, ctx: Context, g: Tensor) -> Tuple[Grad, Grad]:
        needs = ctx.needs_input_grad  # skip the work for an input that gets no gradient
        return (cls.partial_a(ctx, g) if needs[0] else None), (cls.partial_b(ctx, g) if needs[1] else None)

    @classmethod
    def jvp(cls, ctx: Context, ta: Grad, tb: Grad) -> Grad:
        # HINT: a tangent may be None (no tangent: zero); _plus adds two, None counting as zero.
        # BEGIN SOLUTION 5.4: the tangent's step forward (module 5): the sum of both partials
        return _plus(None if ta is None else cls.partial_a(ctx, ta), None if tb is None else cls.partial_b(ctx, tb))
        # END SOLUTION 5.4


# -- arithmetic -------------------------------------------------------------------------------


class Neg(_Unary):
    """-a"""

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.3
        return a.backend.map(op.neg)(a)
        # END SOLUTION 2.3

    @staticmethod
    def derivative(ctx: Context, v: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.4
        return -v
        # END SOLUTION 2.4


class Add(_Binary):
    """a + b"""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.3
        return a.backend.zip(op.add)(a, b)
        # END SOLUTION 2.3

    @staticmethod
    def partial_a(ctx: Context, v: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.4
        return v
        # END SOLUTION 2.4

    @staticmethod
    def partial_b(ctx: Context, v: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.4
        return v
        # END SOLUTION 2.4


class Mul(_Binary):
    """a * b"""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.3
        # HINT: save(ctx, ...) what the derivative will need (stage 2.4); read it there as
        # ctx.saved_tensors. a.backend.zip(fn) lifts a torchlight.scalar function to tensors.
        save(ctx, a, b)
        return a.backend.zip(op.mul)(a, b)
        # END SOLUTION 2.3

    @staticmethod
    def partial_a(ctx: Context, v: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.4
        a, b = ctx.saved_tensors
        return v * b
        # END SOLUTION 2.4

    @staticmethod
    def partial_b(ctx: Context, v: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.4
        a, b = ctx.saved_tensors
        return v * a
        # END SOLUTION 2.4


class Pow(_Binary):
    """a ** b, elementwise (b is usually a constant, e.g. 2.0)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.3
        out = a.backend.zip(op.pow)(a, b)
        save(ctx, a, b, out)
        return out
        # END SOLUTION 2.3

    @staticmethod
    def partial_a(ctx: Context, v: Tensor) -> Tensor:
        # HINT: a ** 0 is 1 for every a, 0 included, so its derivative is 0 at a = 0 too (PyTorch's
        # HINT: answer), where b * a ** (b - 1) would be 0 * 0 ** -1 = 0 * inf = nan
        # BEGIN SOLUTION 2.4
        a, b, out = ctx.saved_tensors
        # Where a = b = 0 the exponent is raised to 0, so b * a ** 0 = 0 there; comparisons carry
        # no gradient, so every other derivative (the second ones too) is b * a ** (b - 1)'s.
        return v * b * a ** (b - 1.0 + (a == 0.0) * (b == 0.0))
        # END SOLUTION 2.4

    @staticmethod
    def partial_b(ctx: Context, v: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.4
        a, b, out = ctx.saved_tensors
        return v * out * a.log()  # d/db a**b = a**b * log(a)
        # END SOLUTION 2.4


class Inv(_Unary):
    """1 / a"""

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.3
        save(ctx, a)
        return a.backend.map(op.inv)(a)
        # END SOLUTION 2.3

    @staticmethod
    def derivative(ctx: Context, v: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.4
        (a,) = ctx.saved_tensors
        return InvBack.apply(a, v)
        # END SOLUTION 2.4


class InvBack(_Binary):
    """g * d/da (1/a) = -g / a**2: Inv's derivative, a Function itself so that it has a derivative."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, g: Tensor) -> Tensor:
        save(ctx, a, g)
        return a.backend.zip(op.inv_back)(a, g)

    @staticmethod
    def partial_a(ctx: Context, v: Tensor) -> Tensor:
        a, g = ctx.saved_tensors
        return v * g * 2.0 / (a * a * a)

    @staticmethod
    def partial_b(ctx: Context, v: Tensor) -> Tensor:
        a, g = ctx.saved_tensors
        return InvBack.apply(a, v)


# -- functions --------------------------------------------------------------------------------


class Log(_Unary):
    """Natural log (-inf at 0, nan below, as PyTorch)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.3
        save(ctx, a)
        return a.backend.map(op.log)(a)
        # END SOLUTION 2.3

    @staticmethod
    def derivative(ctx: Context, v: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.4
        (a,) = ctx.saved_tensors
        return LogBack.apply(a, v)
        # END SOLUTION 2.4


class LogBack(_Binary):
    """g * d/da log(a) = g / a: Log's derivative, differentiable in turn."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, g: Tensor) -> Tensor:
        save(ctx, a, g)
        return a.backend.zip(op.log_back)(a, g)

    @staticmethod
    def partial_a(ctx: Context, v: Tensor) -> Tensor:
        a, g = ctx.saved_tensors
        return -v * g / (a * a)

    @staticmethod
    def partial_b(ctx: Context, v: Tensor) -> Tensor:
        a, g = ctx.saved_tensors
        return LogBack.apply(a, v)


class Exp(_Unary):
    """e ** a"""

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.3
        out = a.backend.map(op.exp)(a)
        save(ctx, out)  # the derivative of exp is exp: the output is all it needs
        return out
        # END SOLUTION 2.3

    @staticmethod
    def derivative(ctx: Context, v: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.4
        (out,) = ctx.saved_tensors
        return v * out
        # END SOLUTION 2.4


class Sigmoid(_Unary):
    """1 / (1 + e ** -a)"""

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.3
        out = a.backend.map(op.sigmoid)(a)
        save(ctx, out)
        return out
        # END SOLUTION 2.3

    @staticmethod
    def derivative(ctx: Context, v: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.4
        (s,) = ctx.saved_tensors
        return v * s * (1.0 - s)
        # END SOLUTION 2.4


class ReLU(_Unary):
    """max(a, 0)"""

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.3
        save(ctx, a)
        return a.backend.map(op.relu)(a)
        # END SOLUTION 2.3

    @staticmethod
    def derivative(ctx: Context, v: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.4
        (a,) = ctx.saved_tensors
        return ReluBack.apply(a, v)
        # END SOLUTION 2.4


class ReluBack(_Binary):
    """g where a > 0, else 0: ReLU's derivative. Its own derivative in a is 0 (almost everywhere)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, g: Tensor) -> Tensor:
        save(ctx, a)
        return a.backend.zip(op.relu_back)(a, g)

    @staticmethod
    def partial_a(ctx: Context, v: Tensor) -> None:
        return None

    @staticmethod
    def partial_b(ctx: Context, v: Tensor) -> Tensor:
        (a,) = ctx.saved_tensors
        return ReluBack.apply(a, v)


class Sqrt(_Unary):
    """a ** 0.5"""

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.3
        out = a.backend.map(op.sqrt)(a)
        save(ctx, out)
        return out
        # END SOLUTION 2.3

    @staticmethod
    def derivative(ctx: Context, v: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.4
        (out,) = ctx.saved_tensors
        return v / (out * 2.0)
        # END SOLUTION 2.4


class Abs(_Unary):
    """|a|"""

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.3
        save(ctx, a)
        return a.backend.map(op.abs)(a)
        # END SOLUTION 2.3

    @staticmethod
    def derivative(ctx: Context, v: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.4
        (a,) = ctx.saved_tensors
        return v * a.backend.map(op.sign)(a)  # sign(a) is a constant: its own derivative is 0
        # END SOLUTION 2.4


class Sin(_Unary):
    """sin(a)"""

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        save(ctx, a)
        return a.backend.map(op.sin)(a)

    @staticmethod
    def derivative(ctx: Context, v: Tensor) -> Tensor:
        (a,) = ctx.saved_tensors
        return v * Cos.apply(a)


class Cos(_Unary):
    """cos(a)"""

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        save(ctx, a)
        return a.backend.map(op.cos)(a)

    @staticmethod
    def derivative(ctx: Context, v: Tensor) -> Tensor:
        (a,) = ctx.saved_tensors
        return -(v * Sin.apply(a))


class Map(Function):
    """Any scalar function ``fn``, elementwise, given ``fn_back(x, d) = d * fn'(x)`` (first order only).

    ``Map.apply(x, torchlight.scalar.sigmoid, my_sigmoid_back)``. The derivative is computed by a
    backend primitive, not by tensor operations, so it cannot be differentiated again: a double
    backward through Map raises.
    """

    @staticmethod
    def forward(
        ctx: Context, a: Tensor, fn: Callable[[float], float], fn_back: Optional[Callable[[float, float], float]] = None
    ) -> Tensor:
        save(ctx, a)
        ctx.fn_back = fn_back
        return a.backend.map(fn)(a)

    @staticmethod
    def derivative(ctx: Context, v: Tensor) -> Tensor:
        (a,) = ctx.saved_tensors
        if ctx.fn_back is None:
            raise RuntimeError("Map.apply(x, fn) was given no fn_back(x, d), so it has no derivative")
        return a.backend.zip(ctx.fn_back)(a, v)  # fn'(a) * v, computed without a graph

    @staticmethod
    @extension_point  # module 5 makes it once_differentiable (ops/higher_order.py)
    def backward(ctx: Context, g: Tensor) -> Tuple[Tensor, None, None]:
        return Map.derivative(ctx, g), None, None

    @staticmethod
    def jvp(ctx: Context, t: Tensor, t_fn: None = None, t_fn_back: None = None) -> Tensor:
        return Map.derivative(ctx, t)


# -- comparisons: no gradient -----------------------------------------------------------------


class _Compare(Function):
    """Elementwise 1.0 / 0.0; the result does not require grad (as in PyTorch)."""

    fn: Callable[[float, float], float]

    @classmethod
    def forward(cls, ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        out = a.backend.zip(cls.fn)(a, b)
        ctx.mark_non_differentiable(out)
        return out

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[None, None]:
        return None, None

    @staticmethod
    def jvp(ctx: Context, ta: Grad, tb: Grad) -> None:
        return None


class LT(_Compare):
    """``a < b`` elementwise, as 1.0 / 0.0 (``Tensor.__lt__``)."""

    fn = staticmethod(op.lt)


class GT(_Compare):
    """``a > b`` elementwise, as 1.0 / 0.0 (``Tensor.__gt__``)."""

    fn = staticmethod(op.gt)


class EQ(_Compare):
    """``a == b`` elementwise, as 1.0 / 0.0 (``Tensor.__eq__``)."""

    fn = staticmethod(op.eq)


class IsClose(_Compare):
    """``|a - b| < 1e-2`` elementwise, as 1.0 / 0.0 (``Tensor.is_close``)."""

    fn = staticmethod(op.is_close)


# -- composed: no Function of their own ---------------------------------------------------------
# These are not primitives: each is a few of the ops above, and its derivative is theirs, found by
# the engine. ops/fused.py (module 3) has each as one Function for speed; Tensor's operators use
# those, and the tests hold the two equal in values and gradients.


def sub(a: Tensor, b: Tensor) -> Tensor:
    """a - b = a + (-b)

    :param a: a tensor.
    :param b: a tensor.
    """
    return a + (-b)


def div(a: Tensor, b: Tensor) -> Tensor:
    """a / b = a * (1 / b)

    :param a: a tensor.
    :param b: a tensor.
    """
    return a * Inv.apply(b)


def tanh(a: Tensor) -> Tensor:
    """tanh(a) = 2 * sigmoid(2a) - 1

    :param a: a tensor.
    """
    return (a * 2.0).sigmoid() * 2.0 + (-1.0)
