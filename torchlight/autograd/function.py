"""Module 1: Function, Context and History: one application of an operation and its record.

A Function's ``forward`` computes on raw values (floats for Scalars; for Tensors the tensors
themselves, with recording switched off). ``apply`` runs it and, when an input needs a gradient,
gives the outputs a ``History``: the Function, its Context and its inputs. ``backward`` maps the
gradients of the outputs to gradients of the inputs (``History.chain_rule``).

This is the one engine: every Scalar and Tensor operation goes through this ``apply``. Module 5
adds the rest of PyTorch's Function API from its own files (``function_api.py``: the combined
forward style; ``inplace_tracking.py``: ``mark_dirty`` and version counters; ``forward_ad.py``:
``jvp``). It plugs into the steps below at the methods marked ``@extension_point``, and into the
empty defaults of ``Context`` that its methods fill; it never repeats a step.
"""

import itertools
from typing import TYPE_CHECKING, Any, List, Optional, Tuple

from ..extension import extension_point
from .grad_mode import _state
from .variable import Variable

_stamps = itertools.count()


class Context:
    """Scratchpad passed from a Function's forward to its backward."""

    # Defaults live on the class: apply makes one Context per operation.
    no_grad = False
    needs_input_grad: Tuple[bool, ...] = ()
    _saved: Tuple[Any, ...] = ()
    _fn: Any = None  # the Function class this Context serves (for error messages)
    # What module 5's methods record (ctx.mark_dirty(...) and so on); empty until they are called.
    _dirty: Tuple[Any, ...] = ()
    _non_differentiable: Tuple[Any, ...] = ()

    if TYPE_CHECKING:  # a Function keeps its own values on ctx (ctx.shape = ...), as in PyTorch

        def __getattr__(self, name: str) -> Any: ...
        def __setattr__(self, name: str, value: Any) -> None: ...

    def __init__(self, no_grad: bool = False, saved_values: Tuple[Any, ...] = ()):
        if no_grad:
            self.no_grad = True
        if saved_values:
            self._saved = tuple(saved_values)

    def save_for_backward(self, *values: Any) -> None:
        """Keep values (tensors, floats or None) for backward; read them back with ``saved_tensors``.

        :param values: what backward will need.
        """
        if not self.no_grad:
            self._saved = values

    @property
    def saved_tensors(self) -> Tuple[Any, ...]:
        """The values given to ``save_for_backward``."""
        return self._read_saved()

    # MiniTorch's spelling, kept so that its exercises run unchanged.
    @property
    def saved_values(self) -> Tuple[Any, ...]:
        """The same as ``saved_tensors``."""
        return self.saved_tensors

    @extension_point
    def _read_saved(self) -> Tuple[Any, ...]:
        """The saved values as backward reads them. Module 5 refuses values changed in place since
        they were saved, or freed by an earlier backward, and gives ``jvp`` its own."""
        return self._saved


