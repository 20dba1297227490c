"""Module 5: in-place tensor operations: ``add_``, ``sub_``, ``mul_``, ``div_``, ``fill_``, ``zero_``
and ``t[key] = value`` (``SetItem``; ``SetItemAt`` for a key of lists, tensors or masks).

An in-place operation writes its result into its first input's storage instead of a new one.
Each is a Function that marks that input dirty (``ctx.mark_dirty``) and returns it. ``apply``
then bumps the tensor's version counter (shared by all views of the storage), so that a
backward which reads a saved tensor changed since raises instead of using the wrong values; and,
when recording, gives the tensor this operation's History (its old node stays reachable for the
operations that used it before: see ``History.previous``).

Gradients follow the usual rules; the one thing to watch is that forward overwrites its input,
so a backward that needs the old value must keep a copy (``MulInplace``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Tuple, Type

import numpy as np

from .. import scalar as op
from ..autograd.function_api import Context, InplaceFunction
from ..autograd.grad_mode import _dual_level, is_grad_enabled
from ..autograd.inplace_tracking import check_inplace
from ..autograd.variable import Variable
from ..tensor_data import TensorData, broadcasts_to, shape_broadcast
from .advanced_index import Put, Take
from .elementwise import Grad, _plus, save
from .movement import IndexBack

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["AddInplace", "MulInplace", "DivInplace", "Fill", "SetItem", "SetItemAt", "inplace", "mul_"]


def inplace(fn: Type[InplaceFunction], target: Tensor, *others: Any, **kwargs: Any) -> Tensor:
    """Check that ``target`` may be changed in place now, then return ``fn.apply(target, *others)``.

    The checks run before anything is written, so a refused operation leaves ``target`` intact.
    """
    record = is_grad_enabled() and any(isinstance(x, Variable) and x.history is not None for x in (target,) + others)
    check_inplace(fn, target, record)
    data = target._data
    if any(stride == 0 and size > 1 for stride, size in zip(data.strides, data.shape, strict=True)):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a single "
            f"memory location (it is an expanded view of shape {data.shape}). Please clone() the tensor "
            "before performing the operation."
        )
    if record and target.history is None and data.size < len(data.storage):
        # A view of part of a constant tensor would join the graph, but the tensor it views would not.
        raise RuntimeError(
            f"an in-place operation ({fn.name}) with an input that requires grad, on a view of part of "
            "another tensor: torchlight would not know that the viewed tensor changed. Write into that "
            "tensor instead (base[key] = values), or clone() the view first."
        )
    return fn.apply(target, *others, **kwargs)


def mul_(a: Tensor, b: Tensor) -> Tensor:
    """a *= b. b's gradient (and tangent) is a's value from before: a copy of it is made first,
    in the graph, so that a double backward reaches a through it."""
    before = a.clone() if b.history is not None or _dual_level() is not None else None
    return inplace(MulInplace, a, b, before)


def _fits(a: Tensor, b: Tensor) -> None:
    """Raise unless b broadcasts to a's shape (the result of an in-place op keeps a's shape)."""
    if not broadcasts_to(b.shape, a.shape):
        shape = shape_broadcast(a.shape, b.shape)  # (raises for shapes that do not broadcast at all)
        raise RuntimeError(f"output with shape {list(a.shape)} doesn't match the broadcast shape {list(shape)}")


def _apart(a: Tensor, b: Tensor) -> Tensor:
    """b, or a copy of it if it shares a's storage (the kernel would read values it already wrote)."""
    if b._data.storage is a._data.storage:
        return b._new(b._data.contiguous())
    return b


class AddInplace(InplaceFunction):
    """a += alpha * b, where b broadcasts to a's shape (``sub_`` is alpha = -1)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor, alpha: float = 1.0) -> Tensor:
        _fits(a, b)
        ctx.alpha = alpha
        b = _apart(a, b)
        if alpha != 1.0:
            b = a.backend.zip(op.mul)(b, a._constant(alpha))
        a.backend.zip(op.add)(a, b, out=a)
        ctx.mark_dirty(a)
        return a

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Tensor, Grad]:
        gb = (g if ctx.alpha == 1.0 else g * ctx.alpha) if ctx.needs_input_grad[1] else None
        return g, gb  # the engine sums gb down to b's shape

    @staticmethod
    def jvp(ctx: Context, ta: Grad, tb: Grad) -> Grad:
        return _plus(ta, None if tb is None else (tb if ctx.alpha == 1.0 else tb * ctx.alpha))


class MulInplace(InplaceFunction):
    """a *= b, where b broadcasts to a's shape; ``before`` is a copy of a (see ``mul_``)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor, before: Optional[Tensor] = None) -> Tensor:
        _fits(a, b)
        b = _apart(a, b)
        # HINT: b's gradient needs a's values from before the write: keep a copy (before, or
        # HINT: a._new(a._data.contiguous()) when none was given), saved as (before, b), the order
        # HINT: jvp below reads them in; a.backend.zip(op.mul)(a, b, out=a) writes into a. Then tell
        # HINT: the engine which input changed.
        # BEGIN SOLUTION 5.2
        if before is None:  # a constant copy: right for first derivatives, not differentiable in a
            before = a._new(a._data.contiguous())
        save(ctx, before, b)
        a.backend.zip(op.mul)(a, b, out=a)
        ctx.mark_dirty(a)
        return a
        # END SOLUTION 5.2

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Grad, Grad, None]:
        # BEGIN SOLUTION 5.2
        before, b = ctx.saved_tensors
        ga = g * b if ctx.needs_input_grad[0] else None
        return ga, (g * before if ctx.needs_input_grad[1] else None), None
        # END SOLUTION 5.2

    @staticmethod
    def jvp(ctx: Context, ta: Grad, tb: Grad, t_before: Grad = None) -> Grad:
        before, b = ctx.saved_tensors
        return _plus(None if ta is None else ta * b, None if tb is None else before * tb)


