"""The module pages' pictures, drawn by torchlight itself at every build (so they show what it does).

Each function draws one figure with matplotlib and returns it as PNG bytes; ``draw_all`` gives
them by file name, which the pages use as ``../pictures/<name>``.
"""

import io
from pathlib import Path
from typing import Callable, Dict

import matplotlib

matplotlib.use("Agg")  # no display: the build runs headless

import matplotlib.pyplot as plt
import numpy as np

import torchlight
from torchlight import autograd, datasets

__all__ = ["draw_all"]


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


def toy_datasets() -> bytes:
    """Module 0: the six toy sets, 100 seeded points each, coloured by label."""
    fig, axes = plt.subplots(2, 3, figsize=(7.5, 5))
    for ax, name in zip(axes.flat, ["simple", "diag", "split", "xor", "circle", "spiral"], strict=True):
        graph = getattr(datasets, name)(100)
        points, labels = np.asarray(graph.X), np.asarray(graph.y)
        ax.scatter(points[:, 0], points[:, 1], c=labels, cmap="coolwarm", s=10, edgecolors="none")
        ax.set_title(name)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_aspect("equal")
    return _png(fig)


def scalar_graph() -> bytes:
    """Module 1: the graph that ``z = relu(x * y + x)`` records, after ``z.backward()``."""
    x, y = torchlight.Scalar(2.0, name="x"), torchlight.Scalar(-0.5, name="y")
    z = (x * y + x).relu()
    z.name = "z"
    z.backward()
    return _png(torchlight.draw_graph(z, title="z = relu(x * y + x), after z.backward()"))


def strides() -> bytes:
    """Module 2: one storage, two views. A (2, 3) tensor has strides (3, 1); its transpose (1, 3)."""
    fig, axes = plt.subplots(1, 3, figsize=(11, 2.6), gridspec_kw={"width_ratios": [6, 3, 2]})
    colours = plt.get_cmap("Pastel1").colors
    storage, left, right = axes

    def cell(ax, x, y, value, colour):
        ax.add_patch(plt.Rectangle((x, y), 1, 1, fc=colour, ec="grey"))
        ax.text(x + 0.5, y + 0.5, str(value), ha="center", va="center", fontsize=12)

    for i in range(6):
        cell(storage, i, 0, i, colours[i])
        storage.text(i + 0.5, -0.35, f"[{i}]", ha="center", va="center", fontsize=9, color="dimgrey")
    storage.set_title("storage: 6 floats, in one flat array")
    for r in range(2):
        for c in range(3):
            cell(left, c, 1 - r, 3 * r + c, colours[3 * r + c])
            cell(right, r, 2 - c, 3 * r + c, colours[3 * r + c])
    left.set_title("shape (2, 3), strides (3, 1)\nposition = 3 * i + 1 * j")
    right.set_title("permute(1, 0): shape (3, 2)\nstrides (1, 3), no copy")
    for ax, (w, h) in zip(axes, [(6, 1), (3, 2), (2, 3)], strict=True):
        ax.set_xlim(-0.2, w + 0.2)
        ax.set_ylim(-0.6, h + 0.2)
        ax.set_aspect("equal")
        ax.axis("off")
    return _png(fig)


def blocked_matmul() -> bytes:
    """Module 3: a blocked matrix multiply: one block of C from a row panel of A and a column panel of B."""
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.2))
    n, b = 8, 2
    for ax, name in zip(axes, ["A (row panel)", "B (column panel)", "C = A @ B (one block)"], strict=True):
        ax.set_xlim(0, n)
        ax.set_ylim(0, n)
        ax.set_aspect("equal")
        ax.set_xticks(range(0, n + 1, b))
        ax.set_yticks(range(0, n + 1, b))
        ax.tick_params(labelbottom=False, labelleft=False, length=0)
        ax.grid(True, color="lightgrey")
        ax.set_title(name)
    row, col = 4, 2  # the block of C at rows 4-5, columns 2-3 (counted from the top)
    axes[0].add_patch(plt.Rectangle((0, n - row - b), n, b, fc="#fbe8cc", ec="darkorange"))
    axes[1].add_patch(plt.Rectangle((col, 0), b, n, fc="#dbe9f7", ec="steelblue"))
    axes[2].add_patch(plt.Rectangle((col, n - row - b), b, b, fc="#dff0d8", ec="seagreen"))
    for k in range(0, n, b):  # the k-blocks a thread walks, one pair at a time
        axes[0].add_patch(plt.Rectangle((k, n - row - b), b, b, fill=False, ec="darkorange", lw=1.5))
        axes[1].add_patch(plt.Rectangle((col, n - k - b), b, b, fill=False, ec="steelblue", lw=1.5))
    fig.suptitle("each thread owns blocks of C and sums block products of A and B that fit in cache")
    return _png(fig)


def digits() -> bytes:
    """Module 4: the UCI digits shipped with torchlight (8x8 images): the first two of each class."""
    data = datasets.Digits(train=True)
    images, labels = np.asarray(data.data), np.asarray(data.targets)
    fig, axes = plt.subplots(2, 10, figsize=(10, 2.4))
    for digit in range(10):
        for row, index in enumerate(np.flatnonzero(labels == digit)[:2]):
            ax = axes[row, digit]
            ax.imshow(images[index], cmap="gray_r", vmin=0, vmax=1)
            ax.axis("off")
            if row == 0:
                ax.set_title(str(digit))
    return _png(fig)


def double_backward() -> bytes:
    """Module 5: the graph of a gradient: dy/dx of y = x ** 3 with create_graph=True."""
    x = torchlight.tensor(2.0, requires_grad=True)
    y = x**3
    (dx,) = autograd.grad(y, x, create_graph=True)
    return _png(torchlight.draw_graph(dx, title="dy/dx of y = x ** 3, recorded (create_graph=True)"))


PICTURES: Dict[str, Callable[[], bytes]] = {
    "toy_datasets.png": toy_datasets,
    "scalar_graph.png": scalar_graph,
    "strides.png": strides,
    "blocked_matmul.png": blocked_matmul,
    "digits.png": digits,
    "double_backward.png": double_backward,
}


def draw_all(root: Path) -> Dict[str, bytes]:
    """Every picture, by file name."""
    return {name: draw() for name, draw in PICTURES.items()}
