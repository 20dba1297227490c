"""Module 1: the primitive Scalar operations, each a forward on floats and its derivative.

Only these have derivatives of their own; ``Scalar`` composes the rest (sub is add and neg,
div is mul and inv, tanh is built from sigmoid, > is < with the arguments swapped).

Each ``forward`` (stage 1.2) gets plain floats and returns a float, computed with module 0's
operator of the same name (``op.mul``, ``op.log``, ...): they give IEEE's and PyTorch's inf and
nan where plain Python raises (``log(0.0)`` is -inf, ``inv(0.0)`` is inf). What ``backward``
(stage 1.3) will need, forward saves with ``ctx.save_for_backward(...)``; backward reads it back
as ``ctx.saved_tensors``, in the same order.

Each ``backward`` (stage 1.3) gets d, the gradient of the output, and returns d times the
derivative in each input: one float for one input, a tuple of two for two. Module 0's ``*_back``
operators give PyTorch's values at the edges (relu's derivative at 0 is 0; log's at 0 is
infinite); a comparison's derivative is 0 wherever it is defined.
"""

import math

from .. import scalar as op
from .function import Function


class Add(Function):
    @staticmethod
    def forward(ctx, a: float, b: float) -> float:
        # BEGIN SOLUTION 1.2
        return op.add(a, b)
        # END SOLUTION 1.2

    @staticmethod
    def backward(ctx, d: float):
        # BEGIN SOLUTION 1.3
        return d, d
        # END SOLUTION 1.3


class Mul(Function):
    @staticmethod
    def forward(ctx, a: float, b: float) -> float:
        # BEGIN SOLUTION 1.2
        ctx.save_for_backward(a, b)
        return op.mul(a, b)
        # END SOLUTION 1.2

    @staticmethod
    def backward(ctx, d: float):
        # BEGIN SOLUTION 1.3
        a, b = ctx.saved_tensors
        return op.mul(d, b), op.mul(d, a)
        # END SOLUTION 1.3


class Neg(Function):
    @staticmethod
    def forward(ctx, a: float) -> float:
        # BEGIN SOLUTION 1.2
        return op.neg(a)
        # END SOLUTION 1.2

    @staticmethod
    def backward(ctx, d: float) -> float:
        # BEGIN SOLUTION 1.3
        return op.neg(d)
        # END SOLUTION 1.3


class Inv(Function):
    @staticmethod
    def forward(ctx, a: float) -> float:
        # BEGIN SOLUTION 1.2
        ctx.save_for_backward(a)
        return op.inv(a)
        # END SOLUTION 1.2

    @staticmethod
    def backward(ctx, d: float) -> float:
        # BEGIN SOLUTION 1.3
        (a,) = ctx.saved_tensors
        return op.inv_back(a, d)
        # END SOLUTION 1.3


def _pow(a: float, b: float) -> float:
    """a ** b as the tensor ops compute it (``scalar.pow``: IEEE and PyTorch's answers), with inf
    for a result past the float range, where plain Python raises OverflowError (10.0 ** 400)."""
    try:
        return op.pow(a, b)
    except OverflowError:  # (only plain Python raises: numba and numpy give inf, as C's pow does)
        odd = a < 0.0 and b % 2.0 == 1.0  # a negative base to an odd power keeps its sign
        return -math.inf if odd else math.inf


class Pow(Function):
    """a ** b. Either may be a plain number; the exponent's derivative needs a > 0.

    forward is ``_pow`` (above): module 0's ``pow``, with a signed inf where the result is past the
    float range (10.0 ** 400), which plain Python refuses with OverflowError. backward's powers
    (b * a ** (b - 1), and a ** b * log(a) for the exponent) are ``_pow``'s too, for the same
    reason; log(a) is nan for a < 0, as PyTorch's.
    """

    @staticmethod
    def forward(ctx, a: float, b: float) -> float:
        # BEGIN SOLUTION 1.2
        out = _pow(a, b)
        ctx.save_for_backward(a, b, out)
        return out
        # END SOLUTION 1.2

    @staticmethod
    def backward(ctx, d: float):
        # BEGIN SOLUTION 1.3
        a, b, out = ctx.saved_tensors
        # d/db a**b = a**b log(a): nan for a < 0, as in PyTorch (and dropped when b is a constant).
        return d * b * _pow(a, b - 1.0), d * out * op.log(a)
        # END SOLUTION 1.3


class Log(Function):
    @staticmethod
    def forward(ctx, a: float) -> float:
        # BEGIN SOLUTION 1.2
        ctx.save_for_backward(a)
        return op.log(a)
        # END SOLUTION 1.2

    @staticmethod
    def backward(ctx, d: float) -> float:
        # BEGIN SOLUTION 1.3
        (a,) = ctx.saved_tensors
        return op.log_back(a, d)
        # END SOLUTION 1.3


class Exp(Function):
    @staticmethod
    def forward(ctx, a: float) -> float:
        # BEGIN SOLUTION 1.2
        out = op.exp(a)
        ctx.save_for_backward(out)
        return out
        # END SOLUTION 1.2

    @staticmethod
    def backward(ctx, d: float) -> float:
        # BEGIN SOLUTION 1.3
        (out,) = ctx.saved_tensors
        return op.mul(d, out)
        # END SOLUTION 1.3


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, a: float) -> float:
        # BEGIN SOLUTION 1.2
        out = op.sigmoid(a)
        ctx.save_for_backward(out)
        return out
        # END SOLUTION 1.2

    @staticmethod
    def backward(ctx, d: float) -> float:
        # BEGIN SOLUTION 1.3
        (s,) = ctx.saved_tensors
        return d * s * (1.0 - s)
        # END SOLUTION 1.3


class ReLU(Function):
    @staticmethod
    def forward(ctx, a: float) -> float:
        # BEGIN SOLUTION 1.2
        ctx.save_for_backward(a)
        return op.relu(a)
        # END SOLUTION 1.2

    @staticmethod
    def backward(ctx, d: float) -> float:
        # BEGIN SOLUTION 1.3
        (a,) = ctx.saved_tensors
        return op.relu_back(a, d)
        # END SOLUTION 1.3


class LT(Function):
    @staticmethod
    def forward(ctx, a: float, b: float) -> float:
        # BEGIN SOLUTION 1.2
        return op.lt(a, b)
        # END SOLUTION 1.2

    @staticmethod
    def backward(ctx, d: float):
        # BEGIN SOLUTION 1.3
        # A step function: zero derivative wherever it is defined.
        return 0.0, 0.0
        # END SOLUTION 1.3


class EQ(Function):
    @staticmethod
    def forward(ctx, a: float, b: float) -> float:
        # BEGIN SOLUTION 1.2
        return op.eq(a, b)
        # END SOLUTION 1.2

    @staticmethod
    def backward(ctx, d: float):
        # BEGIN SOLUTION 1.3
        return 0.0, 0.0
        # END SOLUTION 1.3
