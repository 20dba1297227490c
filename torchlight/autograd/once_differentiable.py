"""Module 5: ``once_differentiable``, for a backward that cannot itself be differentiated.

A backward written in plain numbers (not in differentiable operations) gives correct first
derivatives, but a second differentiation through it would silently give zero. The decorator runs
such a backward without recording and, under ``create_graph=True``, puts a node in the graph whose
own backward raises, so that differentiating again fails loudly instead.
"""

import functools
from typing import Any, Optional

from .function import Function
from .grad_mode import _dual_level, is_grad_enabled, no_grad
from .variable import Variable


def once_differentiable(backward):
    """Mark a backward as not differentiable itself: a later double backward through it raises.

    :param backward: a Function's backward (the decorator is written above it).
    """

    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        inputs = grads + tuple(ctx._saved)
        level = _dual_level()
        if level is not None and any(isinstance(v, Variable) and v._tangent(level) is not None for v in inputs):
            _raise_twice(ctx._fn)  # forward mode over this backward would silently drop tangents
        with no_grad():
            result = backward(ctx, *grads)
        if not is_grad_enabled():
            return result
        # create_graph=True: the gradients depend on the incoming gradients and the saved values
        # but were computed without a graph; link them to those through a node that raises.
        # HINT: the sources are the Variables among ``inputs`` that are in a graph; pass each
        # HINT: gradient that is a Variable through _DelayedError.apply(g, ctx._fn, *sources).
        # HINT: backward may return one gradient or a tuple of them: return the same form.
        # BEGIN SOLUTION 5.3
        sources = tuple(v for v in inputs if isinstance(v, Variable) and v.history is not None)
        if not sources:
            return result
        flat = result if isinstance(result, tuple) else (result,)
        marked = tuple(_DelayedError.apply(g, ctx._fn, *sources) if isinstance(g, Variable) else g for g in flat)
        return marked if isinstance(result, tuple) else marked[0]
        # END SOLUTION 5.3

    return wrapper


class _DelayedError(Function):
    """Carries a once_differentiable gradient into the graph so that differentiating it raises."""

    @staticmethod
    def forward(ctx, grad, fn, *sources):
        ctx.fn = fn
        return grad

    @staticmethod
    def backward(ctx, *grads):
        # BEGIN SOLUTION 5.3: differentiating a once_differentiable gradient must fail loudly
        _raise_twice(ctx.fn)
        # END SOLUTION 5.3

    @staticmethod
    def jvp(ctx, *tangents):
        _raise_twice(ctx.fn)


def _raise_twice(fn: Optional[Any]) -> None:
    where = f" ({fn.name})" if fn is not None else ""
    raise RuntimeError(f"trying to differentiate twice a function that was marked with @once_differentiable{where}")
