"""torchlight.draw_graph: a picture of a Scalar's or a Tensor's computation graph (matplotlib only)."""

import matplotlib

matplotlib.use("Agg")  # no display needed

import matplotlib.pyplot as plt
import pytest

import torchlight
from torchlight import Scalar, draw_graph

pytestmark = pytest.mark.module2  # Scalars and Tensors: runs with module 2, graded by no stage

PNG = b"\x89PNG\r\n\x1a\n"


def labels(fig):
    """The text of every node (arrows are annotations without text)."""
    return [t.get_text() for t in fig.axes[0].texts if t.get_text()]


def test_a_scalar_graph_has_a_node_per_value_and_per_function(tmp_path):
    x, y = Scalar(2.0, name="x"), Scalar(-3.0, name="y")
    z = x * y + x.exp()
    z.backward()
    fig = draw_graph(z, title="z = x * y + exp(x)")
    try:
        text = labels(fig)
        # values: x, y, x * y, exp(x), z; Functions: Mul, Exp, Add
        assert len(text) == 8
        assert {"Mul", "Exp", "Add"} <= set(text)
        assert any(t.startswith("x\n2\ngrad 4.389") for t in text), text  # name, value, grad
        fig.savefig(tmp_path / "scalar.png")
        assert (tmp_path / "scalar.png").read_bytes()[:8] == PNG
    finally:
        plt.close(fig)


def test_a_tensor_graph_shows_shapes_constants_and_functions(tmp_path):
    a = torchlight.tensor([[1.0], [2.0], [3.0]], requires_grad=True)
    b = torchlight.tensor([[1.0, 10.0, 100.0, 1000.0]], requires_grad=True)
    out = (a * b * 2.0).sum()
    fig = draw_graph(out)
    try:
        text = labels(fig)
        # values: a, b, a * b, the constant 2, (a * b) * 2, the sum; Functions: Mul, Mul, Sum
        assert len(text) == 9
        assert text.count("Mul") == 2 and "Sum" in text
        assert "shape (3, 1)" in text and any(t.startswith("constant") for t in text)
        fig.savefig(tmp_path / "tensor.png")
        assert (tmp_path / "tensor.png").read_bytes()[:8] == PNG
    finally:
        plt.close(fig)


def test_draws_on_a_given_axes_with_custom_labels():
    x = Scalar(1.0, name="x")
    y = (x * x).log()
    fig, ax = plt.subplots()
    try:
        assert draw_graph(y, ax=ax, label=lambda v: f"id {v.unique_id}") is fig
        assert set(labels(fig)) == {f"id {v.unique_id}" for v in torchlight.autograd.topological_sort(y)} | {
            "Mul",
            "Log",
        }
    finally:
        plt.close(fig)


def test_a_value_used_twice_is_one_node():
    a = Scalar(2.0)
    fig = draw_graph(a * a + a)
    try:
        assert len(labels(fig)) == 5  # a, Mul, a * a, Add, the sum
    finally:
        plt.close(fig)


def _boxes(fig):
    """The window extent of every node's box, after drawing the figure."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return [t.get_bbox_patch().get_window_extent(renderer) for t in fig.axes[0].texts if t.get_text()]


def _a_wide_graph(leaves=8):
    """A graph of about 50 nodes, many in a column: products of neighbours, summed pairwise, then all."""
    xs = [Scalar(0.1 * (i + 1), name=f"x{i}") for i in range(leaves)]
    products = [xs[i] * xs[i + 1] for i in range(leaves - 1)]
    sums = [(products[i] + products[i + 1]).tanh() for i in range(len(products) - 1)]
    total = sums[0]
    for s in sums[1:]:
        total = total + s
    total.backward()
    return total


def test_fifty_nodes_do_not_overprint():
    fig = draw_graph(_a_wide_graph(), title="a graph of 50 nodes")
    try:
        boxes = _boxes(fig)
        assert len(boxes) >= 50, len(boxes)
        overlapping = [(i, j) for i in range(len(boxes)) for j in range(i) if boxes[i].overlaps(boxes[j])]
        assert not overlapping, f"{len(overlapping)} pairs of node labels overlap"
        # every box lies inside the figure (the figure grew with the graph rather than cropping it)
        inside = fig.bbox
        assert all(inside.x0 <= b.x0 and b.x1 <= inside.x1 and inside.y0 <= b.y0 and b.y1 <= inside.y1 for b in boxes)
    finally:
        plt.close(fig)


def test_the_module_2_network_graph_is_legible():
    # module 2's notebook: 2 inputs -> 10 ReLUs -> 1 output, binary cross-entropy (23 nodes or more)
    torchlight.manual_seed(0)
    x = torchlight.rand(4, 2)
    w1, w2 = torchlight.rand(2, 10, requires_grad=True), torchlight.rand(10, 1, requires_grad=True)
    out = ((x @ w1).relu() @ w2).sigmoid()
    loss = -(out.log() * 0.5 + (1.0 - out).log() * 0.5).mean()
    fig = draw_graph(loss)
    try:
        boxes = _boxes(fig)
        assert len(boxes) >= 15
        assert not [(i, j) for i in range(len(boxes)) for j in range(i) if boxes[i].overlaps(boxes[j])]
    finally:
        plt.close(fig)
