"""Module 2: movement operations: views that share storage (view, permute, expand, squeeze,
indexing), and copies (contiguous, to another backend, gather).

A view's forward changes only shape, strides and offset (``TensorData``); its backward moves the
gradient back the opposite way (permute by the inverse order, unsqueeze what was squeezed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Tuple

import numpy as np

from .. import dtypes
from .. import scalar as op
from ..autograd.function import Context, Function
from ..tensor_data import IndexingError, Shape, TensorData, normalize_dim
from .elementwise import _Unary
from .reductions import arange_along

if TYPE_CHECKING:
    from ..backends import TensorBackend
    from ..tensor import Tensor

__all__ = ["BroadcastView", "Copy", "Gather", "Index", "IndexBack", "Permute", "Squeeze", "To", "Unsqueeze", "View"]


class View(Function):
    """The same elements with a new shape (the input must be contiguous)."""

    returns_view = True

    @staticmethod
    def forward(ctx: Context, a: Tensor, shape: Shape) -> Tensor:
        ctx.shape, ctx.new_shape = a.shape, shape
        return a._new(a._data.view(shape))

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Tensor, None]:
        # BEGIN SOLUTION 2.4
        return g.contiguous().view(ctx.shape), None
        # END SOLUTION 2.4

    @staticmethod
    def jvp(ctx: Context, t: Tensor, t_shape: None = None) -> Tensor:
        return View.apply(t.contiguous(), ctx.new_shape)


class Permute(Function):
    """The dimensions reordered: dimension i of the result is ``order[i]`` of a."""

    returns_view = True

    @staticmethod
    def forward(ctx: Context, a: Tensor, order: Tuple[int, ...]) -> Tensor:
        data = a._data.permute(*order)
        ctx.order = tuple(normalize_dim(d, a.dims) for d in order)
        return a._new(data)

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Tensor, None]:
        # BEGIN SOLUTION 2.4
        # HINT: permute g back by the inverse order: dimension i of g goes back to order[i].
        inverse = [0] * len(ctx.order)
        for i, d in enumerate(ctx.order):
            inverse[d] = i
        return g.permute(*inverse), None
        # END SOLUTION 2.4

    @staticmethod
    def jvp(ctx: Context, t: Tensor, t_order: None = None) -> Tensor:
        return t.permute(*ctx.order)


class BroadcastView(Function):
    """a broadcast to ``shape`` without copying (stride 0 along repeated dimensions)."""

    returns_view = True

    @staticmethod
    def forward(ctx: Context, a: Tensor, shape: Shape) -> Tensor:
        return a._new(a._data.expand(shape))

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Tensor, None]:
        return g, None  # the engine sums g down to a's shape

    @staticmethod
    def jvp(ctx: Context, t: Tensor, t_shape: None = None) -> Tensor:
        return t  # the engine expands t to the output's shape


class Unsqueeze(Function):
    """A new dimension of size 1 at ``dim``."""

    returns_view = True

    @staticmethod
    def forward(ctx: Context, a: Tensor, dim: int) -> Tensor:
        ctx.dim = normalize_dim(dim, a.dims + 1)
        return a._new(a._data.unsqueeze(dim))

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Tensor, None]:
        return Squeeze.apply(g, ctx.dim), None

    @staticmethod
    def jvp(ctx: Context, t: Tensor, t_dim: None = None) -> Tensor:
        return Unsqueeze.apply(t, ctx.dim)


class Squeeze(Function):
    """Dimension ``dim`` (of size 1) removed."""

    returns_view = True

    @staticmethod
    def forward(ctx: Context, a: Tensor, dim: int) -> Tensor:
        ctx.dim = normalize_dim(dim, a.dims)
        return a._new(a._data.squeeze(dim))

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Tensor, None]:
        return Unsqueeze.apply(g, ctx.dim), None

    @staticmethod
    def jvp(ctx: Context, t: Tensor, t_dim: None = None) -> Tensor:
        return Squeeze.apply(t, ctx.dim)


class Index(Function):
    """``a[key]`` for integers, slices, ``None`` and ``...``: a view of a."""

    returns_view = True

    @staticmethod
    def forward(ctx: Context, a: Tensor, key: Any) -> Tensor:
        ctx.shape = a.shape
        ctx.key = key
        return a._new(a._data.getitem(key))

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Tensor, None]:
        return IndexBack.apply(g, ctx.shape, ctx.key), None

    @staticmethod
    def jvp(ctx: Context, t: Tensor, t_key: None = None) -> Tensor:
        return Index.apply(t, ctx.key)


class IndexBack(Function):
    """Zeros of ``shape`` with g written into ``[key]``: Index's backward, differentiable in turn."""

    @staticmethod
    def forward(ctx: Context, g: Tensor, shape: Shape, key: Any) -> Tensor:
        ctx.shape, ctx.key = shape, key
        out = g._new(TensorData.zeros(shape))
        window = g._new(out._data.getitem(key))
        g.backend.map(op.id)(g, out=window)
        return out

    @staticmethod
    def backward(ctx: Context, gg: Tensor) -> Tuple[Tensor, None, None]:
        return Index.apply(gg, ctx.key), None, None

    @staticmethod
    def jvp(ctx: Context, t: Tensor, t_shape: None = None, t_key: None = None) -> Tensor:
        return IndexBack.apply(t, ctx.shape, ctx.key)


