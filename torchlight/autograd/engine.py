"""Module 5: what PyTorch's ``backward`` adds to module 1's walk (``graph.backpropagate``).

The walk stays the one in ``graph.py``; this file gives it a pass (``EnginePass``) that does more
at each node: a Function with several outputs runs its backward once, with all of their
gradients; saved values are freed as soon as they are used (unless ``retain_graph``); the backward
pass is recorded as a graph of its own (``create_graph``, for higher-order gradients); and
gradients can be returned for chosen ``inputs`` instead of accumulated into leaves. Several roots
at once (``autograd.grad`` of several outputs) hang under one extra node, as PyTorch's GraphRoot.
"""

from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ..extension import extends
from .function import Context, Function, History
from .graph import BackwardPass, backpropagate, topological_sort
from .variable import Variable


class EnginePass(BackwardPass):
    """A backward pass with PyTorch's options."""

    def __init__(
        self,
        root: Variable,
        retain_graph: bool = True,
        create_graph: bool = False,
        inputs: Optional[Sequence[Variable]] = None,
    ):
        self.root = root
        self.retain_graph = retain_graph
        self.create_graph = create_graph
        # unique_id -> gradient, for the inputs whose gradients are returned (None: accumulate)
        self.wanted: Optional[Dict[int, Any]] = None if inputs is None else {v.unique_id: None for v in inputs}
        self.slots: Dict[int, list] = {}  # id(History) -> gradients of its outputs, while gathered
        self.left: Optional[Dict[int, int]] = None  # id(History) -> outputs not yet reached

    def leaf(self, node: Variable, d: Any) -> None:
        if self.wanted is None:
            super().leaf(node, d)
        elif node.unique_id in self.wanted:
            self.wanted[node.unique_id] = d

    def chain_rule(self, node: Variable, d: Optional[Any]) -> Iterable[Tuple[Variable, Any]]:
        if self.wanted is not None and node.unique_id in self.wanted:
            self.wanted[node.unique_id] = d
        h = node.history
        if h.num_outputs == 1:
            if d is None:
                return ()
            pairs = h.chain_rule([d])
        else:
            grads = self._gather(node, d)
            if grads is None:
                return ()
            pairs = h.chain_rule(grads)
        if not self.retain_graph:
            h.ctx._free()
        return pairs

    def _gather(self, node: Variable, d: Optional[Any]) -> Optional[list]:
        """The gradients of all outputs of ``node``'s Function once the last of them has been
        reached (every output comes before the Function's inputs in the walk), else None."""
        h = node.history
        if self.left is None:  # counted once, on the first Function with several outputs
            self.left = {}
            for v in topological_sort(self.root):
                if v.history.num_outputs > 1:
                    self.left[id(v.history)] = self.left.get(id(v.history), 0) + 1
        key = id(h)
        grads = self.slots.setdefault(key, [None] * h.num_outputs)
        grads[node._output_nr] = d
        self.left[key] -= 1
        if self.left[key]:
            return None
        del self.slots[key]
        return None if all(g is None for g in grads) else grads

    def gradients(self, inputs: Sequence[Variable]) -> List[Any]:
        """The gradients gathered for ``inputs`` (None for one the walk did not reach)."""
        assert self.wanted is not None
        return [self.wanted[v.unique_id] for v in inputs]


@extends(BackwardPass)
class _EngineMake:
    @classmethod
    def make(cls, root: Variable, retain_graph: bool = True, create_graph: bool = False) -> BackwardPass:
        """The pass ``Tensor.backward`` runs: this module's, with ``retain_graph`` and ``create_graph``."""
        return EnginePass(root, retain_graph, create_graph)


class _GraphRoot(Function):
    """The node above several roots: its backward hands each root its starting gradient."""

    @staticmethod
    def forward(ctx, *roots):
        return 0.0

    @staticmethod
    def backward(ctx, d):
        return ctx.derivs


class _Root(Variable):
    """The variable made by ``_GraphRoot``: the walk's start when there are several roots."""

    def __init__(self, roots: Sequence[Variable], derivs: Sequence[Any]):
        ctx = Context()
        ctx.derivs = tuple(derivs)
        self.history = History(_GraphRoot, ctx, roots)
        self._output_nr = 0
        self.unique_id = Variable._next_id()
        self.grad = None


def run_backward(
    roots: Sequence[Variable],
    derivs: Sequence[Any],
    retain_graph: bool = True,
    create_graph: bool = False,
    inputs: Optional[Sequence[Variable]] = None,
) -> Optional[List[Any]]:
    """Backpropagate ``derivs`` from ``roots``. With ``inputs``, return their gradients instead of
    accumulating into leaves."""
    if len(roots) == 1:
        root, deriv = roots[0], derivs[0]
    else:
        root, deriv = _Root(roots, derivs), 1.0
    visit = EnginePass(root, retain_graph, create_graph, inputs)
    backpropagate(root, deriv, visit)
    return None if inputs is None else visit.gradients(inputs)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: Optional[bool] = None,
    create_graph: bool = False,
    allow_unused: bool = False,
):
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated into .grad).

    :param outputs: a Variable, or a sequence of them, to differentiate.
    :param inputs: a Variable, or a sequence of them, to differentiate with respect to.
    :param grad_outputs: the gradient of the final result with respect to each output (None: ones, for
        one-element outputs).
    :param retain_graph: keep the graph's saved values for another backward (default: create_graph).
    :param create_graph: record the backward pass, so that the gradients can be differentiated again.
    :param allow_unused: give None for an input the outputs do not depend on, instead of raising.
    :returns: one gradient per input (a tuple; one value for a single input).
    :raises RuntimeError: when an output or input does not require grad, or grad_outputs does not match.
    """
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
