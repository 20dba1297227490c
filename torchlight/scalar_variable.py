"""Module 1: Scalar, a float that records the operations applied to it."""

import numbers
from typing import Any, Optional

from .autograd import scalar_functions as F
from .autograd.function import History
from .autograd.grad_mode import is_grad_enabled
from .autograd.graph import backpropagate
from .autograd.variable import Variable

_LEAF = object()  # default marker: each leaf gets a History of its own


def _is_real(x: Any) -> bool:
    """Whether x is a real number: an int, a float, a numpy float..."""
    # numbers.Real is an abstract class, and isinstance against one takes about 1 us; almost every
    # call here gets a float, whose type test takes 30 ns.
    return type(x) is float or isinstance(x, numbers.Real)


class Scalar(Variable):
    """A real number in the autodiff graph.

    ``Scalar(3.0)`` is a leaf that receives ``.grad`` from ``backward``; ``Scalar(3.0,
    history=None)`` is a constant, never part of a graph.

    :param value: the number.
    :param history: how it was computed (default: a leaf's; None: a constant).
    :param name: a name, shown by ``draw_graph``.
    """

    __slots__ = ("data", "name")

    def __init__(self, value: Any, history: Any = _LEAF, name: Optional[str] = None):
        if not _is_real(value):
            if isinstance(value, Variable):
                raise TypeError(f"Scalar(...) needs a plain number, got a {type(value).__name__}; use its .data")
            raise TypeError(f"Scalar(...) needs a real number (int or float), got {type(value).__name__}: {value!r}")
        self.data = float(value)
        self.history = History() if history is _LEAF else history
        self._output_nr = 0
        self.unique_id = Variable._next_id()
        self.grad: Optional[float] = None
        self.name = name

    def __repr__(self) -> str:
        return f"Scalar({self.data})"

    # -- the Variable protocol ---------------------------------------------------------

    def is_leaf(self) -> bool:
        """True for a value made by the user (not by an operation) that is in a graph."""
        return self.history is not None and self.history.last_fn is None

    @property
    def requires_grad(self) -> bool:
        """True when operations on this Scalar are recorded (it is not a constant)."""
        return self.history is not None

    def requires_grad_(self, requires_grad: bool = True) -> "Scalar":
        """Make this Scalar a leaf (True) or a constant (False), as ``Tensor.requires_grad_``; returns self."""
        if self.history is not None and self.history.last_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad of leaf Scalars; use .detach() for a constant copy of a computed one"
            )
        if requires_grad and self.history is None:
            self.history = History()
        elif not requires_grad:
            self.history = None
        return self

    def detach(self) -> "Scalar":
        """A constant Scalar with the same value, outside the graph."""
        return Scalar(self.data, history=None)

    def sub_(self, other: Any, alpha: float = 1.0) -> "Scalar":
        """``self.data -= alpha * other``, in place, as ``Tensor.sub_``: an optimizer's step, under
        ``no_grad()``. Returns self."""
        if self.history is not None and is_grad_enabled():
            # The graph would not see the change: as PyTorch, allow it only outside recording.
            raise RuntimeError("a Scalar in the graph can change in place only under torchlight.no_grad()")
        self.data -= alpha * float(other)
        return self

    def accumulate_derivative(self, d: float) -> None:
        """Add d to ``.grad``."""
        if not self.is_leaf():
            raise RuntimeError("accumulate_derivative is only for leaves (Scalars made by the user)")
        self.grad = d if self.grad is None else self.grad + d

    def _forward_value(self) -> float:
        return self.data

    @classmethod
    def _wrap_output(cls, raw: Any) -> Optional["Scalar"]:
        if _is_real(raw):
            return Scalar(raw, history=None)
        return None

    def _match_grad(self, g: Any, fn_name: str, index: int) -> float:
        if not _is_real(g):
            raise RuntimeError(
                f"function {fn_name} returned an invalid gradient at index {index}: expected a "
                f"number for a Scalar input, got {type(g).__name__}"
            )
        return float(g)

    @classmethod
    def _zero_grad(cls, meta: Any) -> float:
        return 0.0

    def _default_grad(self) -> float:
        return 1.0

    def backward(self, d: float = 1.0) -> None:
        """Fill ``.grad`` of every leaf this value depends on with d * (derivative of self).

        A second call adds to the leaves' ``.grad`` again (the graph is kept, as PyTorch does
        with ``retain_graph=True``); set the leaves' ``.grad = None`` to start afresh.
        """
        if self.history is None:
            raise RuntimeError("backward() on a constant Scalar: it does not depend on any leaf")
        backpropagate(self, float(d))

    # -- operators: primitives from scalar_functions, the rest composed ------------------

    def __add__(self, b: Any) -> "Scalar":
        return F.Add.apply(self, _lift(b))

    def __radd__(self, b: Any) -> "Scalar":
        return F.Add.apply(_lift(b), self)

    def __mul__(self, b: Any) -> "Scalar":
        return F.Mul.apply(self, _lift(b))

    def __rmul__(self, b: Any) -> "Scalar":
        return F.Mul.apply(_lift(b), self)

    def __neg__(self) -> "Scalar":
        return F.Neg.apply(self)

    def __sub__(self, b: Any) -> "Scalar":
        """self - b (b a Scalar or a number), composed as self + (-b): there is no Sub Function."""
        # BEGIN SOLUTION 1.2
        return self + (-_lift(b))
        # END SOLUTION 1.2

    def __rsub__(self, b: Any) -> "Scalar":
        """b - self, for a number on the left (``2.0 - x``)."""
        # BEGIN SOLUTION 1.2
        return _lift(b) + (-self)
        # END SOLUTION 1.2

    def __truediv__(self, b: Any) -> "Scalar":
        """self / b, composed from Mul and Inv (there is no Div Function): 1 / 0.0 is inf, as Inv gives."""
        # BEGIN SOLUTION 1.2
        return self * F.Inv.apply(_lift(b))
        # END SOLUTION 1.2

    def __rtruediv__(self, b: Any) -> "Scalar":
        """b / self, for a number on the left (``1.0 / x``)."""
        # BEGIN SOLUTION 1.2
        return _lift(b) * F.Inv.apply(self)
        # END SOLUTION 1.2

    def __pow__(self, b: Any) -> "Scalar":
        return F.Pow.apply(self, _lift(b))

    def __rpow__(self, b: Any) -> "Scalar":
        return F.Pow.apply(_lift(b), self)

    def __lt__(self, b: Any) -> "Scalar":
        return F.LT.apply(self, _lift(b))

    def __gt__(self, b: Any) -> "Scalar":
        """self > b, as 1.0 or 0.0: LT with the arguments swapped."""
        # BEGIN SOLUTION 1.2
        return F.LT.apply(_lift(b), self)
        # END SOLUTION 1.2

    def __eq__(self, b: Any) -> "Scalar":  # type: ignore[override]
        return F.EQ.apply(self, _lift(b))

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        return bool(self.data)

    def __float__(self) -> float:
        return self.data

    def log(self) -> "Scalar":
        """Natural logarithm."""
        return F.Log.apply(self)

    def exp(self) -> "Scalar":
        """e ** self"""
        return F.Exp.apply(self)

    def sigmoid(self) -> "Scalar":
        """1 / (1 + e ** -self)"""
        return F.Sigmoid.apply(self)

    def relu(self) -> "Scalar":
        """max(self, 0)"""
        return F.ReLU.apply(self)

    def tanh(self) -> "Scalar":
        """Hyperbolic tangent, composed as 2 * sigmoid(2x) - 1."""
        # BEGIN SOLUTION 1.2
        return 2.0 * (2.0 * self).sigmoid() - 1.0
        # END SOLUTION 1.2


def _lift(x: Any) -> Scalar:
    """A number becomes a constant Scalar; a Scalar is returned as it is."""
    if isinstance(x, Scalar):
        return x
    if _is_real(x):
        return Scalar(x, history=None)
    raise TypeError(f"cannot combine a Scalar with {type(x).__name__}: {x!r}")