class Copy(_Unary):
    """A contiguous copy in new storage (``clone``, ``contiguous``)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        return a.backend.map(op.id)(a)

    @staticmethod
    def derivative(ctx: Context, v: Tensor) -> Tensor:
        return v


class To(Function):
    """The same values on another backend; the gradient goes back to the original one."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, backend: TensorBackend) -> Tensor:
        ctx.source, ctx.target = a.backend, backend
        return a._new(a._data.contiguous(), backend)

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Tensor, None]:
        return g.to(ctx.source), None

    @staticmethod
    def jvp(ctx: Context, t: Tensor, t_backend: None = None) -> Tensor:
        return t.to(ctx.target)


class Gather(Function):
    """``out[i][j][k] = a[i][index[i][j][k]][k]`` for dim 1 (likewise for other dims), as PyTorch.

    Built from primitives: a one-hot encoding of ``index`` along a new last dimension, multiplied
    with a and summed. Its backward scatters the gradient back through the same one-hot. A 0-d
    input or index counts as 1-D with one element, as in PyTorch.
    """

    @staticmethod
    def forward(ctx: Context, a: Tensor, dim: int, index: Tensor) -> Tensor:
        dim = normalize_dim(dim, a.dims)
        ctx.a_shape, ctx.index = a.shape, index
        if not hasattr(index, "_data"):
            raise TypeError(f"gather(): index must be a Tensor of indices, got {type(index).__name__}")
        out_shape = index.shape
        a, index = _at_least_1d(a), _at_least_1d(index)
        _check_gather(a, dim, index)
        n = a.dims
        # a restricted to index's size in every other dimension, its dim moved last: [..., 1, C]
        key = tuple(slice(0, index.shape[d]) if d != dim else slice(None) for d in range(n))
        order = [d for d in range(n) if d != dim] + [dim]
        moved = a[key].permute(*order).unsqueeze(dim)
        one_hot = index.unsqueeze(-1) == arange_along(a, dim).view(a.shape[dim])  # index.shape + (C,)
        ctx.one_hot, ctx.dim, ctx.key, ctx.shape = one_hot, dim, key, a.shape
        out = (moved * one_hot).sum(-1)
        return out if out.shape == out_shape else out.view(out_shape)

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Tensor, None, None]:
        dim, n = ctx.dim, len(ctx.shape)
        if g.dims == 0:  # a 0-d index: g as the 1-element index forward used
            g = g.view(1)
        spread = (g.unsqueeze(-1) * ctx.one_hot).sum(dim)  # index's other dims..., C
        back = list(range(n - 1))
        back.insert(dim, n - 1)
        grad = spread.permute(*back)
        if grad.shape != ctx.shape:  # index was smaller than a in some other dimension
            grad = IndexBack.apply(grad, ctx.shape, ctx.key)
        if grad.shape != ctx.a_shape:  # a was 0-d
            grad = grad.view(ctx.a_shape)
        return grad, None, None

    @staticmethod
    def jvp(ctx: Context, t: Tensor, t_dim: None = None, t_index: None = None) -> Tensor:
        return Gather.apply(t, ctx.dim, ctx.index)


def _at_least_1d(t: Tensor) -> Tensor:
    """t, or a 0-d t as a 1-D view of its one element."""
    return t if t.dims else t._new(t._data.view(1))


def _check_gather(a: Tensor, dim: int, index: Tensor) -> None:
    """A clear error for an index that does not fit a along dim: its backend, dtype, dims, sizes, values."""
    if getattr(index, "_dtype", None) is dtypes.bool_:  # (a mask is not positions: PyTorch refuses it too)
        raise RuntimeError("gather(): Expected dtype int64 for index, got a bool tensor: convert it with .long()")
    if index.backend is not a.backend:
        raise RuntimeError(
            f"gather(): expected the index on the input's '{a.backend.name}' backend, but it is on the "
            f"'{index.backend.name}' backend; move it first with index.to('{a.backend.name}')"
        )
    if index.dims != a.dims:
        raise RuntimeError(
            f"Index tensor must have the same number of dimensions as input tensor (index shape "
            f"{index.shape}, input shape {a.shape})"
        )
    for d in range(a.dims):
        if d != dim and index.shape[d] > a.shape[d]:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {list(index.shape)} to be smaller "
                f"than self {list(a.shape)} apart from dimension {dim}"
            )
    # torchlight holds float64 only, so an index is checked for values that are positions: whole
    # numbers in [0, size). (inf and nan are not whole numbers: inf == round(inf), but not finite.)
    values = index.to_numpy()
    not_whole = ~np.isfinite(values) | (values != np.round(values))
    if not_whole.any():
        at = tuple(int(i) for i in np.argwhere(not_whole)[0])
        raise RuntimeError(
            f"gather(): index must hold whole numbers (positions along dimension {dim}), got "
            f"{values[at]} at index position {list(at)}"
        )
    size = a.shape[dim]
    outside = (values < 0) | (values >= size)
    if outside.any():
        at = tuple(int(i) for i in np.argwhere(outside)[0])
        raise IndexingError(
            f"index {int(values[at])} is out of bounds for dimension {dim} with size {size} (gather(): "
            f"at index position {list(at)})"
        )