class DivInplace(InplaceFunction):
    """a /= b, where b broadcasts to a's shape."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        _fits(a, b)
        b = _apart(a, b)
        a.backend.zip(op.div)(a, b, out=a)
        # a is saved after the change: it is the result a / b, which both formulas use.
        save(ctx, a, b)
        ctx.mark_dirty(a)
        return a

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Grad, Grad]:
        # HINT: forward saved a after the change, that is the result out = a / b.
        # BEGIN SOLUTION 5.2
        out, b = ctx.saved_tensors
        ga = g / b if ctx.needs_input_grad[0] else None
        gb = -g * out / b if ctx.needs_input_grad[1] else None
        return ga, gb
        # END SOLUTION 5.2

    @staticmethod
    def jvp(ctx: Context, ta: Grad, tb: Grad) -> Grad:
        out, b = ctx.saved_tensors
        return _plus(ta, None if tb is None else -out * tb) / b


class Fill(InplaceFunction):
    """Every element of a set to ``value``, a 0-d tensor (``fill_``, and ``zero_`` with 0)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, value: Tensor) -> Tensor:
        if value.dims != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with {value.dims} dimensions"
            )
        a.backend.map(op.id)(value, out=a)
        ctx.mark_dirty(a)
        return a

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[None, Tensor]:
        return None, g  # the old values of a are gone: no gradient; value's is g summed (by the engine)

    @staticmethod
    def jvp(ctx: Context, ta: Grad, tv: Grad) -> Grad:
        return tv  # None (no tangent) when the value is a constant; the engine expands tv


class SetItem(InplaceFunction):
    """``a[key] = value``: value, broadcast to the selected window of a, is written into it."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, key: Any, value: Tensor) -> Tensor:
        window = a._new(a._data.getitem(key))
        if not broadcasts_to(value.shape, window.shape):
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast to "
                f"indexing result of shape {list(window.shape)}"
            )
        a.backend.map(op.id)(_apart(a, value), out=window)
        ctx.key, ctx.shape, ctx.window = key, a.shape, window.shape
        ctx.mark_dirty(a)
        return a

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Grad, None, Grad]:
        key = ctx.key
        # a keeps its old values outside the window (gradient g there) and loses them inside (0).
        ga = g - IndexBack.apply(g[key], ctx.shape, key) if ctx.needs_input_grad[0] else None
        gv = g[key] if ctx.needs_input_grad[2] else None  # summed down to value's shape by the engine
        return ga, None, gv

    @staticmethod
    def jvp(ctx: Context, ta: Grad, t_key: None, tv: Grad) -> Grad:
        key = ctx.key
        outside = None if ta is None else ta - IndexBack.apply(ta[key], ctx.shape, key)
        inside = None if tv is None else IndexBack.apply(tv.expand(ctx.window), ctx.shape, key)
        return _plus(outside, inside)


class SetItemAt(InplaceFunction):
    """``a[key] = value`` for a key of lists, ranges, tensors or masks (``ops/advanced_index.py``):
    value, broadcast to the picked elements' shape, written at their row-major ``positions``.

    The elements are not a strided window, so forward writes the whole of a: its values with the
    picked ones replaced. Where a position is picked twice, the last value written stays (numpy's
    rule; PyTorch leaves the order unspecified), and only that value gets the gradient there
    (PyTorch gives it to every value written there)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, positions: np.ndarray, value: Tensor) -> Tensor:
        if not broadcasts_to(value.shape, positions.shape):
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast to "
                f"indexing result of shape {list(positions.shape)}"
            )
        values = a.contiguous().to_numpy().reshape(-1)
        values[positions] = np.broadcast_to(value.to_numpy(), positions.shape)
        a.backend.map(op.id)(a._new(TensorData(values, a.shape)), out=a)
        kept = np.ones(len(values))
        kept[positions] = 0.0
        ctx.positions, ctx.kept = positions, a._new(TensorData(kept, a.shape))
        ctx.written = _last_writes(a, positions)
        ctx.mark_dirty(a)
        return a

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Grad, None, Grad]:
        # a keeps its old values outside the picked elements (gradient g there) and loses them inside.
        ga = g * ctx.kept if ctx.needs_input_grad[0] else None
        gv = None
        if ctx.needs_input_grad[2]:
            gv = Take.apply(g, ctx.positions)  # summed down to value's shape by the engine
            gv = gv if ctx.written is None else gv * ctx.written
        return ga, None, gv

    @staticmethod
    def jvp(ctx: Context, ta: Grad, t_positions: None, tv: Grad) -> Grad:
        outside = None if ta is None else ta * ctx.kept
        inside = None
        if tv is not None:
            tv = tv.expand(ctx.positions.shape)
            inside = Put.apply(tv if ctx.written is None else tv * ctx.written, ctx.kept.shape, ctx.positions)
        return _plus(outside, inside)


def _last_writes(a: Tensor, positions: np.ndarray) -> Optional[Tensor]:
    """None where every position is picked once; else 1.0 at the last pick of each position (the
    value that stays) and 0.0 at the earlier ones, in positions' shape."""
    flat = positions.reshape(-1)
    _, first_from_end = np.unique(flat[::-1], return_index=True)
    if len(first_from_end) == len(flat):
        return None
    written = np.zeros(len(flat))
    written[len(flat) - 1 - first_from_end] = 1.0
    return a._new(TensorData(written, positions.shape))
