"""Module 5: in-place operations in the graph: version counters and what a value was before.

An in-place operation (``ctx.mark_dirty``) changes an input and returns it. Two things can then
go wrong, and this file guards against both:

- A Function that saved the value for backward would differentiate the new value. Each saved
  value's version is noted when it is saved (``snapshot_saved``), and ``saved_tensors`` raises
  if it has changed since (``check_saved``), with PyTorch's message.
- Operations that used the value before the change must still differentiate the value they saw.
  The changed value gets the operation's History, and ``History.previous`` keeps the node it was
  before; ``History.input_nodes`` walks back to it (every History has a creation ``stamp``, so an
  input whose History is newer than its consumer's was changed after the consumer used it).
"""

from typing import TYPE_CHECKING, Any, List, Optional, Tuple

from ..extension import extends
from .function import Function, History, _is_one_of
from .grad_mode import is_grad_enabled
from .variable import Variable


@extends(Function)
class _InplaceFunction:
    @classmethod
    def _check_dirty(cls, ctx: Any, raw: List[Any], outputs: Tuple[Any, ...]) -> None:
        check_dirty(cls, ctx, raw, outputs)

    @classmethod
    def _inplace_history(cls, ctx: Any, args: Tuple[Any, ...], outputs: List[Any]) -> History:
        return of_inplace(cls, ctx, args, outputs)

    @classmethod
    def _saved_recorded(cls, ctx: Any) -> None:
        snapshot_saved(ctx)


def of_inplace(fn: Any, ctx: Any, args: Tuple[Any, ...], outputs: List[Any]) -> History:
    """The History of an in-place application: each changed input is recorded as an alias of
    what it was until now (its old History, or none for a constant), and ``previous``
    remembers that alias for the operations that used the input before."""
    # HINT: each changed input d is about to get this new History, so the History must not list d
    # HINT: itself among its inputs (the graph would loop): it needs a stand-in for d as it was, one
    # HINT: that shares d's data (d._alias()) and keeps d's old node, if any (see _set_history).
    # HINT: Later users of the old d find that stand-in in previous, under each output index of d.
    # BEGIN SOLUTION 5.2
    inputs = list(args)
    previous: dict[int, Variable] = {}
    for d in ctx._dirty:
        old = d._alias()
        if d.history is not None:
            old._set_history(d.history, d._output_nr)
        inputs = [old if a is d else a for a in inputs]
        previous.update({i: old for i, w in enumerate(outputs) if w is d})
    history = History(fn, ctx, inputs)
    history.previous = previous
    return history
    # END SOLUTION 5.2


# (For the type checker only, an extension is a subclass of what it extends; at run time it is a
# plain holder of members, which ``extends`` copies onto the class.)
_HistoryMembers: Any = History if TYPE_CHECKING else object


@extends(History)
class _InplaceHistory(_HistoryMembers):
    def _recorded_node(self, x: Variable) -> Optional[Variable]:
        """The node ``x`` stood for when this History was made: ``x`` itself, unless its History is
        newer than this one: then it was changed in place since (or was a constant then), and the
        node is what it was before."""
        h = x.history
        if h.stamp > self.stamp:
            return _as_before(self, x)
        if h.last_fn is not None and h.last_fn.returns_view:
            _check_view(self, x)
        return x


def _as_before(self: History, x: Variable) -> Optional[Variable]:
    # Walk back through the in-place changes of x made after History ``self``.
    # HINT: each change's History has a ``previous`` dict: output index -> the node from before.
    # HINT: stop at the first History no newer than ``self``; None if x had no node then.
    # BEGIN SOLUTION 5.2
    node: Optional[Variable] = x
    h = x.history
    while node is not None and h is not None and h.stamp > self.stamp:
        node = h.previous.get(node._output_nr) if h.previous else None
        h = node.history if node is not None else None
    return node if h is not None else None
    # END SOLUTION 5.2


