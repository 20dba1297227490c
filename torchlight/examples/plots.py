"""Module 4: pictures of a training run: loss and accuracy curves, and a model's decision boundary.

Shared by every training script, so a model is given as a plain function
``(x1, x2) -> probability of class 1``. Figures are drawn with matplotlib's object API
(no pyplot), so nothing here changes the global backend or needs a display.
"""

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence, Tuple, Union

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PathLike = Union[str, Path]


def figure(figsize: Tuple[float, float]) -> "Figure":
    """A new matplotlib Figure on its own Agg canvas. matplotlib is imported here, when the first
    picture is drawn, so that a training script's ``--help`` (and its mistakes) answer at once."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig


def plot_history(losses: Sequence[float], accuracies: Sequence[float], path: PathLike) -> Path:
    """Save the loss and the training accuracy (0..1) per epoch, side by side, as a PNG."""
    if len(losses) == 0 or len(losses) != len(accuracies):
        raise ValueError(
            f"plot_history needs one loss and one accuracy per epoch, got {len(losses)} and {len(accuracies)}"
        )
    fig = figure((9, 3.5))
    epochs = range(1, len(losses) + 1)
    left, right = fig.subplots(1, 2)
    left.plot(epochs, losses, color="tab:red")
    left.set(xlabel="epoch", ylabel="loss", title="training loss")
    right.plot(epochs, [100.0 * a for a in accuracies], color="tab:blue")
    right.set(xlabel="epoch", ylabel="accuracy (%)", title="training accuracy", ylim=(0, 101))
    fig.tight_layout()
    return _save(fig, path)


def plot_boundary(
    predict: Callable[..., Any],  # (x1, x2) -> probability; batched: [(x1, x2), ...] -> probabilities
    X: Sequence[Tuple[float, float]],
    y: Sequence[int],
    path: PathLike,
    resolution: int = 40,
    title: str = "decision boundary",
    batched: bool = False,
) -> Path:
    """Save the model's probability over the unit square, its 0.5 contour and the labelled points.

    With ``batched=True``, ``predict`` takes the list of all grid points ``[(x1, x2), ...]`` at
    once and returns their probabilities: one forward pass for a tensor model.
    """
    if resolution < 2:
        raise ValueError(f"plot_boundary needs resolution >= 2, got {resolution}")
    # Grid cell centres: one call of predict per cell, so any model that maps a point to a
    # probability can be drawn.
    ticks = [(i + 0.5) / resolution for i in range(resolution)]
    if batched:
        flat = [float(p) for p in predict([(x1, x2) for x2 in ticks for x1 in ticks])]
        if len(flat) != resolution * resolution:
            raise ValueError(
                f"plot_boundary: predict gave {len(flat)} probabilities for {resolution * resolution} grid points"
            )
        grid = [flat[row * resolution : (row + 1) * resolution] for row in range(resolution)]
    else:
        grid = [[float(predict(x1, x2)) for x1 in ticks] for x2 in ticks]
    fig = figure((4.5, 4))
    ax = fig.subplots()
    shade = ax.contourf(ticks, ticks, grid, levels=[i / 10 for i in range(11)], cmap="RdBu_r", vmin=0.0, vmax=1.0)
    if min(map(min, grid)) < 0.5 < max(map(max, grid)):
        ax.contour(ticks, ticks, grid, levels=[0.5], colors="black", linewidths=1.0)
    fig.colorbar(shade, ax=ax, label="P(class 1)")
    colors = ["tab:blue" if label == 0 else "tab:red" for label in y]
    ax.scatter([p[0] for p in X], [p[1] for p in X], c=colors, edgecolors="white", linewidths=0.8, s=30)
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="x1", ylabel="x2", title=title)
    ax.set_aspect("equal")
    fig.tight_layout()
    return _save(fig, path)


def _save(fig: "Figure", path: PathLike) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    return path
