"""Module 1: ordering the graph and running the chain rule backwards through it.

``backpropagate`` is the whole of reverse-mode AD: visit the graph from the output back to the
leaves, so that each node is reached only once all of its uses have given it their gradient, and
hand each node's gradient to its inputs with the chain rule. Module 5's ``engine.py`` extends it
to several outputs at once, freeing saved values, and recording the backward pass itself.
"""

from typing import Any, List

from .grad_mode import no_grad
from .variable import Variable


def topological_sort(variable: Variable) -> List[Variable]:
    """The non-constant variables that ``variable`` depends on, leaves first, root last, each once."""
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


def backpropagate(variable: Variable, deriv: Any) -> None:
    """Accumulate d(variable)/d(leaf) * deriv into ``.grad`` of every non-constant leaf.

    Calling it twice on the same graph adds the second result to the first.
    """
    # HINT: keep a dict from unique_id to the gradient gathered so far; leaves get
    # HINT: ``accumulate_derivative``, other nodes pass theirs on with ``chain_rule``.
    # The backward pass's own operations are not recorded (module 5's engine can record them).
    with no_grad():
        # BEGIN SOLUTION 1.4
        pending = {variable.unique_id: deriv}
        for node in reversed(topological_sort(variable)):
            d = pending.pop(node.unique_id, None)
            if d is None:
                continue
            if node.history.last_fn is None:  # a leaf: made by the user, not by a Function
                node.accumulate_derivative(d)
                continue
            for parent, d_parent in node.chain_rule(d):
                key = parent.unique_id
                pending[key] = d_parent if key not in pending else pending[key] + d_parent
        # END SOLUTION 1.4
