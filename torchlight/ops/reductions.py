"""Module 2: reductions, Functions over the backend's ``reduce`` primitive: sum and max.

A reduction folds dimensions away; its backward spreads the gradient back over them (for sum,
every element gets it; for max, only the maximum's position).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Optional, Tuple

import numpy as np

from .. import scalar as op
from ..autograd.function import Context, Function
from ..tensor_data import Shape, normalize_dim

if TYPE_CHECKING:
    from ..backends import TensorBackend
    from ..tensor import Tensor

__all__ = ["Max", "MaxDim", "Sum"]


def _reduce_all(backend: TensorBackend, a: Tensor, fn: Callable[[float, float], float], start: float) -> Tensor:
    """Reduce every dimension of a with fn: a 0-d tensor."""
    data = a._data
    if data.is_contiguous():  # one pass over the flat storage
        flat = a._new(data.view(data.size))
        return a._new(backend.reduce(fn, start)(flat, 0)._data.view(()))
    for d in range(data.dims):
        a = backend.reduce(fn, start)(a, d)
    return a._new(a._data.view(()))


def _reduced_shape(shape: Shape, dims: Tuple[int, ...], keepdim: bool) -> Shape:
    if keepdim:
        return tuple(1 if d in dims else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in dims)


def _is_max(a: Tensor, maximum: Tensor) -> Tensor:
    """1.0 where a equals its maximum (broadcast), else 0.0. Where the maximum is nan (max
    propagates nan, as PyTorch), the nans of a are its positions: nan == nan is false, so a != a
    marks them (0.0 everywhere in a row without nan)."""
    equal = a == maximum
    if not np.isnan(maximum.to_numpy()).any():  # the usual case, without the two extra operations
        return equal
    return equal + (a != a)


def arange_along(like: Tensor, dim: int) -> Tensor:
    """A constant tensor 0, 1, ..., n-1 laid along dimension ``dim`` of ``like`` (size 1 elsewhere)."""
    shape = [1] * like.dims
    shape[dim] = like.shape[dim]
    return like._constant(np.arange(like.shape[dim], dtype=np.float64).reshape(shape))


class Sum(Function):
    """The sum over ``dims`` (a tuple of dimensions), dropping them unless ``keepdim``."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, dims: Tuple[int, ...], keepdim: bool = False) -> Tensor:
        ctx.shape, ctx.dims, ctx.keepdim = a.shape, dims, keepdim
        backend = a.backend
        if len(dims) == a.dims and a.dims > 0:
            out = _reduce_all(backend, a, op.add, 0.0)
        else:
            # BEGIN SOLUTION 2.3: reduce each of dims in turn (each keeps size 1)
            out = a
            for d in dims:
                out = backend.reduce(op.add, 0.0)(out, d)
            if out is a:
                return a
            # END SOLUTION 2.3
        return a._new(out._data.view(_reduced_shape(a.shape, dims, keepdim)))

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Tensor, None, None]:
        # BEGIN SOLUTION 2.4
        # HINT: every element of a gets the gradient of the sum it went into: put the summed
        # dimensions back (size 1, unless keepdim kept them) and expand to a's shape.
        if not ctx.keepdim:
            for d in ctx.dims:
                g = g.unsqueeze(d)
        return g.expand(ctx.shape), None, None
        # END SOLUTION 2.4

    @staticmethod
    def jvp(ctx: Context, t: Tensor, t_dims: None = None, t_keepdim: None = None) -> Tensor:
        return Sum.apply(t, ctx.dims, ctx.keepdim)  # the sum is linear: the tangent sums the same way


class Max(Function):
    """The maximum over all elements: a 0-d tensor.

    The gradient goes to the maximum's position, shared evenly among ties (as in PyTorch).
    """

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        if a.numel() == 0:  # max has no identity: -inf would be an answer made up
            raise RuntimeError(
                "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                f"reduction dim with the 'dim' argument (input shape {a.shape})."
            )
        out = _reduce_all(a.backend, a, op.max, -math.inf)
        ctx.mask = _is_max(a, out)  # 1.0 at every maximum
        return out

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tensor:
        # BEGIN SOLUTION 2.4
        return g * ctx.mask / ctx.mask.sum()
        # END SOLUTION 2.4

    @staticmethod
    def jvp(ctx: Context, t: Tensor) -> Tensor:
        return (t * ctx.mask).sum() / ctx.mask.sum()


class MaxDim(Function):
    """The maximum along ``dim``: (values, indices), as PyTorch's ``max(dim)``.

    Indices are the first position of the maximum and have no gradient; the gradient goes to
    that position.
    """

    @staticmethod
    def forward(ctx: Context, a: Tensor, dim: int, keepdim: bool = False) -> Tuple[Tensor, Tensor]:
        ctx.set_materialize_grads(False)  # a gradient for the values only: the indices get None
        dim = normalize_dim(dim, a.dims)
        if a.shape[dim] == 0:  # no element to be the maximum (PyTorch's error)
            raise IndexError(f"max(): Expected reduction dim {dim} to have non-zero size (input shape {a.shape}).")
        reduce_max = a.backend.reduce(op.max, -math.inf)
        values = reduce_max(a, dim)
        # The first index where a equals the maximum: the smallest of (position where equal, else
        # position + n), found as -max(-candidates).
        positions = arange_along(a, dim)
        candidates = positions + (1.0 - _is_max(a, values)) * float(a.shape[dim])
        indices = -reduce_max(-candidates, dim)
        ctx.one_hot = positions == indices
        ctx.dim, ctx.keepdim = dim, keepdim
        if not keepdim:
            values = a._new(values._data.squeeze(dim))
            indices = a._new(indices._data.squeeze(dim))
        ctx.mark_non_differentiable(indices)
        return values, indices

    @staticmethod
    def backward(ctx: Context, g: Optional[Tensor], g_indices: None = None) -> Tuple[Optional[Tensor], None, None]:
        if g is None:
            return None, None, None
        # BEGIN SOLUTION 2.4
        if not ctx.keepdim:
            g = g.unsqueeze(ctx.dim)
        return g * ctx.one_hot, None, None
        # END SOLUTION 2.4

    @staticmethod
    def jvp(ctx: Context, t: Tensor, t_dim: None = None, t_keepdim: None = None) -> Tuple[Tensor, None]:
        return (t * ctx.one_hot).sum(ctx.dim, ctx.keepdim), None
