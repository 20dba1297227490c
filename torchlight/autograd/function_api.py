"""Module 5: the full Function API, as PyTorch's, built on module 1's core (``function.py``).

The core records one application of a Function with one output. This file extends each of its
three classes:

- ``Context`` gains ``save_for_forward``, ``mark_dirty``, ``mark_non_differentiable`` and
  ``set_materialize_grads``; ``saved_tensors`` refuses values changed in place since they were
  saved, or freed by a backward without ``retain_graph``.
- ``History`` (in ``inplace_tracking.py``) remembers what an input changed in place was before.
- ``Function`` accepts the combined forward style (``forward(*args)`` + ``setup_context``),
  several outputs, in-place operations and forward-mode AD (``jvp``).

``torchlight.autograd.Function`` is the ``Function`` defined here.
"""

import functools
import inspect
from typing import Any, List, Tuple

from . import function as core
from . import inplace_tracking
from .grad_mode import _state
from .inplace_tracking import check_dirty
from .variable import Variable

_FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


class Context(core.Context):
    """Scratchpad passed from a Function's forward to its backward and jvp."""

    materialize_grads = True
    saved_for_forward: Tuple[Any, ...] = ()
    _saved_versions: Tuple[Any, ...] = ()
    _freed = False
    _in_jvp = False
    _fn: Any = None
    _dirty: Tuple[Any, ...] = ()
    _non_differentiable: Tuple[Any, ...] = ()

    def save_for_forward(self, *values: Any) -> None:
        """Keep values for ``jvp`` (forward-mode AD); inside jvp, ``saved_tensors`` returns them."""
        self.saved_for_forward = values

    @property
    def saved_tensors(self) -> Tuple[Any, ...]:
        """The values given to ``save_for_backward``, checked against in-place changes since.

        Inside ``jvp`` it is the values given to ``save_for_forward`` instead (as PyTorch).
        """
        if self._in_jvp:
            return self.saved_for_forward
        if self._freed:
            raise RuntimeError(_FREED_MESSAGE)
        inplace_tracking.check_saved(self)
        return self._saved

    def mark_dirty(self, *tensors: Any) -> None:
        """Declare inputs that forward modified in place (and returns as outputs)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *outputs: Any) -> None:
        """Declare outputs that have no gradient (indices, masks); they are returned as constants."""
        self._non_differentiable = outputs

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward receives None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = bool(value)

    def _snapshot_versions(self) -> None:
        inplace_tracking.snapshot_saved(self)

    def _free(self) -> None:
        self._saved = ()
        self._saved_versions = ()
        self._freed = True


class History(inplace_tracking.History):
    """A graph node for a Function with any number of outputs, that checks what backward returns."""

    __slots__ = ("num_outputs", "output_meta")

    def __init__(self, last_fn: Any = None, ctx: Any = None, inputs=()):
        # Every field set here, without calling up the chain: apply makes one History per operation.
        self.last_fn = last_fn
        self.ctx = ctx
        self.inputs = tuple(inputs)
        self.stamp = next(inplace_tracking._stamps)
        self.previous = None
        self.num_outputs = 1
        # (kind, meta) per output, when there are several: what building a zero gradient takes
        self.output_meta: Tuple[Any, ...] = ()

    def backward_results(self, grads: List[Any]) -> Tuple[Any, ...]:
        """Run backward with one gradient per output (zeros for outputs that got none, unless
        the Function said ``set_materialize_grads(False)``); one gradient per input, checked."""
        if self.output_meta and self.ctx.materialize_grads and None in grads:
            # HINT: self.output_meta holds, per output, (its class, its _grad_meta()) or None for an
            # HINT: output that is not a Variable; cls._zero_grad(meta) builds a zero gradient.
            # BEGIN SOLUTION 5.1: give every output that got no gradient a zero one (materialize_grads)
            grads = [
                meta[0]._zero_grad(meta[1]) if g is None and meta is not None else g
                for g, meta in zip(grads, self.output_meta, strict=True)
            ]
            # END SOLUTION 5.1
        result = self.last_fn.backward(self.ctx, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self.inputs)
        if len(result) != n:
            # PyTorch lets backward return extra trailing Nones; anything else is a mistake.
            if len(result) < n or any(g is not None for g in result[n:]):
                raise RuntimeError(
                    f"function {self.last_fn.name} returned an incorrect number of gradients "
                    f"(expected {n}, got {len(result)})"
                )
            result = result[:n]
        for i, x in enumerate(self.inputs):
            if result[i] is not None and not isinstance(x, Variable):
                raise RuntimeError(
                    f"function {self.last_fn.name} returned a gradient different than None at position "
                    f"{i}, but the corresponding forward input was not a Variable (it was "
                    f"{type(x).__name__}); return None for it"
                )
        return result


class FunctionMeta(core.FunctionMeta):
    """Also tells, once per class, which forward style it uses and whether it has a jvp."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._combined = not getattr(cls.setup_context, "_default", False)
        cls._has_jvp = not getattr(cls.jvp, "_default", False)


