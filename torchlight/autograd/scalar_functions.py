"""Module 1: the primitive Scalar operations, each a forward on floats and its derivative.

Only these have derivatives of their own; ``Scalar`` composes the rest (sub is add and neg,
div is mul and inv, tanh is built from sigmoid, > is < with the arguments swapped).
"""

from .. import scalar as op
from .function import Function


class Add(Function):
    @staticmethod
    def forward(ctx, a: float, b: float) -> float:
        return op.add(a, b)

    @staticmethod
    def backward(ctx, d: float):
        return d, d


class Mul(Function):
    @staticmethod
    def forward(ctx, a: float, b: float) -> float:
        ctx.save_for_backward(a, b)
        return op.mul(a, b)

    @staticmethod
    def backward(ctx, d: float):
        a, b = ctx.saved_tensors
        return op.mul(d, b), op.mul(d, a)


class Neg(Function):
    @staticmethod
    def forward(ctx, a: float) -> float:
        return op.neg(a)

    @staticmethod
    def backward(ctx, d: float) -> float:
        return op.neg(d)


class Inv(Function):
    @staticmethod
    def forward(ctx, a: float) -> float:
        ctx.save_for_backward(a)
        return op.inv(a)

    @staticmethod
    def backward(ctx, d: float) -> float:
        (a,) = ctx.saved_tensors
        return op.inv_back(a, d)


class Pow(Function):
    """a ** c for a constant exponent c (a plain number, not a Scalar)."""

    @staticmethod
    def forward(ctx, a: float, c: float) -> float:
        ctx.save_for_backward(a, c)
        return op.pow(a, c)

    @staticmethod
    def backward(ctx, d: float):
        a, c = ctx.saved_tensors
        return d * c * op.pow(a, c - 1.0), None


class Log(Function):
    @staticmethod
    def forward(ctx, a: float) -> float:
        ctx.save_for_backward(a)
        return op.log(a)

    @staticmethod
    def backward(ctx, d: float) -> float:
        (a,) = ctx.saved_tensors
        return op.log_back(a, d)


class Exp(Function):
    @staticmethod
    def forward(ctx, a: float) -> float:
        out = op.exp(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, d: float) -> float:
        (out,) = ctx.saved_tensors
        return op.mul(d, out)


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, a: float) -> float:
        out = op.sigmoid(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, d: float) -> float:
        (s,) = ctx.saved_tensors
        return d * s * (1.0 - s)


class ReLU(Function):
    @staticmethod
    def forward(ctx, a: float) -> float:
        ctx.save_for_backward(a)
        return op.relu(a)

    @staticmethod
    def backward(ctx, d: float) -> float:
        (a,) = ctx.saved_tensors
        return op.relu_back(a, d)


class LT(Function):
    @staticmethod
    def forward(ctx, a: float, b: float) -> float:
        return op.lt(a, b)

    @staticmethod
    def backward(ctx, d: float):
        # A step function: zero derivative wherever it is defined.
        return 0.0, 0.0


class EQ(Function):
    @staticmethod
    def forward(ctx, a: float, b: float) -> float:
        return op.eq(a, b)

    @staticmethod
    def backward(ctx, d: float):
        return 0.0, 0.0
