"""Module 2 (beyond the stages): elementwise choices between values: ``where``, ``maximum``,
``minimum``, ``clamp``, ``masked_fill``.

Two Functions, ``Where`` and ``Maximum``; the rest are composed of them. Their gradients follow
PyTorch's conventions where the choice is a tie: ``maximum(a, b)`` with ``a == b`` gives each
input half the gradient, and ``clamp(x, lo, hi)`` passes the gradient to x at x == lo and x == hi.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, Optional, Tuple

from .. import scalar as op
from ..autograd.function import Context, Function
from ..tensor_data import broadcasts_to
from .elementwise import Grad, _Binary

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["Maximum", "Where", "clamp", "masked_fill", "maximum", "minimum", "where"]


class Where(Function):
    """a where ``cond`` is true (non-zero), else b; shapes broadcast together. ``cond`` gets no gradient."""

    @staticmethod
    def forward(ctx: Context, cond: Tensor, a: Tensor, b: Tensor) -> Tensor:
        # relu_back(m, x) is x where m > 0 and exactly 0.0 elsewhere, whatever x is (inf and nan
        # included), so each element below is one side's value plus an exact 0.0 from the other.
        take_b = cond == 0.0  # 1.0 where cond is false (nan counts as true, as bool(nan) does)
        take_a = 1.0 - take_b
        pick = a.backend.zip(op.relu_back)
        ctx.cond = take_a
        return pick(take_a, a) + pick(take_b, b)

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[None, Grad, Grad]:
        zero = g._constant(0.0)
        needs = ctx.needs_input_grad
        ga = Where.apply(ctx.cond, g, zero) if needs[1] else None
        gb = Where.apply(ctx.cond, zero, g) if needs[2] else None
        return None, ga, gb  # the engine sums each down to its input's shape

    @staticmethod
    def jvp(ctx: Context, t_cond: Grad, ta: Grad, tb: Grad) -> Grad:
        if ta is None and tb is None:
            return None
        zero = (ta if ta is not None else tb)._constant(0.0)  # type: ignore[union-attr]
        return Where.apply(ctx.cond, zero if ta is None else ta, zero if tb is None else tb)


class Maximum(_Binary):
    """The larger of a and b, elementwise (nan if either is nan).

    The gradient goes to the larger input; at a tie each gets half of it (as PyTorch). Where a
    value is nan both get all of it (as PyTorch).
    """

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        ties = (a == b) * 0.5
        ctx.share_a = 1.0 - (a < b) - ties  # constants: the share is 0, 1/2 or 1 almost everywhere
        ctx.share_b = 1.0 - (a > b) - ties
        return a.backend.zip(op.max)(a, b)

    @staticmethod
    def partial_a(ctx: Context, v: Tensor) -> Tensor:
        return v * ctx.share_a

    @staticmethod
    def partial_b(ctx: Context, v: Tensor) -> Tensor:
        return v * ctx.share_b


# -- composed ---------------------------------------------------------------------------------


def _lift(like: Tensor, x: Any, what: str) -> Tensor:
    """x as a tensor on like's backend: a Tensor stays itself, a number becomes a constant."""
    if hasattr(x, "_data"):
        return x
    if isinstance(x, numbers.Real):
        return like._constant(float(x))
    raise TypeError(f"{what} must be a Tensor or a number, got {type(x).__name__}: {x!r}")


def where(cond: Tensor, a: Any, b: Any) -> Tensor:
    """a where ``cond`` is true, else b (a and b: tensors or numbers; all three broadcast)."""
    if not hasattr(cond, "_data"):
        raise TypeError(f"where(): condition must be a Tensor, got {type(cond).__name__}")
    return Where.apply(cond, _lift(cond, a, "where(): input"), _lift(cond, b, "where(): other"))


def maximum(a: Tensor, b: Tensor) -> Tensor:
    """The larger of a and b, elementwise."""
    return Maximum.apply(a, _lift(a, b, "maximum(): other"))


def minimum(a: Tensor, b: Tensor) -> Tensor:
    """The smaller of a and b, elementwise: -maximum(-a, -b), gradients and ties included."""
    return -Maximum.apply(-a, -_lift(a, b, "minimum(): other"))


def clamp(x: Tensor, min: Optional[Any] = None, max: Optional[Any] = None) -> Tensor:
    """x with every element below ``min`` raised to it and every one above ``max`` lowered to it
    (bounds: numbers or tensors that broadcast). The gradient reaches x where min <= x <= max,
    and a tensor bound where it was taken (as PyTorch)."""
    if min is None and max is None:
        raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")
    for name, bound in (("min", min), ("max", max)):
        if bound is not None:
            _lift(x, bound, f"clamp(): {name}")  # (a clear error for a bound that is neither)
    if min is not None:
        x = where(_or_nan_bound(x < min, min), min, x)  # x < min is false for nan: nan stays nan
    if max is not None:
        x = where(_or_nan_bound(x > max, max), max, x)
    return x


def _or_nan_bound(cond: Tensor, bound: Any) -> Tensor:
    """cond, and true wherever the bound is nan: a nan bound makes clamp's result nan, as in PyTorch."""
    if isinstance(bound, numbers.Number):
        return cond if bound == bound else cond >= 0.0
    return (cond + (bound != bound)) > 0.0


def masked_fill(x: Tensor, mask: Tensor, value: Any) -> Tensor:
    """x with ``value`` (a number or a 0-d tensor) wherever ``mask`` (broadcasting to x) is true."""
    if not hasattr(mask, "_data"):
        raise TypeError(f"masked_fill(): mask must be a Tensor, got {type(mask).__name__}")
    if hasattr(value, "_data") and value.dims != 0:
        raise RuntimeError(
            f"masked_fill only supports a 0-dimensional value tensor, but got tensor with {value.dims} dimension(s)"
        )
    if not broadcasts_to(mask.shape, x.shape):
        raise RuntimeError(
            f"masked_fill(): the mask's shape {list(mask.shape)} must broadcast to the tensor's {list(x.shape)}"
        )
    return Where.apply(mask, _lift(x, value, "masked_fill(): value"), x)
