"""Function, Context and History: one application of an operation and its record.

A Function's ``forward`` computes on raw values (floats for Scalars; for Tensors the
tensors themselves, with recording switched off); ``apply`` wraps the results and, when any
input needs a gradient, links them into the graph with a ``History``. ``backward`` maps the
gradients of the outputs to gradients of the inputs, written in differentiable operations so
that a graph can be built through it (double backward). ``jvp`` maps tangents of the inputs to
tangents of the outputs (forward-mode AD, see ``forward_ad.py``).

In-place operations (module 5) change an input and return it (``ctx.mark_dirty``). The changed
value then gets the operation's History, and ``History.previous`` keeps what it was before, so
that operations that used it earlier still differentiate the value they saw.
"""

import functools
import inspect
import itertools
from typing import Any, Dict, List, Optional, Tuple

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

    # Defaults live on the class: apply makes one Context per operation, and most operations
    # set only one or two of these.
    no_grad = False
    needs_input_grad: Tuple[bool, ...] = ()
    materialize_grads = True
    saved_for_forward: Tuple[Any, ...] = ()
    _saved: Tuple[Any, ...] = ()
    _saved_versions: Tuple[Optional[int], ...] = ()
    _freed = False
    _in_jvp = False
    _fn: Optional[type] = None
    _dirty: Tuple[Any, ...] = ()
    _non_differentiable: Tuple[Any, ...] = ()

    def __init__(self, no_grad: bool = False, saved_values: Tuple[Any, ...] = ()):
        if no_grad:
            self.no_grad = True
        if saved_values:
            self._saved = tuple(saved_values)

    def save_for_backward(self, *values: Any) -> None:
        """Keep values (tensors, floats or None) for backward; read them back with ``saved_tensors``."""
        if self.no_grad:
            return
        self._saved = values

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
        self._saved_versions = tuple([v._version if isinstance(v, Variable) else None for v in self._saved])

    def _free(self) -> None:
        self._saved = ()
        self._saved_versions = ()
        self._freed = True


# Creation order of Histories: an input whose History is newer than its consumer's was changed
# in place after the consumer used it (see History.input_nodes).
_stamps = itertools.count()


class History:
    """One node of the graph: the Function that made a value, its Context and its inputs.

    A leaf has ``last_fn=None``. All outputs of one Function application share one History;
    ``output_meta`` keeps what is needed to build a zero gradient for each of them (only when
    there are several). ``stamp`` orders Histories by creation; ``previous`` (in-place operations
    only) maps an output number to the node that output was before the operation changed it.
    """

    __slots__ = ("last_fn", "ctx", "inputs", "num_outputs", "output_meta", "stamp", "previous")

    def __init__(self, last_fn: Optional[type] = None, ctx: Optional[Context] = None, inputs=()):
        self.last_fn = last_fn
        self.ctx = ctx
        self.inputs = tuple(inputs)
        self.num_outputs = 1
        self.output_meta: Tuple[Any, ...] = ()
        self.stamp = next(_stamps)
        self.previous: Optional[Dict[int, Variable]] = None

    def input_nodes(self) -> List[Optional[Variable]]:
        """For each input, the graph node it stood for when this History was made (None if none).

        That is the input itself, unless its History is newer than this one: then it was changed
        in place since (or was a constant then), and the node is what it was before.
        """
        stamp = self.stamp
        nodes: List[Optional[Variable]] = []
        for x in self.inputs:
            if isinstance(x, Variable) and x.history is not None:
                h = x.history
                if h.stamp > stamp:
                    x = self._as_before(x)
                elif h.last_fn is not None and h.last_fn.returns_view:
                    self._check_view(x)
                nodes.append(x)
            else:
                nodes.append(None)
        return nodes

    def _as_before(self, x: Variable) -> Optional[Variable]:
        # Walk back through the in-place changes of x made after this History.
        h = x.history
        while h is not None and h.stamp > self.stamp:
            x = h.previous.get(x._output_nr) if h.previous else None
            if x is None:
                return None
            h = x.history
        return x if h is not None else None

    def _check_view(self, view: Variable) -> None:
        # A view shares its base's storage: if the base was changed in place between the view's
        # making and this use, this History saw the new values, but the view's History leads to
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

    def chain_rule(self, grads):
        """Run backward with one gradient per output; return (input, gradient) pairs for inputs in the graph."""
        fn, ctx = self.last_fn, self.ctx
        if ctx.materialize_grads and self.output_meta and any(g is None for g in grads):
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
        for i, (inp, node, g) in enumerate(zip(self.inputs, self.input_nodes(), result)):
            if g is None:
                continue
            if not isinstance(inp, Variable):
                raise RuntimeError(
                    f"function {fn.name} returned a gradient different than None at position "
                    f"{i}, but the corresponding forward input was not a Variable "
                    f"(it was {type(inp).__name__}); return None for it"
                )
            if node is not None:
                pairs.append((node, node._match_grad(g, fn.name, i)))
        return pairs


