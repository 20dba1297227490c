"""Module 5: the graph as PyTorch shows it: ``next_functions``.

A non-leaf tensor's ``history`` (module 1) is the node of the Function that made it, what PyTorch
calls its ``grad_fn`` (torchlight's ``grad_fn`` is the Function class, the course contract's).
PyTorch lets a program walk the graph from there: ``next_functions`` holds, for each tensor
input of the node, the pair ``(node, index)``, where node is the input's own ``grad_fn`` (and
index which of that node's outputs the input is), an ``AccumulateGrad`` node for a leaf that
requires grad (its ``variable`` is the leaf), or None for an input without history. Arguments that
are not tensors (a dimension, a shape) have no entry, as in PyTorch. This file attaches
``next_functions`` to ``History`` (``@extends``, extension.py); the engine itself walks
``History.input_nodes`` and never reads it.
"""

from typing import TYPE_CHECKING, Any, Optional, Tuple

from ..extension import extends
from .function import History
from .variable import Variable

__all__ = ["AccumulateGrad"]


class AccumulateGrad:
    """The node of a leaf that requires grad: backward adds the gradient into ``variable.grad``."""

    next_functions: Tuple[Any, ...] = ()

    def __init__(self, variable: Variable):
        self.variable = variable

    def name(self) -> str:
        return "AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


if TYPE_CHECKING:
    _Base = History
else:
    _Base = object


@extends(History)
class _PyTorchNode(_Base):
    @property
    def next_functions(self) -> Tuple[Tuple[Optional[Any], int], ...]:
        """``(node, index)`` for each tensor input: its grad_fn, an AccumulateGrad for a leaf, or None."""
        pairs = []
        for x, node in zip(self.inputs, self.input_nodes(), strict=True):
            if isinstance(x, Variable):
                pairs.append(_node_of(node))
        return tuple(pairs)


def _node_of(v: Optional[Variable]) -> Tuple[Optional[Any], int]:
    """The (node, index) pair that stands for input ``v`` (as recorded) in ``next_functions``."""
    if v is None:
        return None, 0
    h = v.history
    if h.last_fn is not None:
        return h, v._output_nr
    node = h.__dict__.get("_accumulate_grad")  # one node per leaf, as PyTorch keeps it
    if node is None or node.variable is not v:
        node = h._accumulate_grad = AccumulateGrad(v)
    return node, 0
