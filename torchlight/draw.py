"""Modules 1 and 2: a picture of a computation graph, drawn with matplotlib.

``draw_graph(v)`` draws every value that ``v`` was computed from (Scalars or Tensors) and the
Functions that computed them, left to right in the order the data flows:

- a box for each value: blue for leaves, orange for results, grey for constants;
- a rounded green node for each application of a Function, labelled with its name (``Mul``);
- an arrow from each input to the Function, and from the Function to its output.

It reads only what the engine records: ``v.history.last_fn``, ``v.history.inputs`` and
``v.parents``, so it needs nothing but matplotlib (no graphviz).
"""

import numbers
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from .autograd.graph import topological_sort
from .autograd.variable import Variable

LEAF, RESULT, CONSTANT, FUNCTION = "#dbe9f7", "#fbe8cc", "#eeeeee", "#dff0d8"


def draw_graph(
    variable: Variable,
    ax: Any = None,
    label: Optional[Callable[[Variable], str]] = None,
    title: Optional[str] = None,
) -> Any:
    """Draw the graph that computed ``variable``; return the matplotlib Figure.

    ``ax``: the Axes to draw on (default: a new figure sized to the graph).
    ``label``: a function from a value to its box's text (default: ``value_label``).
    """
    import matplotlib.pyplot as plt  # here, so that importing torchlight does not load pyplot

    nodes, edges = _graph(variable)
    where = _layout(nodes, edges)
    columns = 1 + max(col for col, _ in where.values())
    rows = 1 + 2 * max(abs(row) for _, row in where.values())
    if ax is None:
        _, ax = plt.subplots(figsize=(min(2.0 + 1.7 * columns, 18.0), min(1.0 + 1.1 * rows, 12.0)))
    label = label or value_label

    boxes = {}
    for key, (kind, obj) in nodes.items():
        x, y = where[key]
        if kind == "fn":
            text, style, colour = obj.__name__, "round4,pad=0.35", FUNCTION
        else:
            text, style = label(obj), "round,pad=0.35"
            colour = CONSTANT if kind == "const" else LEAF if obj.history.last_fn is None else RESULT
        boxes[key] = ax.text(
            1.8 * x,
            -y,
            text,
            ha="center",
            va="center",
            fontsize=9,
            bbox=dict(boxstyle=style, fc=colour, ec="grey"),
        )
    for a, b in edges:
        (xa, ya), (xb, yb) = where[a], where[b]
        # An arrow that skips columns bends, so that it does not run through the boxes between.
        bend = 0.0 if xb - xa <= 1 else 0.25 if ya >= yb else -0.25
        ax.annotate(
            "",
            xy=(1.8 * xb, -yb),
            xytext=(1.8 * xa, -ya),
            arrowprops=dict(
                arrowstyle="-|>",
                color="dimgrey",
                lw=1.1,
                connectionstyle=f"arc3,rad={bend}",
                patchA=boxes[a].get_bbox_patch(),
                patchB=boxes[b].get_bbox_patch(),
            ),
        )
    ys = [-y for _, y in where.values()]
    ax.set_xlim(-1.0, 1.8 * (columns - 1) + 1.0)
    ax.set_ylim(min(ys) - 0.8, max(ys) + 0.8)
    ax.axis("off")
    if title:
        ax.set_title(title)
    return ax.figure


def _graph(variable: Variable) -> Tuple[Dict[int, Tuple[str, Any]], List[Tuple[int, int]]]:
    """Nodes (key -> (kind, object)) and edges (key, key) in data-flow order.

    Values are keyed by ``id``; a Function application by the ``id`` of its History, which all
    outputs of one application share.
    """
    nodes: Dict[int, Tuple[str, Any]] = {}
    edges: List[Tuple[int, int]] = []
    for v in topological_sort(variable):
        h = v.history
        fn_key = id(h)
        if h.last_fn is not None and fn_key not in nodes:
            # parents: the non-constant inputs as they were when used (see Variable.parents).
            parents = iter(v.parents)
            for x in h.inputs:
                if not isinstance(x, Variable):
                    continue  # a plain argument, such as a dimension
                if x.history is None:
                    nodes.setdefault(id(x), ("const", x))
                else:
                    x = next(parents, x)
                edges.append((id(x), fn_key))
            nodes[fn_key] = ("fn", h.last_fn)
        # Every node comes after its inputs, so that the layout can take them in this order.
        nodes[id(v)] = ("value", v)
        if h.last_fn is not None:
            edges.append((fn_key, id(v)))
    return nodes, edges


def _layout(nodes: Dict[int, Tuple[str, Any]], edges: List[Tuple[int, int]]) -> Dict[int, Tuple[int, float]]:
    """(column, row) of every node: column = longest path from a source, rows centred."""
    inputs: Dict[int, List[int]] = {key: [] for key in nodes}
    users: Dict[int, List[int]] = {key: [] for key in nodes}
    for a, b in edges:
        inputs[b].append(a)
        users[a].append(b)
    column: Dict[int, int] = {}
    for key in nodes:  # data-flow order: a node's inputs have their columns already
        column[key] = 1 + max((column[a] for a in inputs[key]), default=-1)
    for key, (kind, _) in nodes.items():  # a constant sits just before its first user
        if kind == "const":
            column[key] = min(column[b] for b in users[key]) - 1
    by_column: Dict[int, List[int]] = {}
    for key in nodes:
        by_column.setdefault(column[key], []).append(key)
    where: Dict[int, Tuple[int, float]] = {}
    for col in sorted(by_column):
        members = by_column[col]
        # Order a column by where its inputs are, which keeps most arrows from crossing.
        members.sort(key=lambda k: np.mean([where[a][1] for a in inputs[k] if a in where] or [0.0]))
        for row, key in enumerate(members):
            where[key] = (col, row - (len(members) - 1) / 2)
    return where


def value_label(v: Variable) -> str:
    """Name (if any), value (a number, or a tensor's shape) and gradient (if any)."""
    lines = []
    name = getattr(v, "name", None)
    if name:
        lines.append(str(name))
    if v.history is None:
        lines.append("constant")
    lines.append(_describe(v))
    if v.history is not None and getattr(v, "grad", None) is not None:
        lines.append("grad " + _describe(v.grad))
    return "\n".join(lines)


def _describe(x: Any) -> str:
    """A number, Scalar or 0-d tensor to 4 significant digits; any other tensor by its shape."""
    number = getattr(x, "data", x)  # a Scalar's float; a number stays itself
    if isinstance(number, numbers.Real):
        return f"{number:.4g}"
    return f"{x.item():.4g}" if x.shape == () else "shape " + str(tuple(x.shape))
