"""Module 1: ordering the graph and running the chain rule backwards through it."""

from typing import Any, Dict, List, Optional, Sequence

from .grad_mode import _Mode
from .variable import Variable


def topological_sort(variable: Variable) -> List[Variable]:
    """The non-constant variables that ``variable`` depends on, leaves first, root last, each once."""
    return _sort([variable])


def _sort(roots: Sequence[Variable]) -> List[Variable]:
    # Iterative depth-first search with an explicit stack: a chain 10,000 ops deep must not
    # hit Python's recursion limit. Postorder puts every node after all of its parents.
    order: List[Variable] = []
    seen = set()
    for root in roots:
        if root.history is None or root.unique_id in seen:
            continue
        seen.add(root.unique_id)
        stack = [(root, iter(root.parents))]
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


def backpropagate(variable: Variable, deriv: Any, retain_graph: bool = True, create_graph: bool = False) -> None:
    """Accumulate d(variable)/d(leaf) * deriv into ``.grad`` of every non-constant leaf.

    Calling it twice on the same graph adds the second result to the first, as PyTorch does with
    ``retain_graph=True``. With ``retain_graph=False`` each Function's saved values are freed as
    soon as its backward has run, so a second call raises.
    """
    run_backward([variable], [deriv], retain_graph=retain_graph, create_graph=create_graph)


def run_backward(
    roots: Sequence[Variable],
    derivs: Sequence[Any],
    retain_graph: bool,
    create_graph: bool,
    inputs: Optional[Sequence[Variable]] = None,
) -> Optional[List[Any]]:
    """The engine. With ``inputs``, return their gradients instead of accumulating into leaves."""
    order = _sort(roots)
    pending: Dict[int, Any] = {}
    for root, d in zip(roots, derivs):
        _add(pending, root.unique_id, d)
    wanted = None if inputs is None else {v.unique_id for v in inputs}
    found: Dict[int, Any] = {}

    # A Function with several outputs runs its backward once, with all of their gradients, when
    # the last of its outputs in the order has been reached (every output precedes the inputs).
    outputs_left: Dict[int, int] = {}
    for v in order:
        h = v.history
        if h.num_outputs > 1:
            outputs_left[id(h)] = outputs_left.get(id(h), 0) + 1
    slots: Dict[int, list] = {}

    prev, _Mode.enabled = _Mode.enabled, create_graph
    try:
        for v in reversed(order):
            d = pending.pop(v.unique_id, None)
            if wanted is not None and v.unique_id in wanted:
                found[v.unique_id] = d
            h = v.history
            if h.last_fn is None:
                if d is not None and wanted is None:
                    v.accumulate_derivative(d)
                continue
            if h.num_outputs == 1:
                if d is None:
                    continue
                grads = [d]
            else:
                key = id(h)
                grads = slots.get(key)
                if grads is None:
                    grads = slots[key] = [None] * h.num_outputs
                grads[v._output_nr] = d
                outputs_left[key] -= 1
                if outputs_left[key]:
                    continue
                del slots[key]
                if all(g is None for g in grads):
                    continue
            for parent, pd in h.chain_rule(grads):
                key = parent.unique_id
                old = pending.get(key)
                pending[key] = pd if old is None else old + pd
            if not retain_graph:
                h.ctx._free()
    finally:
        _Mode.enabled = prev
    if inputs is None:
        return None
    return [found.get(v.unique_id) for v in inputs]


def _add(pending: Dict[int, Any], key: int, d: Any) -> None:
    old = pending.get(key)
    pending[key] = d if old is None else old + d


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: Optional[bool] = None,
    create_graph: bool = False,
    allow_unused: bool = False,
):
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated into .grad)."""
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    single = not isinstance(inputs, (list, tuple))
    inputs = [inputs] if single else list(inputs)
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif not isinstance(grad_outputs, (list, tuple)):
        grad_outputs = [grad_outputs]
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(
            f"grad requires one grad_output per output: got {len(grad_outputs)} for {len(outputs)} outputs"
        )
    for i, out in enumerate(outputs):
        if not isinstance(out, Variable) or out.history is None:
            raise RuntimeError(
                f"element {i} of outputs does not require grad and does not have a grad_fn"
            )
    for i, inp in enumerate(inputs):
        if not isinstance(inp, Variable) or inp.history is None:
            raise RuntimeError(f"element {i} of inputs does not require grad (call requires_grad_() on it)")
    derivs = [out._default_grad() if g is None else g for out, g in zip(outputs, grad_outputs)]
    if retain_graph is None:
        retain_graph = create_graph
    result = run_backward(outputs, derivs, retain_graph, create_graph, inputs)
    for i, g in enumerate(result):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"One of the differentiated Tensors (input {i}) appears to not have been used in the "
                "graph. Set allow_unused=True if this is the desired behavior."
            )
    return tuple(result)
