"""Module 5: what gradients of gradients need of module 2's operations.

``Map``'s backward computes its derivative with a backend primitive, outside the graph, so a
second differentiation through it would silently give zero: module 5 marks it
``once_differentiable``, which makes a double backward through it raise instead.
"""

from ..autograd.once_differentiable import once_differentiable
from ..extension import extends
from .elementwise import Map

_first_order_backward = Map.backward


@extends(Map)
class _MapOnceDifferentiable:
    backward = staticmethod(once_differentiable(_first_order_backward))
