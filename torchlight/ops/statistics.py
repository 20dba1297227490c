"""Module 2 (beyond the stages): reductions composed of sum and max: ``min``, ``argmax``,
``argmin``, ``var``, ``std``, ``norm`` and ``any``.

Each is a few tensor operations, so its gradient (where it has one) is theirs, to any order; only
``std`` and ``norm`` add a Function, for the root's gradient where the spread or the norm is 0. ``min`` is
``-max(-x)``: the gradient of a minimum shared by ties is split evenly among them, as ``max``'s is
(and as PyTorch's).
"""

from __future__ import annotations

from collections import namedtuple
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from ..autograd.function import Context, Function
from ..tensor_data import prod
from .elementwise import save
from .selection import where

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["any", "argmax", "argmin", "min", "norm", "std", "var"]

# What ``min(dim)`` returns, as PyTorch's ``torch.return_types.min``.
MinResult = namedtuple("min", ["values", "indices"])  # type: ignore[name-match]


def min(x: Tensor, dim: Optional[int] = None, keepdim: bool = False) -> Any:
    """The smallest element (0-d), or with ``dim`` a pair (values, indices) along it."""
    if dim is None:
        return -(-x).max()
    values, indices = (-x).max(dim, keepdim)
    return MinResult(-values, indices)


def argmax(x: Tensor, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:
    """The position of the largest element along ``dim`` (the first, at a tie); with ``dim=None``
    its position in the flattened tensor. No gradient."""
    x = x.detach()  # positions have no gradient: no graph to build
    if dim is None:
        position = x.reshape(-1).max(0).indices
        return position.view((1,) * x.dims) if keepdim else position
    return x.max(dim, keepdim).indices


def argmin(x: Tensor, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:
    """The position of the smallest element along ``dim`` (as ``argmax``)."""
    return argmax(-x.detach(), dim, keepdim)


def var(
    x: Tensor, dim: Any = None, unbiased: bool = True, keepdim: bool = False, *, correction: Optional[float] = None
) -> Tensor:
    """The variance over ``dim``: the sum of squared deviations from the mean, divided by
    n - correction (``correction`` 1 by default, Bessel's; ``unbiased=False`` means 0)."""
    if not isinstance(unbiased, (bool, np.bool_)):
        raise TypeError(f"var(): argument 'unbiased' must be bool (True or False), not {type(unbiased).__name__}")
    if correction is None:
        correction = 1 if unbiased else 0
    dims = x._dims(dim)
    n = prod(x.shape[d] for d in dims)
    deviation = x - x.mean(dims, keepdim=True)
    # n - correction <= 0 divides by 0: inf or nan, as PyTorch gives
    return (deviation * deviation).sum(dims, keepdim) / float(n - correction if n > correction else 0)


def std(
    x: Tensor, dim: Any = None, unbiased: bool = True, keepdim: bool = False, *, correction: Optional[float] = None
) -> Tensor:
    """The standard deviation over ``dim``: the square root of ``var``."""
    return _Root.apply(var(x, dim, unbiased, keepdim, correction=correction))


class _Root(Function):
    """The square root of a variance, whose gradient is 0 where it is 0 (constant values), as in
    PyTorch: the plain square root's would be inf there, and inf * 0 = nan."""

    @staticmethod
    def forward(ctx: Context, v: Tensor) -> Tensor:
        out = v.sqrt()
        save(ctx, out)
        return out

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tensor:
        (out,) = ctx.saved_tensors
        return where(out == 0.0, 0.0, g / (2.0 * out))

    @staticmethod
    def jvp(ctx: Context, t: Tensor) -> Tensor:
        (out,) = ctx.saved_tensors
        return where(out == 0.0, 0.0, t / (2.0 * out))


def norm(x: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False) -> Tensor:
    """The p-norm over ``dim`` (all elements by default), as PyTorch's ``Tensor.norm``: ``"fro"``
    and 2 the square root of the sum of squares, 1 the sum of absolute values, ``inf`` (``-inf``)
    the largest (smallest) absolute value, 0 the number of non-zero elements, another number p
    ``sum(|x|**p) ** (1/p)``. As in PyTorch, the gradient at a norm of 0 is 0, and that of
    ``inf`` is shared evenly among the elements tied for the largest."""
    if isinstance(p, str):
        if p != "fro":
            raise NotImplementedError(f"norm(): p={p!r} is not supported by torchlight (only numbers and 'fro')")
        p = 2
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)):
        raise TypeError(f"norm(): argument 'p' must be a number or 'fro', not {type(p).__name__}")
    dims = x._dims(dim)
    a = x.abs()
    if p in (float("inf"), float("-inf")):
        values = a.detach().to_numpy()
        reduce = np.amax if p > 0 else np.amin
        extreme = x._constant(reduce(values, axis=dims, keepdims=True) if values.size else np.zeros(()))
        ties = a.detach() == extreme  # the gradient is shared among them
        return (a * ties).sum(dims, keepdim) / ties.sum(dims, keepdim)
    if p == 0:
        # a count, whose gradient is 0 (it is still in the graph, as PyTorch's is)
        return (x.detach() != 0.0).sum(dims, keepdim) + (x * 0.0).sum(dims, keepdim)
    if p == 1:
        return a.sum(dims, keepdim)
    if p == 2:
        return _Root.apply((x * x).sum(dims, keepdim))
    return _RootP.apply((a**p).sum(dims, keepdim), float(p))


class _RootP(Function):
    """``s ** (1/p)`` of a sum of p-th powers, whose gradient is 0 where s is 0, as PyTorch's norm."""

    @staticmethod
    def forward(ctx: Context, s: Tensor, p: float) -> Tensor:
        out = s ** (1.0 / p)
        save(ctx, s, out)
        ctx.p = p
        return out

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Any:
        s, out = ctx.saved_tensors
        return where(s == 0.0, 0.0, g * out / (ctx.p * s)), None

    @staticmethod
    def jvp(ctx: Context, t: Tensor, t_p: None = None) -> Tensor:
        s, out = ctx.saved_tensors
        return where(s == 0.0, 0.0, t * out / (ctx.p * s))


def any(x: Tensor, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:
    """1 where some element (along ``dim``) is non-zero, else 0. No gradient."""
    nonzero = 1.0 - (x.detach() == 0.0)
    return nonzero.sum(x._dims(dim), keepdim) > 0.0