def _check_view(self: History, view: Variable) -> None:
    # A view shares its base's storage: if the base was changed in place between the view's
    # making and this use, History ``self`` saw the new values, but the view's History leads to
    # the base as it was. (Users of the view from before the change are right as they are.)
    h = view.history
    while h.last_fn is not None and h.last_fn.returns_view:
        base = h.inputs[0]
        if not isinstance(base, Variable) or base.history is None:
            return
        if h.stamp < base.history.stamp < self.stamp:
            raise RuntimeError(
                f"{self.last_fn.name} used a view made by {h.last_fn.name} after the tensor it "
                f"views was modified in place (by {base.history.last_fn.name}). torchlight does "
                "not update a view's history when its base changes: take the view again after the "
                "change, or clone() the tensor before changing it."
            )
        h = base.history


def snapshot_saved(ctx: Any) -> None:
    """Note the version of each value saved for backward."""
    ctx._saved_versions = tuple([v._version if isinstance(v, Variable) else None for v in ctx._saved])


def check_saved(ctx: Any) -> None:
    """Raise if a value saved for backward was changed in place since it was saved."""
    if not ctx._saved_versions:  # never recorded in a graph (a Context made by hand): nothing to check
        return
    for value, expected in zip(ctx._saved, ctx._saved_versions, strict=True):
        if expected is not None and value._version != expected:
            # HINT: PyTorch's message, which users search for, filled in: "one of the variables needed
            # for gradient computation has been modified by an inplace operation: [<value._describe()>],
            # which was saved by <ctx._fn.name>, is at version <now>; expected version <saved> instead."
            # A hint on what to do may follow.
            # BEGIN SOLUTION 5.2: raise PyTorch's error for a saved value changed in place
            name = ctx._fn.name if ctx._fn is not None else "a Function"
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{value._describe()}], which was saved by {name}, is at "
                f"version {value._version}; expected version {expected} instead. Hint: clone() "
                "the tensor before changing it in place, or change it after calling backward."
            )
            # END SOLUTION 5.2


def check_inplace(fn: Any, target: Variable, record: bool) -> None:
    """Raise if ``fn`` may not change ``target`` in place while recording (``record``) a graph."""
    h = target.history
    if not record or h is None:
        return
    # HINT: two cases are refused with a RuntimeError: a leaf (its .grad would describe a value it
    # no longer has): PyTorch's "a leaf Variable that requires grad is being used in an in-place
    # operation" (then which: fn.name); and a view (h.last_fn.returns_view: the change would not
    # reach the tensor it views): "an in-place operation (<fn.name>) on a view made by
    # <h.last_fn.name> ...", with what to do instead.
    # BEGIN SOLUTION 5.2: refuse an in-place change of a leaf, or of a view, that requires grad
    if h.last_fn is None:
        raise RuntimeError(
            f"a leaf Variable that requires grad is being used in an in-place operation ({fn.name}); "
            "do it inside torchlight.no_grad() (as optimizers do), or on a clone()"
        )
    if h.last_fn.returns_view:
        raise RuntimeError(
            f"an in-place operation ({fn.name}) on a view made by {h.last_fn.name} of a tensor that "
            "requires grad: torchlight does not carry the change back to the viewed tensor. Write "
            "into that tensor instead (base[key] = new_values), or clone() the view first."
        )
    # END SOLUTION 5.2


def check_dirty(fn: Any, ctx: Any, args: Any, outputs: Tuple[Any, ...]) -> None:
    """Check what ``ctx.mark_dirty`` was given, then bump each changed input's version."""
    record = is_grad_enabled() and True in ctx.needs_input_grad
    for d in ctx._dirty:
        if not _is_one_of(d, args):
            raise RuntimeError(
                f"{fn.name}: ctx.mark_dirty() was given a value that is not an input of forward; "
                "mark only the inputs that forward changed in place"
            )
        if not _is_one_of(d, outputs):
            raise RuntimeError(
                "Some elements marked as dirty during the forward method were not returned as output. "
                f"The inputs that are modified inplace must all be outputs of the Function ({fn.name})."
            )
        check_inplace(fn, d, record)
    for d in ctx._dirty:
        d._bump_version()
