"""Module 2 (beyond the stages): joining tensors: ``cat``, ``stack`` and ``repeat``.

``Cat`` is the one Function: its forward writes each input into its own slice of a new tensor,
and its backward hands each input the slice of the gradient that covers it (an ``Index`` view,
differentiable in turn). ``stack`` is ``cat`` of unsqueezed inputs, and ``repeat`` is a view,
an expand and a copy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Sequence, Tuple

from .. import scalar as op
from ..autograd.function import Context, Function
from ..tensor_data import Shape, TensorData, _shape_arg, check_storage, normalize_dim
from .elementwise import Grad

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["Cat", "cat", "repeat", "stack"]


class Cat(Function):
    """The tensors joined along dimension ``dim``: ``Cat.apply(dim, *tensors)``.

    The tensors are separate arguments (not one list), so that the engine tracks each of them.
    Their shapes must agree except along ``dim``: ``cat`` checks that, with PyTorch's messages.
    """

    @staticmethod
    def forward(ctx: Context, dim: int, *tensors: Tensor) -> Tensor:
        keys = _slices(dim, [t.shape[dim] for t in tensors])
        shape = list(tensors[0].shape)
        shape[dim] = sum(t.shape[dim] for t in tensors)
        check_storage(shape)  # (before TensorData.zeros, whose error would be about a size beyond int64)
        out = tensors[0]._new(TensorData.zeros(tuple(shape)))
        for t, key in zip(tensors, keys, strict=True):
            t.backend.map(op.id)(t, out=out._new(out._data.getitem(key)))
        ctx.dim, ctx.keys, ctx.shapes = dim, keys, [t.shape for t in tensors]
        return out

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Grad, ...]:
        needs = ctx.needs_input_grad[1:]
        return (None,) + tuple(g[key] if need else None for key, need in zip(ctx.keys, needs, strict=True))

    @staticmethod
    def jvp(ctx: Context, t_dim: None, *tangents: Grad) -> Grad:
        present = [t for t in tangents if t is not None]
        if not present:
            return None
        zeros = [present[0]._new(TensorData.zeros(s)) for s in ctx.shapes]  # no tangent: zero
        return Cat.apply(ctx.dim, *[z if t is None else t for t, z in zip(tangents, zeros, strict=True)])


def _slices(dim: int, sizes: Sequence[int]) -> List[Tuple[slice, ...]]:
    """For each input, the key that selects its part of the result along ``dim``."""
    keys, start = [], 0
    for n in sizes:
        keys.append((slice(None),) * dim + (slice(start, start + n),))
        start += n
    return keys


def _tensors(tensors: Any, fn: str) -> List[Tensor]:
    """The list of tensors that cat or stack was given, checked: a non-empty sequence of Tensors
    on one backend."""
    if hasattr(tensors, "_data") or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}(): argument 'tensors' must be a list or tuple of Tensors, not {type(tensors).__name__}")
    if not tensors:
        raise ValueError(f"{fn}(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not hasattr(t, "_data"):
            raise TypeError(f"{fn}(): expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
        if t.backend is not tensors[0].backend:
            raise RuntimeError(
                f"{fn}(): expected all tensors on the same backend, but found one on '{tensors[0].backend.name}' "
                f"and one on '{t.backend.name}' (element {i}); move it first with .to('{tensors[0].backend.name}')"
            )
    return list(tensors)


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """The tensors joined along dimension ``dim`` (their shapes agree in every other dimension)."""
    ts = _tensors(tensors, "cat")
    first = ts[0]
    for i, t in enumerate(ts):
        if t.dims == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
        if t.dims != first.dims:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {first.dims} and {t.dims}")
    dim = normalize_dim(dim, first.dims)
    for i, t in enumerate(ts):
        for d in range(first.dims):
            if d != dim and t.shape[d] != first.shape[d]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size {first.shape[d]} but "
                    f"got size {t.shape[d]} for tensor number {i} in the list."
                )
    return Cat.apply(dim, *ts)


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """The tensors (all of one shape) joined along a new dimension ``dim``."""
    ts = _tensors(tensors, "stack")
    for i, t in enumerate(ts):
        if t.shape != ts[0].shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(ts[0].shape)} at entry 0 and "
                f"{list(t.shape)} at entry {i}"
            )
    dim = normalize_dim(dim, ts[0].dims + 1)
    return Cat.apply(dim, *[t.unsqueeze(dim) for t in ts])


def repeat(t: Tensor, *sizes: Any) -> Tensor:
    """t tiled ``sizes[i]`` times along dimension i (as PyTorch's ``repeat``; extra leading sizes
    add dimensions): ``[1, 2].repeat(2)`` is ``[1, 2, 1, 2]``."""
    reps: Shape = _shape_arg(sizes)
    if len(reps) < t.dims:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor "
            f"(repeat dims {list(reps)}, tensor shape {list(t.shape)})"
        )
    for r in reps:
        if r < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {r}: repeat{tuple(reps)}")
    shape = (1,) * (len(reps) - t.dims) + tuple(t.shape)
    check_storage([r * n for r, n in zip(reps, shape, strict=True)])  # (PyTorch's error, naming the result)
    # each dimension n becomes a pair (1, n), expanded to (r, n): the copy holds r blocks of n
    ones_before = [m for n in shape for m in (1, n)]
    expanded = [m for r, n in zip(reps, shape, strict=True) for m in (r, n)]
    return t.reshape(ones_before).expand(expanded).reshape([r * n for r, n in zip(reps, shape, strict=True)])
