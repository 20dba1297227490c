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
FONT_SIZE = 9  # points, of every box's text
COLUMN_GAP = 0.55  # inches between the widest boxes of two columns: room for an arrow
ROW_GAP = 0.3  # inches between the tallest boxes of two rows
MARGIN = 0.15  # inches around the drawing
TITLE_HEIGHT = 0.45  # inches above it for a title


def draw_graph(
    variable: Variable,
    ax: Any = None,
    label: Optional[Callable[[Variable], str]] = None,
    title: Optional[str] = None,
) -> Any:
    """Draw the graph that computed ``variable``; return the matplotlib Figure.

    Without ``ax`` the figure grows with the graph: each column is as wide as its widest box and
    each row as tall as the tallest box, measured at the font size the boxes are drawn in, so no two
    boxes overlap however many nodes there are (a 50-node graph is about 25 inches wide). On a
    given ``ax`` the same layout is scaled to fit it.

    :param variable: the Scalar or Tensor whose graph is drawn: it and every value it was computed from.
    :param ax: the Axes to draw on (default: a new figure sized to the graph).
    :param label: a function from a value to its box's text (default: ``value_label``).
    :param title: a title above the graph.
    :returns: the Figure drawn on.
    """
    import matplotlib.pyplot as plt  # here, so that importing torchlight does not load pyplot

    nodes, edges = _graph(variable)
    where = _layout(nodes, edges)
    label = label or value_label
    own_figure = ax is None
    if ax is None:
        _, ax = plt.subplots()
    fig = ax.figure

    boxes = {}
    for key, (kind, obj) in nodes.items():
        if kind == "fn":
            text, style, colour = obj.__name__, "round4,pad=0.35", FUNCTION
        else:
            text, style = label(obj), "round,pad=0.35"
            colour = CONSTANT if kind == "const" else LEAF if obj.history.last_fn is None else RESULT
        boxes[key] = ax.text(
            0.0,
            0.0,
            text,
            ha="center",
            va="center",
            fontsize=FONT_SIZE,
            bbox=dict(boxstyle=style, fc=colour, ec="grey"),
        )
    # Every box's size in inches, from its text as the renderer lays it out (the pad of 0.35 font
    # sizes on each side included), so that the layout below leaves room for the real boxes.
    renderer = fig.canvas.get_renderer()
    pad = 2 * 0.35 * FONT_SIZE / 72.0
    size = {}
    for key, box in boxes.items():
        extent = box.get_window_extent(renderer)
        size[key] = (extent.width / fig.dpi + pad, extent.height / fig.dpi + pad)
    columns = 1 + max(col for col, _ in where.values())
    width = [max((size[k][0] for k, (c, _) in where.items() if c == col), default=0.0) for col in range(columns)]
    pitch = max(h for _, h in size.values()) + ROW_GAP  # one row, in inches
    left = np.concatenate([[0.0], np.cumsum(np.array(width) + COLUMN_GAP)])
    centre = {key: (left[col] + width[col] / 2, -row * pitch) for key, (col, row) in where.items()}
    for key, box in boxes.items():
        box.set_position(centre[key])

    for a, b in edges:
        (xa, ya), (xb, yb) = centre[a], centre[b]
        # An arrow that skips columns bends, so that it does not run through the boxes between.
        bend = 0.0 if where[b][0] - where[a][0] <= 1 else 0.25 if where[a][1] >= where[b][1] else -0.25
        ax.annotate(
            "",
            xy=(xb, yb),
            xytext=(xa, ya),
            arrowprops=dict(
                arrowstyle="-|>",
                color="dimgrey",
                lw=1.1,
                connectionstyle=f"arc3,rad={bend}",
                patchA=boxes[a].get_bbox_patch(),
                patchB=boxes[b].get_bbox_patch(),
            ),
        )
    ys = [y for _, y in centre.values()]
    x0, x1 = -MARGIN, left[-1] - COLUMN_GAP + MARGIN
    y0, y1 = min(ys) - pitch / 2 - MARGIN, max(ys) + pitch / 2 + MARGIN
    if title:
        heading = ax.set_title(title)
        # A title wider than the graph widens the drawing (centred), so that it is not cut off.
        spare = heading.get_window_extent(renderer).width / fig.dpi + 2 * MARGIN - (x1 - x0)
        if spare > 0:
            x0, x1 = x0 - spare / 2, x1 + spare / 2
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.axis("off")
    if own_figure:
        # Data units are inches: the axes fill the figure, with room above for the title.
        top = TITLE_HEIGHT if title else 0.0
        fig.set_size_inches(x1 - x0, y1 - y0 + top)
        fig.subplots_adjust(left=0.0, right=1.0, bottom=0.0, top=(y1 - y0) / (y1 - y0 + top))
    return fig


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
    """Name (if any), value (a number, or a tensor's shape) and gradient (if any).

    :param v: a Scalar or Tensor.
    """
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