def _default(fn):
    fn._default = True
    return fn


class Function(core.Function, metaclass=FunctionMeta):
    """An operation with a derivative. Subclass it, write ``forward`` and ``backward``, call ``apply``.

    Two styles of forward are accepted: ``forward(ctx, *args)``, or ``forward(*args)`` with a
    ``setup_context(ctx, inputs, output)``. Write ``jvp`` too for forward-mode AD.
    """

    # True for a Function whose output shares its first input's storage (a view, e.g. Permute).
    returns_view = False
    # PyTorch's switch for an automatic vmap rule; torchlight has no vmap.
    generate_vmap_rule = False

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        """Compute the result from raw values."""
        raise NotImplementedError("a Function subclass must define forward")

    @staticmethod
    @_default
    def setup_context(ctx: Context, inputs: Tuple[Any, ...], output: Any) -> None:
        """Fill ctx from the inputs and output of a ``forward`` written without ctx."""
        raise NotImplementedError

    @staticmethod
    @_default
    def jvp(ctx: Context, *grad_inputs: Any) -> Any:
        """Forward-mode AD: map input tangents (None where absent) to output tangents."""
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
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run forward on the inputs' raw values, link the outputs into the graph and, in
        forward-mode AD, give them tangents.

        The steps of module 1's ``apply`` (``function.py``) in one pass, since every operation
        pays for it, with what module 5 adds: the combined forward style, several outputs, inputs
        changed in place, non-differentiable outputs, and tangents.
        """
        try:
            kind, needs, raw = core._unpack(args)
        except core.HeldVariable:  # an nn.Parameter among the inputs: apply to the Variable it holds
            return cls.apply(*core.unheld(args), **kwargs)
        ctx = Context()
        ctx.needs_input_grad = needs
        ctx._fn = cls
        # Neither recording nor forward-mode AD inside forward. The list is this thread's grad
        # mode (grad_mode._state), written in place here rather than through _set_mode: two
        # calls fewer on every operation.
        mode = _state.mode
        enabled, level = mode
        mode[0], mode[1] = False, None
        try:
            if cls._combined:
                out = cls.forward(*raw, **kwargs)
                cls.setup_context(ctx, _bind_inputs(cls, tuple(raw), kwargs), out)
            else:
                out = cls.forward(ctx, *raw, **kwargs)
        finally:
            mode[0], mode[1] = enabled, level
        if kind is None:  # no Variable among the inputs: plain values in, plain values out
            return out

        multiple = isinstance(out, tuple)
        dirty = ctx._dirty
        if dirty:  # (a Tensor's raw value is the tensor itself)
            check_dirty(cls, ctx, raw, out if multiple else (out,))
        outputs = []
        for o in out if multiple else (out,):
            w = kind._wrap_output(o)
            if w is not None and core._is_one_of(w, args) and not (dirty and core._is_one_of(w, dirty)):
                w = w._alias()  # forward returned an input unchanged: the output is a new node
            outputs.append(o if w is None else w)

        if enabled and True in needs:
            cls._record(ctx, args, outputs)
        if level is not None:
            forward_ad.run_jvp(cls, ctx, args, outputs, level)
        return tuple(outputs) if multiple else outputs[0]

    @classmethod
    def _record(cls, ctx: Any, args: Tuple[Any, ...], outputs: List[Any]) -> None:
        """One History for all outputs but the non-differentiable ones; see ``inplace_tracking``
        for what changes when forward changed an input in place."""
        history: History = History.of_inplace(cls, ctx, args, outputs) if ctx._dirty else History(cls, ctx, args)
        n = history.num_outputs = len(outputs)
        if n > 1:  # what building a zero gradient for each output takes (materialize_grads)
            history.output_meta = tuple(
                [(type(w), w._grad_meta()) if isinstance(w, Variable) else None for w in outputs]
            )
        nondiff = ctx._non_differentiable
        for i, w in enumerate(outputs):
            if isinstance(w, Variable) and not (nondiff and core._is_one_of(w, nondiff)):
                w._set_history(history, i)
        if ctx._saved:
            inplace_tracking.snapshot_saved(ctx)


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
    """Kept for code that subclasses it; an in-place Function calls ``ctx.mark_dirty`` in forward."""

    def __init__(self, inplace: bool = False):
        self.inplace = inplace


class NestedIOFunction(Function):
    """Kept only for import compatibility; define forward and backward on Function instead."""


# At the end: forward_ad defines Functions of its own (on the Function above).
from . import forward_ad  # noqa: E402
