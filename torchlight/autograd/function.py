"""Module 1: Function, Context and History: one application of an operation and its record.

A Function's ``forward`` computes on raw values (floats for Scalars; for Tensors the tensors
themselves, with recording switched off). ``apply`` runs it and, when an input needs a gradient,
gives the outputs a ``History``: the Function, its Context and its inputs. ``backward`` maps the
gradient of the output to gradients of the inputs (``History.chain_rule``).

This is the core that module 1 builds. Module 5 extends it, in ``function_api.py``, with the rest
of PyTorch's Function API (``setup_context``, several outputs, ``mark_dirty``, forward-mode AD);
``torchlight.autograd.Function`` is that extended class, and its ``apply`` does the steps of the
one here in a single pass (every operation pays for apply).
"""

from typing import TYPE_CHECKING, Any, List, Optional, Tuple

from .grad_mode import _set_mode, is_grad_enabled
from .variable import Variable


class Context:
    """Scratchpad passed from a Function's forward to its backward."""

    # Defaults live on the class: apply makes one Context per operation.
    no_grad = False
    needs_input_grad: Tuple[bool, ...] = ()
    _saved: Tuple[Any, ...] = ()

    if TYPE_CHECKING:  # a Function keeps its own values on ctx (ctx.shape = ...), as in PyTorch

        def __getattr__(self, name: str) -> Any: ...
        def __setattr__(self, name: str, value: Any) -> None: ...

    def __init__(self, no_grad: bool = False, saved_values: Tuple[Any, ...] = ()):
        if no_grad:
            self.no_grad = True
        if saved_values:
            self._saved = tuple(saved_values)

    def save_for_backward(self, *values: Any) -> None:
        """Keep values (tensors, floats or None) for backward; read them back with ``saved_tensors``."""
        if not self.no_grad:
            self._saved = values

    @property
    def saved_tensors(self) -> Tuple[Any, ...]:
        """The values given to ``save_for_backward``."""
        return self._saved

    # MiniTorch's spelling, kept so that its exercises run unchanged.
    @property
    def saved_values(self) -> Tuple[Any, ...]:
        """The same as ``saved_tensors``."""
        return self.saved_tensors


class History:
    """One node of the graph: the Function that made a value, its Context and its inputs.

    A leaf has ``last_fn=None``.
    """

    __slots__ = ("last_fn", "ctx", "inputs")
    num_outputs = 1  # a module 1 Function has one output (module 5 allows more)
    # The Function class and its Context; both None for a leaf.
    last_fn: Any
    ctx: Any

    def __init__(self, last_fn: Any = None, ctx: Optional[Context] = None, inputs=()):
        self.last_fn = last_fn
        self.ctx = ctx
        self.inputs = tuple(inputs)

    def input_nodes(self) -> List[Optional[Variable]]:
        """For each input, the graph node it stands for (None for a constant or a plain number)."""
        return [x if isinstance(x, Variable) and x.history is not None else None for x in self.inputs]

    def chain_rule(self, grads: List[Any]) -> List[Tuple[Variable, Any]]:
        """Run backward with the output's gradient; return (input, gradient) pairs for inputs in the graph."""
        # HINT: self.backward_results(grads) gives one gradient per input (None where there is none);
        # HINT: pass each through node._match_grad(g, self.last_fn.name, i) (it checks its shape).
        # BEGIN SOLUTION 1.3
        name = self.last_fn.name
        return [
            (node, node._match_grad(g, name, i))
            for i, (node, g) in enumerate(zip(self.input_nodes(), self.backward_results(grads), strict=True))
            if node is not None and g is not None
        ]
        # END SOLUTION 1.3

    def backward_results(self, grads: List[Any]) -> Tuple[Any, ...]:
        """The Function's backward at this node: one gradient per input, checked."""
        result = self.last_fn.backward(self.ctx, *grads)
        result = result if isinstance(result, tuple) else (result,)
        return self._check_result(result)

    def _check_result(self, result: Tuple[Any, ...]) -> Tuple[Any, ...]:
        # One gradient per input: fewer or more would silently drop or misplace gradients.
        if len(result) != len(self.inputs):
            raise RuntimeError(
                f"function {self.last_fn.name} returned an incorrect number of gradients "
                f"(expected {len(self.inputs)}, got {len(result)})"
            )
        return result