class FunctionMeta(type):
    """Gives every Function class ``name`` ("<Cls>Backward") and a friendly repr."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        # apply tells the two forward styles apart once, here, not on every call.
        cls._combined = not getattr(cls.setup_context, "_default", False)
        cls._has_jvp = not getattr(cls.jvp, "_default", False)

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
    def backward(ctx: Context, *grad_outputs: Any) -> Any:
        """Return one gradient per forward input (None where there is none)."""
        raise NotImplementedError("a Function subclass must define backward to be differentiated")

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
            "torchlight does not implement vmap; batch the computation by hand (add a leading "
            "dimension) instead"
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run forward on ``args``, link the outputs into the graph and, in forward-mode AD, give them tangents."""
        # One pass over the arguments: which need a gradient, what forward receives, and the
        # class (Scalar or Tensor) of the first Variable, which wraps the outputs.
        kind = None
        needs, raw = [], []
        for a in args:
            if isinstance(a, Variable):
                if kind is None:
                    kind = type(a)
                needs.append(a.history is not None)
                raw.append(a._forward_value())
            else:
                needs.append(False)
                raw.append(a)
        needs = tuple(needs)
        record = _Mode.enabled and True in needs
        ctx = Context()
        ctx._fn = cls
        ctx.needs_input_grad = needs

        # forward's own operations belong to no graph: recording and forward-mode AD are off.
        grad_mode, level = _Mode.enabled, _Mode.dual_level
        _Mode.enabled = False
        _Mode.dual_level = None
        try:
            if cls._combined:
                out = cls.forward(*raw, **kwargs)
                cls.setup_context(ctx, _bind_inputs(cls, tuple(raw), kwargs), out)
            else:
                out = cls.forward(ctx, *raw, **kwargs)
        finally:
            _Mode.enabled = grad_mode
            _Mode.dual_level = level

        if kind is None:
            return out
        multiple = isinstance(out, tuple)
        dirty = ctx._dirty
        wrapped = []
        for o in out if multiple else (out,):
            w = kind._wrap_output(o)
            if w is None:
                wrapped.append(o)
                continue
            for a in args:
                if w is a:
                    # forward returned an input: unless it changed it in place, the output is a
                    # new node that shares the input's data, not the input itself.
                    if not _contains(dirty, w):
                        w = w._alias()
                    break
            wrapped.append(w)

        if dirty:
            _check_dirty(cls, dirty, args, wrapped, record)
            for d in dirty:
                d._bump_version()

        if record:
            if dirty:
                inputs, previous = _rebase(args, wrapped, dirty)
                history = History(cls, ctx, inputs)
                history.previous = previous
            else:
                history = History(cls, ctx, args)
            n = history.num_outputs = len(wrapped)
            if n > 1:
                history.output_meta = tuple(
                    [(type(w), w._grad_meta()) if isinstance(w, Variable) else None for w in wrapped]
                )
            nondiff = ctx._non_differentiable
            for i, w in enumerate(wrapped):
                if isinstance(w, Variable) and not _contains(nondiff, w):
                    w._set_history(history, i)
            if ctx._saved:
                ctx._snapshot_versions()

        if level is not None:
            _forward_ad(cls, ctx, args, wrapped, level)
        return tuple(wrapped) if multiple else wrapped[0]


def _contains(values: Tuple[Any, ...], x: Any) -> bool:
    """``x in values`` by identity (``==`` on tensors is elementwise)."""
    for v in values:
        if v is x:
            return True
    return False


def check_inplace(fn: type, target: Variable, record: bool) -> None:
    """Raise if ``fn`` may not change ``target`` in place while recording (``record``) a graph."""
    h = target.history
    if not record or h is None:
        return
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