class History:
    """One node of the graph: the Function that made a value, its Context and its inputs.

    A leaf has ``last_fn=None``.
    """

    # A Function with several outputs gives them one History (module 5); ``output_meta`` then
    # holds, per output, what building a zero gradient for it takes (see backward_results).
    num_outputs = 1
    output_meta: Tuple[Any, ...] = ()
    # For an in-place operation (module 5): output index -> the node that output was before.
    previous: Any = None

    def __init__(self, last_fn: Any = None, ctx: Optional[Context] = None, inputs=()):
        # The Function class and its Context; both None for a leaf.
        self.last_fn = last_fn
        self.ctx = ctx
        self.inputs = tuple(inputs)
        # Creation order: tells which of two nodes came first (module 5, in-place changes).
        self.stamp = next(_stamps)

    # A History is the graph node (PyTorch's grad_fn): it prints and names itself as PyTorch's node.
    def name(self) -> str:
        """The node's name: "MulBackward" for a Mul (PyTorch's "MulBackward0")."""
        return "AccumulateGrad" if self.last_fn is None else self.last_fn.name

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    @extension_point  # (module 3's native layer does these two in C: autograd/native.py)
    def input_nodes(self) -> List[Optional[Variable]]:
        """For each input, the graph node it stands for (None for a constant or a plain number)."""
        return [
            self._recorded_node(x) if isinstance(x, Variable) and x.history is not None else None for x in self.inputs
        ]

    @extension_point
    def _recorded_node(self, x: Variable) -> Optional[Variable]:
        """The node input ``x`` stood for when this History was made: ``x`` itself, unless module 5's
        in-place tracking finds that ``x`` was changed in place since."""
        return x

    def chain_rule(self, grads: List[Any]) -> List[Tuple[Variable, Any]]:
        """Run backward with the outputs' gradients; return (input, gradient) pairs for inputs in the graph.

        One pair per input, in the inputs' order (an input used twice, as in ``x * x``, gives two
        pairs); an input outside the graph (a constant or a plain number) or without a gradient
        gives none.
        """
        # HINT: self.backward_results(grads) gives one gradient per input (None where there is none);
        # self.input_nodes() gives the graph node each input stands for (None outside the graph).
        # Pass each gradient through node._match_grad(g, self.last_fn.name, i) (it checks its shape).
        # BEGIN SOLUTION 1.3
        name = self.last_fn.name
        return [
            (node, node._match_grad(g, name, i))
            for i, (node, g) in enumerate(zip(self.input_nodes(), self.backward_results(grads), strict=True))
            if node is not None and g is not None
        ]
        # END SOLUTION 1.3

    @extension_point
    def backward_results(self, grads: List[Any]) -> Tuple[Any, ...]:
        """The Function's backward at this node: one gradient per input, checked."""
        if self.output_meta and None in grads:  # some of several outputs got no gradient
            grads = self._missing_grads(grads)
        result = self.last_fn.backward(self.ctx, *grads)
        return self._check_result(result if isinstance(result, tuple) else (result,))

    @extension_point
    def _missing_grads(self, grads: List[Any]) -> List[Any]:
        """The gradients backward receives when some outputs got none: None for those here;
        module 5 gives them zeros unless the Function set ``ctx.set_materialize_grads(False)``."""
        return grads

    def _check_result(self, result: Tuple[Any, ...]) -> Tuple[Any, ...]:
        """One gradient per input (extra trailing Nones allowed, as PyTorch), None for a non-Variable."""
        n = len(self.inputs)
        if len(result) != n:
            # Fewer or more would silently drop or misplace gradients.
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