class FunctionMeta(type):
    """Gives every Function class ``name`` ("<Cls>Backward") and a friendly repr."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls.name = f"{name}Backward"  # a class attribute: error messages and reprs read it often

    def __repr__(cls) -> str:
        return f"<torchlight Function {cls.__name__}>"


class Function(metaclass=FunctionMeta):
    """An operation with a derivative. Subclass it, write ``forward`` and ``backward``, call ``apply``."""

    @staticmethod
    def forward(ctx: Context, *args: Any) -> Any:
        """Compute the result from raw values."""
        raise NotImplementedError("a Function subclass must define forward")

    @staticmethod
    def backward(ctx: Context, *grad_outputs: Any) -> Any:
        """Return one gradient per forward input (None where there is none)."""
        raise NotImplementedError("a Function subclass must define backward to be differentiated")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run forward on the inputs' raw values and, if any input needs a gradient, record a History."""
        try:
            kind, needs, raw = _unpack(args)
        except HeldVariable:  # an nn.Parameter among the inputs: apply to the Variable it holds
            return cls.apply(*unheld(args), **kwargs)
        ctx = Context()
        ctx.needs_input_grad = needs
        out = cls._forward(ctx, raw, kwargs)
        if kind is None:  # no Variable among the inputs: plain values in, plain values out
            return out
        outputs = _wrap(out, args, kind)
        if is_grad_enabled() and True in needs:
            cls._record(ctx, args, outputs)
        return tuple(outputs) if isinstance(out, tuple) else outputs[0]

    @classmethod
    def _forward(cls, ctx: Context, raw: List[Any], kwargs: dict) -> Any:
        # forward's own operations (on tensors) belong to no graph: recording is off.
        old = _set_mode(False)
        try:
            return cls.forward(ctx, *raw, **kwargs)
        finally:
            _set_mode(*old)

    @classmethod
    def _record(cls, ctx: Context, args: Tuple[Any, ...], outputs: List[Any]) -> None:
        """Give the outputs one History: this Function, its ctx and the inputs."""
        history = History(cls, ctx, args)
        for i, w in enumerate(outputs):
            if isinstance(w, Variable):
                w._set_history(history, i)


def _unpack(args: Tuple[Any, ...]) -> Tuple[Any, Tuple[bool, ...], List[Any]]:
    """One pass over the arguments: the class of the first Variable (it wraps the outputs), which
    arguments need a gradient, and the raw values forward receives."""
    kind = None
    needs, raw = [], []
    for a in args:
        if isinstance(a, Variable):
            if kind is None:
                kind = type(a)
            needs.append(a.history is not None)
            raw.append(a._forward_value())
        else:
            if isinstance(getattr(a, "value", None), Variable):
                raise HeldVariable  # (the caller applies again with the Variable: see unheld)
            needs.append(False)
            raw.append(a)
    return kind, tuple(needs), raw


class HeldVariable(Exception):
    """An argument of ``apply`` holds a Variable as its ``.value`` (an ``nn.Parameter``)."""


def unheld(args: Tuple[Any, ...]) -> Tuple[Any, ...]:
    """The arguments with each holder of a Variable (an ``nn.Parameter``) replaced by that Variable,
    so that a Parameter given to a Function gets its gradient, as a PyTorch Parameter does."""
    return tuple(
        a.value if not isinstance(a, Variable) and isinstance(getattr(a, "value", None), Variable) else a for a in args
    )


def _wrap(out: Any, args: Tuple[Any, ...], kind: Any) -> List[Any]:
    """forward's results as new variables of the inputs' kind (Scalar or Tensor)."""
    wrapped = []
    for o in out if isinstance(out, tuple) else (out,):
        w = kind._wrap_output(o)
        if w is None:  # not a value (e.g. None): passed through as it is
            wrapped.append(o)
        elif _is_one_of(w, args):  # forward returned an input: the output is a new node
            wrapped.append(w._alias())
        else:
            wrapped.append(w)
    return wrapped


def _is_one_of(x: Any, values: Tuple[Any, ...]) -> bool:
    """``x in values`` by identity (``==`` on tensors is elementwise)."""
    for v in values:
        if v is x:
            return True
    return False
