"""Module 5: the full Function API, as PyTorch's, added to module 1's ``Function`` (``function.py``).

Module 1's ``apply`` is the one that runs; this file registers what PyTorch's API adds at its
extension points:

- ``Context`` gains ``save_for_forward``, ``mark_dirty``, ``mark_non_differentiable`` and
  ``set_materialize_grads``; ``saved_tensors`` refuses values changed in place since they were
  saved (``inplace_tracking.py``), or freed by a backward without ``retain_graph``.
- ``Function`` accepts the combined forward style (``forward(*args)`` + ``setup_context``) and
  declares ``jvp`` (forward-mode AD, ``forward_ad.py``) and ``vmap``.
- ``History`` gives outputs that got no gradient zeros (``set_materialize_grads``).
"""

import functools
import inspect
from typing import TYPE_CHECKING, Any, List, Tuple

from ..extension import extends
from . import inplace_tracking
from .function import Context, Function, History

__all__ = ["Context", "Function", "History", "InplaceFunction", "NestedIOFunction"]

_FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


@extends(Context)
class _ContextAPI:
    materialize_grads = True
    saved_for_forward: Tuple[Any, ...] = ()
    _saved_versions: Tuple[Any, ...] = ()
    _freed = False
    _in_jvp = False

    def save_for_forward(self, *values: Any) -> None:
        """Keep values for ``jvp`` (forward-mode AD); inside jvp, ``saved_tensors`` returns them.

        :param values: what jvp will need.
        """
        self.saved_for_forward = values

    def mark_dirty(self, *tensors: Any) -> None:
        """Declare inputs that forward modified in place (and returns as outputs).

        :param tensors: the inputs changed in place.
        """
        self._dirty = tensors

    def mark_non_differentiable(self, *outputs: Any) -> None:
        """Declare outputs that have no gradient (indices, masks); they are returned as constants.

        :param outputs: the outputs without a gradient.
        """
        self._non_differentiable = outputs

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward receives None (not zeros) for outputs that got no gradient.

        :param value: False: None in place of zero gradients.
        """
        self.materialize_grads = bool(value)

    def _read_saved(self) -> Tuple[Any, ...]:
        # Inside jvp: what save_for_forward kept (as PyTorch). Otherwise the saved values, unless a
        # backward freed them or one was changed in place since it was saved.
        if self._in_jvp:
            return self.saved_for_forward
        if self._freed:
            raise RuntimeError(_FREED_MESSAGE)
        inplace_tracking.check_saved(self)
        return self._saved

    def _free(self) -> None:
        """Drop the saved values (a backward without ``retain_graph`` is done with them)."""
        self._saved = ()
        self._saved_versions = ()
        self._freed = True


# (For the type checker only, an extension is a subclass of what it extends; at run time it is a
# plain holder of members, which ``extends`` copies onto the class.)
_HistoryMembers: Any = History if TYPE_CHECKING else object
_FunctionMembers: Any = Function if TYPE_CHECKING else object


@extends(History)
class _MaterializedGrads(_HistoryMembers):
    def _missing_grads(self, grads: List[Any]) -> List[Any]:
        """The outputs' gradients, one per output, with a zero of the output's shape for each
        Variable output that got None (unless ``ctx.set_materialize_grads(False)``); an output that
        is not a Variable keeps None."""
        if not self.ctx.materialize_grads:
            return grads
        # HINT: self.output_meta holds, per output, (its class, its _grad_meta()) or None for an
        # HINT: output that is not a Variable; cls._zero_grad(meta) builds a zero gradient.
        # BEGIN SOLUTION 5.1: give every output that got no gradient a zero one (materialize_grads)
        return [
            meta[0]._zero_grad(meta[1]) if g is None and meta is not None else g
            for g, meta in zip(grads, self.output_meta, strict=True)
        ]
        # END SOLUTION 5.1


def _default(fn):
    fn._default = True
    return fn


@extends(Function)
class _FunctionAPI(_FunctionMembers):
    # PyTorch's switch for an automatic vmap rule; torchlight has no vmap.
    generate_vmap_rule = False

    @staticmethod
    @_default
    def setup_context(ctx: Context, inputs: Tuple[Any, ...], output: Any) -> None:
        """Fill ctx from the inputs and output of a ``forward`` written without ctx.

        :param ctx: the Context of this call.
        :param inputs: the inputs forward was called with, in its parameters' order.
        :param output: what forward returned.
        """
        raise NotImplementedError

    @staticmethod
    @_default
    def jvp(ctx: Context, *grad_inputs: Any) -> Any:
        """Forward-mode AD: map input tangents (None where absent) to output tangents.

        :param ctx: the Context of this call (``save_for_forward`` filled it).
        :param grad_inputs: the tangent of each input (None where it has none).
        """
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."
        )

    @staticmethod
    def vmap(info: Any, in_dims: Any, *args: Any) -> Any:
        """Vectorized forward: not supported by torchlight."""
        raise NotImplementedError(
            "torchlight does not implement vmap; batch the computation by hand (add a leading dimension) instead"
        )

    @classmethod
    def _run_forward(cls, ctx: Context, raw: List[Any], kwargs: dict) -> Any:
        # Two styles: forward(ctx, *args), or forward(*args) with setup_context (told apart by
        # whether the class overrides setup_context, as PyTorch does).
        if getattr(cls.setup_context, "_default", False):
            return cls.forward(ctx, *raw, **kwargs)
        out = cls.forward(*raw, **kwargs)
        cls.setup_context(ctx, _bind_inputs(cls, tuple(raw), kwargs), out)
        return out


def _bind_inputs(cls: Any, args: Tuple[Any, ...], kwargs: dict) -> Tuple[Any, ...]:
    """The inputs tuple for setup_context: positional and keyword arguments, defaults filled."""
    if not kwargs and _positional_arity(cls) == len(args):
        return args  # (the common case, for speed: every argument given by position)
    # HINT: inspect.signature(cls.forward).bind(*args, **kwargs) matches arguments to parameters;
    # HINT: .apply_defaults() fills the ones left out. *args and **kwargs parameters are spread.
    # BEGIN SOLUTION 5.1: every parameter's value in forward's order, defaults filled in
    bound = inspect.signature(cls.forward).bind(*args, **kwargs)
    bound.apply_defaults()
    inputs: List[Any] = []
    for param, value in zip(bound.signature.parameters.values(), bound.arguments.values(), strict=True):
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            inputs.extend(value)
        elif param.kind is inspect.Parameter.VAR_KEYWORD:
            inputs.extend(value.values())
        else:
            inputs.append(value)
    return tuple(inputs)
    # END SOLUTION 5.1


@functools.lru_cache(maxsize=None)
def _positional_arity(cls: Any) -> int:
    params = inspect.signature(cls.forward).parameters.values()
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return -1
    return len(params)


class InplaceFunction(Function):
    """Kept for code that subclasses it; an in-place Function calls ``ctx.mark_dirty`` in forward.

    :param inplace: PyTorch's flag, kept as ``self.inplace``.
    """

    def __init__(self, inplace: bool = False):
        self.inplace = inplace


class NestedIOFunction(Function):
    """Kept only for import compatibility; define forward and backward on Function instead."""
