"""Module 5: forward-mode AD, as ``torch.autograd.forward_ad``.

Reverse mode (``backward``) gives the gradient of one output with respect to every input in one
pass. Forward mode gives the derivative of every output along one input direction (a
Jacobian-vector product) in one pass, computed alongside the values themselves: each value
carries a *tangent*, and every Function's ``jvp`` maps the tangents of its inputs to the tangents
of its outputs as it runs.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)   # x carries tangent
        y = f(x)
        value, jvp = forward_ad.unpack_dual(y)      # jvp = J_f(primal) @ tangent

A tangent lives in the value's ``_fw`` slot (see ``Variable``), tagged with its level; leaving
``dual_level()`` ends the level, which makes every tangent of it count as absent.
"""

import itertools
from collections import namedtuple
from typing import Any, List, Optional, Tuple

from ..extension import extends
from . import function_api  # noqa: F401  (Function.jvp, Context.save_for_forward)
from .function import Function
from .grad_mode import _dual_level, _set_mode, is_grad_enabled
from .variable import Variable

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])

_levels = itertools.count()


def enter_dual_level() -> int:
    """Start a forward-AD level and return it (prefer ``with dual_level():``)."""
    if _dual_level() is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    level = next(_levels)
    _set_mode(is_grad_enabled(), level)
    return level


def exit_dual_level(*, level: Optional[int] = None) -> None:
    """End the current forward-AD level: the tangents made in it are forgotten.

    :param level: the level to end (default: the current one).
    :raises RuntimeError: when it is not the current level.
    """
    if _dual_level() is None or (level is not None and level != _dual_level()):
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one created; exit the levels "
            "in the order they were entered"
        )
    _set_mode(is_grad_enabled(), None)


class dual_level:
    """Context manager for forward-mode AD: dual values made inside it carry their tangents.

    Only one level can be active at a time (as in PyTorch).
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()


def _current_level(what: str) -> int:
    level = _dual_level()
    if level is None:
        raise RuntimeError(
            f"Trying to {what} for forward AD but no level exists, make sure to enter_dual_level() "
            "first (or use `with forward_ad.dual_level():`)."
        )
    return level


def make_dual(tensor: Variable, tangent: Any, *, level: Optional[int] = None) -> Variable:
    """A new value equal to ``tensor`` that carries ``tangent`` (of the same shape) in forward-mode AD.

    The result is a view of ``tensor`` in the reverse-mode graph, so gradients still reach it.

    :param tensor: the primal: a Tensor or Scalar.
    :param tangent: its tangent, of the same shape.
    :param level: the forward-AD level (default: the current one).
    :raises RuntimeError: outside ``dual_level()``, or for a tangent of another shape.
    """
    current = _current_level("create a dual Tensor")
    if level is not None and level != current:
        raise RuntimeError(f"make_dual: level {level} is not the current forward AD level ({current})")
    if not isinstance(tensor, Variable):
        raise TypeError(f"make_dual expects a Tensor (or Scalar) as its primal, got {type(tensor).__name__}")
    if isinstance(tangent, Variable) and tangent._grad_meta() != tensor._grad_meta():
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original "
            f"Tensor, this is not supported. The primal is a {tensor._describe()} while the given "
            f"forward gradient is a {tangent._describe()}."
        )
    tangent = tensor._match_tangent(tangent, "make_dual", 1)  # type and backend checks
    # HINT: _MakeDual.apply(tensor) is the identity as a view (so reverse mode still reaches
    # HINT: tensor); attach the tangent to its output with _set_tangent(level, tangent).
    # BEGIN SOLUTION 5.4
    dual = _MakeDual.apply(tensor)
    dual._set_tangent(current, tangent)
    return dual
    # END SOLUTION 5.4


def unpack_dual(tensor: Any, *, level: Optional[int] = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of a dual value; the tangent is None when it has none at this level.

    The primal is a view of ``tensor`` without the tangent (``_Primal.apply``), still in the
    reverse-mode graph; where there is no tangent (outside any level, or ``tensor`` not a Variable)
    it is ``tensor`` itself.

    :param tensor: a dual value (or any value, which has no tangent).
    :param level: the forward-AD level (default: the current one).
    """
    # BEGIN SOLUTION 5.4
    level = _dual_level() if level is None else level
    if not isinstance(tensor, Variable):
        return UnpackedDualTensor(tensor, None)
    tangent = tensor._tangent(level) if level is not None else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_Primal.apply(tensor), tangent)
    # END SOLUTION 5.4