class FunctionMeta(type):
    """Gives every Function class ``name`` ("<Cls>Backward") and a friendly repr."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls.name = f"{name}Backward"  # a class attribute: error messages and reprs read it often

    def __repr__(cls) -> str:
        return f"<torchlight Function {cls.__name__}>"


class Function(metaclass=FunctionMeta):
    """An operation with a derivative. Subclass it, write ``forward`` and ``backward``, call ``apply``."""

    # True for a Function whose output shares its first input's storage (a view, e.g. Permute).
    returns_view = False

    @staticmethod
    def forward(ctx: Context, *args: Any, **kwargs: Any) -> Any:
        """Compute the result from raw values.

        :param ctx: the Context of this call: save what backward needs on it.
        :param args: the inputs' raw values (floats, or tensors without history).
        """
        raise NotImplementedError("a Function subclass must define forward")

    @staticmethod
    def backward(ctx: Context, *grad_outputs: Any) -> Any:
        """Return one gradient per forward input (None where there is none).

        :param ctx: the Context that forward filled.
        :param grad_outputs: the gradient with respect to each output.
        """
        raise NotImplementedError("a Function subclass must define backward to be differentiated")

    @classmethod
    @extension_point  # the fused native apply (autograd/native.py), where built, does these same steps in C
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run forward on the inputs' raw values and, if any input needs a gradient, record a History.

        :param args: the inputs: Scalars or Tensors, and any other arguments forward takes.
        :returns: forward's result, with a History when an input needs a gradient.
        """
        try:
            kind, needs, raw = _unpack(args)
        except HeldVariable:  # an nn.Parameter among the inputs: apply to the Variable it holds
            return cls.apply(*unheld(args), **kwargs)
        ctx = Context()
        ctx.needs_input_grad = needs
        ctx._fn = cls
        # forward's own operations (on tensors) are not recorded, nor given tangents. The list is
        # this thread's grad mode (grad_mode._state), written in place: two calls fewer per operation.
        mode = _state.mode
        enabled, level = mode
        mode[0], mode[1] = False, None
        try:
            out = cls._run_forward(ctx, raw, kwargs)
        finally:
            mode[0], mode[1] = enabled, level
        if kind is None:  # no Variable among the inputs: plain values in, plain values out
            return out
        multiple = isinstance(out, tuple)
        if ctx._dirty:  # forward changed inputs in place (module 5)
            cls._check_dirty(ctx, raw, out if multiple else (out,))
        outputs = _wrap(out if multiple else (out,), args, kind, ctx._dirty)
        if enabled and True in needs:
            cls._record(ctx, args, outputs)
        if level is not None:  # inside forward_ad.dual_level() (module 5)
            cls._forward_mode(ctx, args, outputs, level)
        return tuple(outputs) if multiple else outputs[0]

    @classmethod
    @extension_point
    def _run_forward(cls, ctx: Context, raw: List[Any], kwargs: dict) -> Any:
        """Call forward. Module 5 adds the combined style: ``forward(*args)`` then ``setup_context``."""
        return cls.forward(ctx, *raw, **kwargs)

    @classmethod
    def _record(cls, ctx: Context, args: Tuple[Any, ...], outputs: List[Any]) -> None:
        """Give the outputs one History: this Function, its ctx and the inputs."""
        history = History(cls, ctx, args) if not ctx._dirty else cls._inplace_history(ctx, args, outputs)
        n = len(outputs)
        if n > 1:  # what building a zero gradient for each output takes (History.backward_results)
            history.num_outputs = n
            history.output_meta = tuple(
                [(type(w), w._grad_meta()) if isinstance(w, Variable) else None for w in outputs]
            )
        nondiff = ctx._non_differentiable
        for i, w in enumerate(outputs):
            if isinstance(w, Variable) and not (nondiff and _is_one_of(w, nondiff)):
                w._set_history(history, i)
        if ctx._saved:
            cls._saved_recorded(ctx)

    # Extension points of module 5, called only when its features are in use.

    @classmethod
    @extension_point
    def _check_dirty(cls, ctx: Context, raw: List[Any], outputs: Tuple[Any, ...]) -> None:
        """Check the inputs forward changed in place (``ctx.mark_dirty``): module 5."""
        raise NotImplementedError("in-place operations are module 5's (torchlight.autograd.inplace_tracking)")

    @classmethod
    @extension_point
    def _inplace_history(cls, ctx: Context, args: Tuple[Any, ...], outputs: List[Any]) -> History:
        """The History of an in-place application: module 5."""
        raise NotImplementedError("in-place operations are module 5's (torchlight.autograd.inplace_tracking)")

    @classmethod
    @extension_point
    def _saved_recorded(cls, ctx: Context) -> None:
        """Called once values saved for backward belong to the graph: module 5 notes their versions."""

    @classmethod
    @extension_point
    def _forward_mode(cls, ctx: Context, args: Tuple[Any, ...], outputs: List[Any], level: int) -> None:
        """Give the outputs their tangents in forward-mode AD: module 5 (``forward_ad.py``)."""


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


def _wrap(out: Tuple[Any, ...], args: Tuple[Any, ...], kind: Any, dirty: Tuple[Any, ...]) -> List[Any]:
    """forward's results as new variables of the inputs' kind (Scalar or Tensor)."""
    wrapped = []
    for o in out:
        w = kind._wrap_output(o)
        if w is None:  # not a value (e.g. None): passed through as it is
            wrapped.append(o)
        elif _is_one_of(w, args) and not (dirty and _is_one_of(w, dirty)):
            wrapped.append(w._alias())  # forward returned an input unchanged: the output is a new node
        else:
            wrapped.append(w)
    return wrapped


def _is_one_of(x: Any, values: Tuple[Any, ...]) -> bool:
    """``x in values`` by identity (``==`` on tensors is elementwise)."""
    for v in values:
        if v is x:
            return True
    return False
