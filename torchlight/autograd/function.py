"""Function, Context and History: one application of an operation and its record.

A Function's ``forward`` computes on raw values (floats for Scalars; for Tensors the
tensors themselves, with recording switched off); ``apply`` wraps the results and, when any
input needs a gradient, links them into the graph with a ``History``. ``backward`` maps the
gradients of the outputs to gradients of the inputs, written in differentiable operations so
that a graph can be built through it (double backward).
"""

import functools
import inspect
from typing import Any, Optional, Tuple

from .grad_mode import _Mode, no_grad
from .variable import Variable

_FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


class Context:
    """Scratchpad passed from a Function's forward to its backward (and jvp)."""

    def __init__(self, no_grad: bool = False, saved_values: Tuple[Any, ...] = ()):
        self.no_grad = no_grad
        self._saved = tuple(saved_values)
        self._saved_versions: Tuple[Optional[int], ...] = ()
        self._freed = False
        self._fn: Optional[type] = None
        self.needs_input_grad: Tuple[bool, ...] = ()
        self.materialize_grads = True
        self.saved_for_forward: Tuple[Any, ...] = ()
        self._dirty: Tuple[Any, ...] = ()
        self._non_differentiable: Tuple[Any, ...] = ()

    def save_for_backward(self, *values: Any) -> None:
        """Keep values (tensors, floats or None) for backward; read them back with ``saved_tensors``."""
        if self.no_grad:
            return
        self._saved = values

    def save_for_forward(self, *values: Any) -> None:
        """Keep values for ``jvp`` (forward-mode AD); read them back with ``saved_for_forward``."""
        self.saved_for_forward = values

    @property
    def saved_tensors(self) -> Tuple[Any, ...]:
        """The values given to ``save_for_backward``, checked against in-place changes since."""
        if self._freed:
            raise RuntimeError(_FREED_MESSAGE)
        for value, expected in zip(self._saved, self._saved_versions):
            if expected is not None and value._version != expected:
                name = self._fn.name if self._fn is not None else "a Function"
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an "
                    f"inplace operation: [{value._describe()}], which was saved by {name}, is at "
                    f"version {value._version}; expected version {expected} instead. Hint: clone() "
                    "the tensor before changing it in place, or change it after calling backward."
                )
        return self._saved

    # MiniTorch's spelling, kept so that its exercises run unchanged.
    saved_values = saved_tensors

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
        self._saved_versions = tuple(v._version if isinstance(v, Variable) else None for v in self._saved)

    def _free(self) -> None:
        self._saved = ()
        self._saved_versions = ()
        self._freed = True


class History:
    """One node of the graph: the Function that made a value, its Context and its inputs.

    A leaf has ``last_fn=None``. All outputs of one Function application share one History;
    ``output_meta`` keeps what is needed to build a zero gradient for each of them.
    """

    __slots__ = ("last_fn", "ctx", "inputs", "num_outputs", "output_meta")

    def __init__(self, last_fn: Optional[type] = None, ctx: Optional[Context] = None, inputs=()):
        self.last_fn = last_fn
        self.ctx = ctx
        self.inputs = tuple(inputs)
        self.num_outputs = 1
        self.output_meta: Tuple[Any, ...] = ()

    def chain_rule(self, grads):
        """Run backward with one gradient per output; return (input, gradient) pairs for inputs in the graph."""
        fn, ctx = self.last_fn, self.ctx
        if ctx.materialize_grads and any(g is None for g in grads):
            grads = [
                meta[0]._zero_grad(meta[1]) if g is None and meta is not None else g
                for g, meta in zip(grads, self.output_meta)
            ]
        result = fn.backward(ctx, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self.inputs)
        if len(result) != n:
            # PyTorch lets backward return extra trailing Nones; anything else is a mistake.
            if len(result) < n or any(g is not None for g in result[n:]):
                raise RuntimeError(
                    f"function {fn.name} returned an incorrect number of gradients "
                    f"(expected {n}, got {len(result)})"
                )
        pairs = []
        for i, (inp, g) in enumerate(zip(self.inputs, result)):
            if not isinstance(inp, Variable):
                if g is not None:
                    raise RuntimeError(
                        f"function {fn.name} returned a gradient different than None at position "
                        f"{i}, but the corresponding forward input was not a Variable "
                        f"(it was {type(inp).__name__}); return None for it"
                    )
                continue
            if g is None or inp.history is None:
                continue
            pairs.append((inp, inp._match_grad(g, fn.name, i)))
        return pairs