class _MakeDual(Function):
    """The identity, as a view; make_dual attaches the tangent to its output."""

    returns_view = True

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g

    @staticmethod
    def jvp(ctx, t):
        return t


class _Primal(_MakeDual):
    """The identity, as a view, without the tangent."""

    @staticmethod
    def jvp(ctx, t):
        return None


def run_jvp(fn: Any, ctx: Any, args: Tuple[Any, ...], outputs: List[Any], level: int) -> None:
    """Give ``fn``'s outputs their tangents: its ``jvp`` of the inputs' tangents at ``level``."""
    tangents = input_tangents(args, level)
    if tangents is None:
        return
    if getattr(fn.jvp, "_default", False):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with forward "
            f"mode AD ({fn.__name__} got inputs with tangents but defines no jvp(ctx, *grad_inputs))."
        )
    # The tangents' own operations get no tangents (there is one level), but are recorded when
    # the tangents require grad, so that they can be differentiated in reverse mode.
    ctx._in_jvp = True
    _set_mode(is_grad_enabled(), None)
    try:
        result = fn.jvp(ctx, *tangents)
    finally:
        _set_mode(is_grad_enabled(), level)
        ctx._in_jvp = False
    set_output_tangents(fn, ctx, result, outputs, level)


def input_tangents(args: Tuple[Any, ...], level: int) -> Optional[List[Any]]:
    """The tangents of ``args`` at ``level``, one per argument (None for one without a tangent, or
    that is not a Variable); None when no argument has one (then there is nothing to compute)."""
    # BEGIN SOLUTION 5.4: the inputs' tangents at this level (None for one without); None if there are none
    tangents = [a._tangent(level) if isinstance(a, Variable) else None for a in args]
    return None if all(t is None for t in tangents) else tangents
    # END SOLUTION 5.4


def set_output_tangents(fn: Any, ctx: Any, result: Any, outputs: List[Any], level: int) -> None:
    """Give ``outputs`` their tangents at ``level`` from ``result``, what ``fn``'s jvp returned."""
    # HINT: one tangent per output (a single one may come bare); a Variable output gets its tangent
    # HINT: checked by w._match_tangent(t, fn.name, i), or None when t is None or the output was
    # HINT: marked non-differentiable (ctx._non_differentiable). Another count of tangents is
    # PyTorch's RuntimeError: "function <fn.name>'s jvp returned an invalid number of forward
    # gradients (expected <outputs> but got <tangents>)".
    # BEGIN SOLUTION 5.4
    if not isinstance(result, tuple):
        result = (result,)
    if len(result) != len(outputs):
        raise RuntimeError(
            f"function {fn.name}'s jvp returned an invalid number of forward gradients "
            f"(expected {len(outputs)} but got {len(result)})"
        )
    nondiff = ctx._non_differentiable
    for i, (w, t) in enumerate(zip(outputs, result, strict=True)):
        if isinstance(w, Variable):
            absent = t is None or any(w is x for x in nondiff)
            w._set_tangent(level, None if absent else w._match_tangent(t, fn.name, i))
    # END SOLUTION 5.4


@extends(Function)
class _ForwardMode:
    @classmethod
    def _forward_mode(cls, ctx: Any, args: Tuple[Any, ...], outputs: List[Any], level: int) -> None:
        run_jvp(cls, ctx, args, outputs, level)
