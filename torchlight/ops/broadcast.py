"""Module 2: the gradient of broadcasting, a sum back down to the shape of the input that was broadcast.

A binary op broadcasts its inputs to one shape (``(3, 1)`` and ``(1, 4)`` give ``(3, 4)``), and
its backward returns each input's gradient in that output shape. The engine then hands each
gradient to the input's ``_match_grad`` (``tensor_variable.py``), which calls ``_sum_to_shape`` to
bring it to the input's own shape (stage 2.4). So no op's backward needs a line about broadcasting.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, Tuple

from .movement import View
from .reductions import Sum

if TYPE_CHECKING:
    from ..tensor import Tensor

# The two operations used here, by the names the hints give them (ops.Sum, ops.View).
ops = SimpleNamespace(Sum=Sum, View=View)


def _sum_to_shape(g: Tensor, shape: Tuple[int, ...]) -> Tensor:
    """Sum g down to ``shape``, a shape that broadcasts to g's: the adjoint of broadcasting.

    An input broadcast along a dimension was read once for every position of it, so its gradient is
    the sum of the gradients of all those positions.
    """
    # BEGIN SOLUTION 2.4
    # HINT: sum (keeping the dims: ops.Sum.apply(g, dims, True)) over g's leading dimensions that
    # shape lacks and over those where shape has size 1 and g does not; then view as shape.
    extra = g.dims - len(shape)
    dims = tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape) if n == 1 and g.shape[extra + i] != 1)
    return ops.View.apply(ops.Sum.apply(g, dims, True), shape)
    # END SOLUTION 2.4
