"""Module 1: the primitive Scalar operations, each a forward on floats and its derivative.

Only these have derivatives of their own; ``Scalar`` composes the rest (sub is add and neg,
div is mul and inv, tanh is built from sigmoid, > is < with the arguments swapped).
"""

import math

from .. import scalar as op
from .function_api import Function  # the full API of module 5; module 1 uses forward and backward


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


def _pow(a: float, b: float) -> float:
    """a ** b with PyTorch's answers where Python's differ: inf for 0 to a negative power,
    nan for a negative base to a non-integer power (Python raises, or returns a complex)."""
    if a == 0.0 and b < 0.0:
        return math.inf
    if a < 0.0 and math.isfinite(b) and not b.is_integer():
        return math.nan
    return op.pow(a, b)


class Pow(Function):
    """a ** b. Either may be a plain number; the exponent's derivative needs a > 0."""

    @staticmethod
    def forward(ctx, a: float, b: float) -> float:
        out = _pow(a, b)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, d: float):
        a, b, out = ctx.saved_tensors
        # Only work out the derivatives asked for: d/db needs log(a), real for a > 0 only.
        da = d * b * _pow(a, b - 1.0) if ctx.needs_input_grad[0] else None
        db = d * out * op.log(a) if ctx.needs_input_grad[1] else None
        return da, db


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