def _check_dirty(cls: type, dirty: Tuple[Any, ...], args: Tuple[Any, ...], wrapped: list, record: bool) -> None:
    for d in dirty:
        if not _contains(args, d):
            raise RuntimeError(
                f"{cls.name}: ctx.mark_dirty() was given a value that is not an input of forward; "
                "mark only the inputs that forward changed in place"
            )
        if not _contains(tuple(wrapped), d):
            raise RuntimeError(
                "Some elements marked as dirty during the forward method were not returned as output. "
                f"The inputs that are modified inplace must all be outputs of the Function ({cls.name})."
            )
        check_inplace(cls, d, record)


def _rebase(args: Tuple[Any, ...], wrapped: list, dirty: Tuple[Any, ...]):
    """The inputs to record for an in-place operation, and its outputs' previous nodes.

    Each changed input is about to get the operation's History. What it was until now (its old
    History, or none for a constant) moves to a new alias that shares its data: the operation
    records the alias as its input, and ``previous`` remembers it for operations that used the
    input before (``History.input_nodes``).
    """
    inputs = list(args)
    previous: Dict[int, Variable] = {}
    for d in dirty:
        old = d._alias()
        if d.history is not None:
            old._set_history(d.history, d._output_nr)
        for i, a in enumerate(args):
            if a is d:
                inputs[i] = old
        for i, w in enumerate(wrapped):
            if w is d:
                previous[i] = old
    return tuple(inputs), previous


def _forward_ad(cls: type, ctx: Context, args: Tuple[Any, ...], wrapped: list, level: Any) -> None:
    """Give the outputs their tangents: ``cls.jvp`` of the inputs' tangents at ``level``."""
    tangents = [a._tangent(level) if isinstance(a, Variable) else None for a in args]
    if all(t is None for t in tangents):
        return
    if not cls._has_jvp:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with forward "
            f"mode AD ({cls.__name__} got inputs with tangents but defines no jvp(ctx, *grad_inputs))."
        )
    # The tangents' own operations get no tangents (there is one level), but are recorded when
    # the tangents require grad, so that they can be differentiated in reverse mode.
    ctx._in_jvp = True
    _Mode.dual_level = None
    try:
        result = cls.jvp(ctx, *tangents)
    finally:
        _Mode.dual_level = level
        ctx._in_jvp = False
    if not isinstance(result, tuple):
        result = (result,)
    if len(result) != len(wrapped):
        raise RuntimeError(
            f"function {cls.name}'s jvp returned an invalid number of forward gradients "
            f"(expected {len(wrapped)} but got {len(result)})"
        )
    nondiff = ctx._non_differentiable
    for i, (w, t) in enumerate(zip(wrapped, result)):
        if isinstance(w, Variable):
            if t is None or _contains(nondiff, w):
                w._set_tangent(level, None)
            else:
                w._set_tangent(level, w._match_tangent(t, cls.name, i))


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
        level = _Mode.dual_level
        if level is not None and any(
            isinstance(v, Variable) and v._tangent(level) is not None for v in grads + tuple(ctx._saved)
        ):
            _raise_twice(ctx._fn)  # forward mode over this backward would silently drop tangents
        with no_grad():
            result = backward(ctx, *grads)
        if not _Mode.enabled:
            return result
        # create_graph=True: the gradients depend on the incoming gradients and the saved values
        # but were computed without a graph. A node whose backward raises goes between them, so
        # that differentiating again fails loudly instead of silently giving zero.
        sources = tuple(
            v for v in grads + tuple(ctx._saved) if isinstance(v, Variable) and v.history is not None
        )
        if not sources:
            return result
        flat = result if isinstance(result, tuple) else (result,)
        marked = tuple(
            _DelayedError.apply(g, ctx._fn, *sources) if isinstance(g, Variable) else g for g in flat
        )
        return marked if isinstance(result, tuple) else marked[0]

    return wrapper


class _DelayedError(Function):
    """Carries a once_differentiable gradient into the graph so that differentiating it raises."""

    @staticmethod
    def forward(ctx, grad, fn, *sources):
        ctx.fn = fn
        return grad

    @staticmethod
    def backward(ctx, *grads):
        _raise_twice(ctx.fn)

    @staticmethod
    def jvp(ctx, *tangents):
        _raise_twice(ctx.fn)


def _raise_twice(fn: Optional[type]) -> None:
    where = f" ({fn.name})" if fn is not None else ""
    raise RuntimeError(
        f"trying to differentiate twice a function that was marked with @once_differentiable{where}"
    )
