"""Module 1: the Variable protocol, what the engine needs from a value it differentiates.

Scalar (module 1) and Tensor (module 2) both subclass Variable. The engine in ``graph.py``
and ``function.py`` uses only the members listed here, so it knows nothing else of either.
"""

import itertools
from typing import Any, Iterable, List, Optional, Tuple

from ..extension import extension_point

_ids = itertools.count()


class Variable:
    """Base of every differentiable value.

    ``history`` is None for a constant (never in the graph), a ``History`` without ``last_fn``
    for a leaf, and the producing Function's ``History`` otherwise; ``_output_nr`` says which
    output of that Function this value is.
    """

    # ``_fw`` is the forward-mode AD slot: (level, tangent), set by ``forward_ad.make_dual`` and by
    # the jvp of the Function that made this value. A tangent counts only while its level is the
    # active one, so leaving ``dual_level()`` forgets every tangent without visiting them.
    __slots__ = ("history", "_output_nr", "unique_id", "grad", "_fw")

    history: Any
    _output_nr: int
    unique_id: int
    grad: Any

    @staticmethod
    def _next_id() -> int:
        return next(_ids)

    # -- graph structure (shared by all variables) -------------------------------------

    def is_constant(self) -> bool:
        """True when this value is not part of any graph."""
        return self.history is None

    @property
    @extension_point  # (module 3's native layer does it in C: autograd/native.py)
    def parents(self) -> List["Variable"]:
        """The non-constant inputs of the Function that produced this value, as they were then
        (an input changed in place since stands for its old node: see History.input_nodes)."""
        h = self.history
        if h is None:
            return []
        return [x for x in h.input_nodes() if x is not None]

    def chain_rule(self, d: Any) -> Iterable[Tuple["Variable", Any]]:
        """Pairs (parent, derivative of the output with respect to that parent, times d)."""
        h = self.history
        if h is None or h.last_fn is None:
            return []
        grads = [None] * h.num_outputs
        grads[self._output_nr] = d
        return h.chain_rule(grads)

    # -- what each kind of variable provides -------------------------------------------
    # Scalar defines these in its class; Tensor's are attached from tensor_variable.py (module 2's
    # own file), so they are extension points. _set_history is the engine's, for every variable.

    @extension_point
    def accumulate_derivative(self, d: Any) -> None:
        """Add d to ``self.grad`` (leaves only)."""
        raise NotImplementedError

    @extension_point
    def _forward_value(self) -> Any:
        """What a Function's forward receives for this input (a float, or the tensor itself)."""
        raise NotImplementedError

    @classmethod
    @extension_point
    def _wrap_output(cls, raw: Any) -> Optional["Variable"]:
        """Turn a forward result into a variable of this kind, or None if it is not a value."""
        raise NotImplementedError

    def _set_history(self, history: Any, output_nr: int) -> None:
        self.history = history
        self._output_nr = output_nr

    @extension_point
    def _match_grad(self, g: Any, fn_name: str, index: int) -> Any:
        """Check a gradient from ``fn_name``'s backward for this input; return it in this input's shape."""
        raise NotImplementedError

    @extension_point
    def _grad_meta(self) -> Any:
        """What ``_zero_grad`` needs to build a zero gradient for this value (e.g. its shape)."""
        return None

    @classmethod
    @extension_point
    def _zero_grad(cls, meta: Any) -> Any:
        raise NotImplementedError

    @extension_point
    def _default_grad(self) -> Any:
        """The gradient ``backward()`` starts from when none is given (1.0, or ones for one element)."""
        raise NotImplementedError

    # Module 5 gives Tensor its own _version, _bump_version, _describe and _match_tangent
    # (tensor_autograd.py): they are extension points.

    @property
    @extension_point
    def _version(self) -> Optional[int]:
        """In-place modification count, shared by views of one storage (None for immutable values)."""
        return None

    # Only variables that can change in place (Tensor) need these three.

    @extension_point
    def _bump_version(self) -> None:
        """Count one in-place change (module 5); a value that cannot change refuses."""
        raise TypeError(f"{type(self).__name__} cannot be modified in place")

    @extension_point
    def _alias(self) -> "Variable":
        """A new variable object sharing this one's data, without history."""
        raise NotImplementedError

    @extension_point
    def _describe(self) -> str:
        """Short description for error messages, e.g. 'Tensor of shape (2, 3)'."""
        return type(self).__name__

    # -- forward-mode AD ------------------------------------------------------------------

    def _tangent(self, level: Any) -> Any:
        """This value's tangent at forward-AD ``level``, or None."""
        fw = getattr(self, "_fw", None)  # the slot is unset until a tangent is attached
        return fw[1] if fw is not None and fw[0] == level else None

    def _set_tangent(self, level: Any, tangent: Any) -> None:
        self._fw = None if tangent is None else (level, tangent)

    @extension_point
    def _match_tangent(self, t: Any, fn_name: str, index: int) -> Any:
        """Check a tangent from ``fn_name``'s jvp for this output; return it in this output's shape."""
        return self._match_grad(t, fn_name, index)