class FunctionMeta(type):
    """Gives every Function class ``name`` ("<Cls>Backward") and a friendly repr."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        # apply tells the two forward styles apart once, here, not on every call.
        cls._combined = not getattr(cls.setup_context, "_default", False)

    @property
    def name(cls) -> str:
        return f"{cls.__name__}Backward"

    def __repr__(cls) -> str:
        return f"<torchlight Function {cls.__name__}>"


def _default(fn):
    fn._default = True
    return fn


class Function(metaclass=FunctionMeta):
    """An operation with a derivative. Subclass it, write ``forward`` and ``backward``, call ``apply``.

    Two styles of forward are accepted: ``forward(ctx, *args)``, or ``forward(*args)`` with a
    ``setup_context(ctx, inputs, output)``.
    """

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
    def backward(ctx: Context, *grad_outputs: Any) -> Any:
        """Return one gradient per forward input (None where there is none)."""
        raise NotImplementedError("a Function subclass must define backward to be differentiated")

    @staticmethod
    def jvp(ctx: Context, *grad_inputs: Any) -> Any:
        """Forward-mode AD: map input tangents (None where absent) to output tangents."""
        raise NotImplementedError

    @staticmethod
    def vmap(info: Any, in_dims: Any, *args: Any) -> Any:
        """Vectorized forward: not supported by torchlight."""
        raise NotImplementedError(
            "torchlight does not implement vmap; batch the computation by hand (add a leading "
            "dimension) instead"
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run forward on ``args`` and link the outputs into the graph."""
        needs = tuple(isinstance(a, Variable) and a.history is not None for a in args)
        record = _Mode.enabled and True in needs
        ctx = Context()
        ctx._fn = cls
        ctx.needs_input_grad = needs
        raw = tuple(a._forward_value() if isinstance(a, Variable) else a for a in args)

        prev, _Mode.enabled = _Mode.enabled, False
        try:
            if cls._combined:
                out = cls.forward(*raw, **kwargs)
                cls.setup_context(ctx, _bind_inputs(cls, raw, kwargs), out)
            else:
                out = cls.forward(ctx, *raw, **kwargs)
        finally:
            _Mode.enabled = prev

        kind = next((type(a) for a in args if isinstance(a, Variable)), None)
        if kind is None:
            return out
        outs = out if isinstance(out, tuple) else (out,)
        wrapped = []
        for o in outs:
            w = kind._wrap_output(o)
            if w is not None and any(w is a for a in args) and not any(w is d for d in ctx._dirty):
                # forward returned an input unchanged: the output must be a new node, not the input.
                w = w._alias()
            wrapped.append(o if w is None else w)

        for d in ctx._dirty:
            if d.history is not None and d.history.last_fn is None and _Mode.enabled:
                raise RuntimeError(
                    f"a leaf Variable that requires grad is being used in an in-place operation "
                    f"({cls.name}); do it inside torchlight.no_grad(), or on a clone()"
                )
            d._bump_version()

        if record:
            history = History(cls, ctx, args)
            history.num_outputs = len(wrapped)
            history.output_meta = tuple(
                (type(w), w._grad_meta()) if isinstance(w, Variable) else None for w in wrapped
            )
            for i, w in enumerate(wrapped):
                if isinstance(w, Variable) and not any(w is n for n in ctx._non_differentiable):
                    w._set_history(history, i)
            ctx._snapshot_versions()

        return tuple(wrapped) if isinstance(out, tuple) else wrapped[0]


def _bind_inputs(cls: type, args: Tuple[Any, ...], kwargs: dict) -> Tuple[Any, ...]:
    """The inputs tuple for setup_context: positional and keyword arguments, defaults filled."""
    if not kwargs and _positional_arity(cls) == len(args):
        return args
    bound = inspect.signature(cls.forward).bind(*args, **kwargs)
    bound.apply_defaults()
    inputs = []
    for param, value in zip(bound.signature.parameters.values(), bound.arguments.values()):
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            inputs.extend(value)
        elif param.kind is inspect.Parameter.VAR_KEYWORD:
            inputs.extend(value.values())
        else:
            inputs.append(value)
    return tuple(inputs)


@functools.lru_cache(maxsize=None)
def _positional_arity(cls: type) -> int:
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


def once_differentiable(backward):
    """Mark a backward as not differentiable itself: a later double backward through it raises."""

    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with no_grad():
            result = backward(ctx, *grads)
        if not _Mode.enabled:
            return result
        # create_graph=True: the gradients must carry a node whose own backward refuses to run.
        flat = result if isinstance(result, tuple) else (result,)
        sources = tuple(g for g in grads if isinstance(g, Variable) and g.history is not None)
        if not sources:
            return result
        marked = tuple(_OnceDifferentiableBackward.apply(g, *sources) if isinstance(g, Variable) else g for g in flat)
        return marked if isinstance(result, tuple) else marked[0]

    return wrapper


class _OnceDifferentiableBackward(Function):
    """Carries a once_differentiable gradient into the graph so that differentiating it raises."""

    @staticmethod
    def forward(ctx, grad, *sources):
        return grad._alias()

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(
            "trying to differentiate twice a function that was marked with @once_differentiable"
        )
