"""Module 1: ordering the graph and running the chain rule backwards through it.

``backpropagate`` is the whole of reverse-mode AD: visit the graph from the output back to the
leaves, so that each node is reached only once all of its uses have given it their gradient, and
hand each node's gradient to its inputs with the chain rule. It is the one backward walk:
``Scalar.backward``, ``Tensor.backward`` and ``autograd.grad`` all run it. What it does at each
node is a ``BackwardPass``'s to say; module 5's engine (``engine.py``) extends that with what
PyTorch's ``backward`` adds (several roots, several outputs of one Function, freeing saved values,
``create_graph``, ``inputs=``).
"""

import threading
from typing import Any, Iterable, List, Optional, Tuple

from ..extension import extension_point
from .grad_mode import set_grad_enabled
from .variable import Variable

# Adding to a leaf's .grad reads it and writes it back; backward passes in several threads that
# reach one leaf take turns there (as PyTorch's engine does), or an update would be lost.
_ACCUMULATING = threading.RLock()


def topological_sort(variable: Variable) -> List[Variable]:
    """The non-constant variables that ``variable`` depends on, leaves first, root last, each once.

    Every node comes after all of its parents, and the same graph built twice is ordered the same
    way (an order that follows a set of ids would not be).

    :param variable: the root: the value whose graph is sorted.
    """
    # HINT: a node's inputs in the graph are ``node.parents``; tell nodes apart by ``node.unique_id``.
    # HINT: a chain 10,000 operations deep must not hit Python's recursion limit: keep your own stack.
    # BEGIN SOLUTION 1.4
    if variable.is_constant():
        return []
    # Depth-first, each node put in the order after all of its parents (postorder).
    order: List[Variable] = []
    seen = {variable.unique_id}
    stack = [(variable, iter(variable.parents))]
    while stack:
        node, parents = stack[-1]
        for p in parents:
            if p.unique_id not in seen:
                seen.add(p.unique_id)
                stack.append((p, iter(p.parents)))
                break
        else:
            stack.pop()
            order.append(node)
    return order
    # END SOLUTION 1.4


class BackwardPass:
    """What one run of ``backpropagate`` does at each node: add a leaf's derivative to its
    ``.grad``; hand an inner node's derivative to its inputs with the chain rule."""

    # Record the backward pass's own operations (for a gradient of a gradient: module 5).
    create_graph = False

    def leaf(self, node: Variable, d: Any) -> None:
        """A leaf (made by the user) reached with derivative d."""
        with _ACCUMULATING:
            node.accumulate_derivative(d)

    def chain_rule(self, node: Variable, d: Optional[Any]) -> Iterable[Tuple[Variable, Any]]:
        """(input, derivative) pairs for the inputs of an inner node reached with derivative d
        (None when no use of the node gave it one: then there are none)."""
        return () if d is None else node.chain_rule(d)

    @classmethod
    @extension_point
    def make(cls, root: Variable, retain_graph: bool = True, create_graph: bool = False) -> "BackwardPass":
        """The pass ``Tensor.backward`` runs from ``root``. Module 1 keeps the graph and records
        nothing; module 5's engine returns its own pass, which frees saved values and can record."""
        if create_graph:
            raise NotImplementedError("create_graph=True needs module 5's engine (torchlight.autograd.engine)")
        return cls()


def backpropagate(variable: Variable, deriv: Any, visit: Optional[BackwardPass] = None) -> None:
    """Accumulate d(variable)/d(leaf) * deriv into ``.grad`` of every non-constant leaf.

    Calling it twice on the same graph adds the second result to the first. ``visit`` says what
    happens at each node (default: a plain ``BackwardPass``).

    :param variable: the root: the value differentiated.
    :param deriv: the derivative of the final result with respect to variable.
    :param visit: what happens at each node (default: a plain BackwardPass).
    """
    # HINT: keep a dict from unique_id to the gradient gathered so far; a leaf's goes to
    # HINT: ``visit.leaf(node, d)``; another node's goes on with ``visit.chain_rule(node, d)``
    # HINT: (call it even when d is None, so that a pass can count the nodes it has seen).
    visit = BackwardPass() if visit is None else visit
    # The backward pass's own operations are not recorded, unless the pass asks for it.
    with set_grad_enabled(visit.create_graph):
        # BEGIN SOLUTION 1.4
        pending = {variable.unique_id: deriv}
        for node in reversed(topological_sort(variable)):
            d = pending.pop(node.unique_id, None)
            if node.history.last_fn is None:  # a leaf: made by the user, not by a Function
                if d is not None:
                    visit.leaf(node, d)
                continue
            for parent, d_parent in visit.chain_rule(node, d):
                key = parent.unique_id
                pending[key] = d_parent if key not in pending else pending[key] + d_parent
        # END SOLUTION 1.4
