"""Module 5: the backward engine behind ``Tensor.backward`` and ``autograd.grad``.

It is module 1's ``backpropagate`` with what PyTorch's ``backward`` adds: several roots at once;
Functions with several outputs, whose backward runs once with all of their gradients; saved
values freed as soon as they are used (unless ``retain_graph``); the backward pass recorded as a
graph of its own (``create_graph``, for higher-order gradients); and gradients returned for chosen
``inputs`` instead of accumulated into leaves.
"""

from typing import Any, Dict, List, Optional, Sequence

from .grad_mode import _set_mode
from .graph import topological_sort
from .variable import Variable


def run_backward(
    roots: Sequence[Variable],
    derivs: Sequence[Any],
    retain_graph: bool = True,
    create_graph: bool = False,
    inputs: Optional[Sequence[Variable]] = None,
) -> Optional[List[Any]]:
    """Backpropagate ``derivs`` from ``roots``. With ``inputs``, return their gradients instead of
    accumulating into leaves."""
    order = _sort(roots)
    pending: Dict[int, Any] = {}
    for root, d in zip(roots, derivs, strict=True):
        key = root.unique_id
        pending[key] = d if key not in pending else pending[key] + d
    wanted = None if inputs is None else {v.unique_id: None for v in inputs}
    outputs = _OutputGradients(order)
    old = _set_mode(create_graph)
    try:
        for v in reversed(order):
            d = pending.pop(v.unique_id, None)
            if wanted is not None and v.unique_id in wanted:
                wanted[v.unique_id] = d
            h = v.history
            if h.last_fn is None:
                if d is not None and wanted is None:
                    v.accumulate_derivative(d)
                continue
            grads: Optional[list]
            if h.num_outputs == 1:
                if d is None:
                    continue
                grads = [d]
            else:
                grads = outputs.collect(v, d)
                if grads is None:
                    continue
            for parent, d_parent in h.chain_rule(grads):
                key = parent.unique_id
                pending[key] = d_parent if key not in pending else pending[key] + d_parent
            if not retain_graph:
                h.ctx._free()
    finally:
        _set_mode(*old)
    return None if inputs is None or wanted is None else [wanted[v.unique_id] for v in inputs]


def _sort(roots: Sequence[Variable]) -> List[Variable]:
    """A topological order of everything several roots depend on: each root's, without repeats.
    (Parents precede their users in each root's order, so also in the concatenation.)"""
    if len(roots) == 1:
        return topological_sort(roots[0])
    # BEGIN SOLUTION 5.3: one order for several roots (autograd.grad of several outputs)
    seen: set = set()
    order = []
    for root in roots:
        for v in topological_sort(root):
            if v.unique_id not in seen:
                seen.add(v.unique_id)
                order.append(v)
    return order
    # END SOLUTION 5.3


class _OutputGradients:
    """Gathers the gradients of a Function's several outputs: its backward runs once, when the
    last of them in the order has been reached (every output precedes the Function's inputs)."""

    def __init__(self, order: List[Variable]):
        self.left: Dict[int, int] = {}
        for v in order:
            h = v.history
            if h.num_outputs > 1:
                self.left[id(h)] = self.left.get(id(h), 0) + 1
        self.slots: Dict[int, list] = {}

    def collect(self, v: Variable, d: Any) -> Optional[list]:
        """The gradients to call backward with now, or None if that is not yet (or never) due."""
        h = v.history
        key = id(h)
        grads = self.slots.setdefault(key, [None] * h.num_outputs)
        grads[v._output_nr] = d
        self.left[key] -= 1
        if self.left[key]:
            return None
        del self.slots[key]
        return None if all(g is None for g in grads) else grads


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
            raise RuntimeError(f"element {i} of outputs does not require grad and does not have a grad_fn")
    for i, inp in enumerate(inputs):
        if not isinstance(inp, Variable) or inp.history is None:
            raise RuntimeError(f"element {i} of inputs does not require grad (call requires_grad_() on it)")
    derivs = [_grad_output(out, g, i) for i, (out, g) in enumerate(zip(outputs, grad_outputs, strict=True))]
    if retain_graph is None:
        retain_graph = create_graph
    result = run_backward(outputs, derivs, retain_graph, create_graph, inputs)
    assert result is not None  # run_backward returns the inputs' gradients when given inputs
    for i, g in enumerate(result):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"One of the differentiated Tensors (input {i}) appears to not have been used in the "
                "graph. Set allow_unused=True if this is the desired behavior."
            )
    return tuple(result)


def _grad_output(out: Variable, g: Any, i: int) -> Any:
    """``grad_outputs[i]`` checked against its output (None: the default, 1 for one element)."""
    if g is None:
        return out._default_grad()
    meta = out._grad_meta()  # a Tensor's shape and backend; None for a Scalar, whose gradient is a number
    if isinstance(g, Variable) and isinstance(g, type(out)):
        if g._grad_meta() != meta:
            raise RuntimeError(
                f"Mismatch in shape: grad_outputs[{i}] is a {g._describe()} and output {i} is a "
                f"{out._describe()} (on the same backend as the output)"
            )
        return g
    if meta is None and isinstance(g, (int, float)) and not isinstance(g, bool):
        return float(g)
    want = f"a {out._describe()}" if meta is not None else "a number"
    raise TypeError(f"grad: grad_outputs[{i}] must be {want} (or None), like output {i}; got {g!r}")
