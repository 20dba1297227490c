"""Module 4: pictures of a classifier's training run: curves, confusion matrix, its mistakes.

Drawn as ``plots.py`` draws: matplotlib's object API on an Agg canvas (no pyplot), so nothing
here changes the global backend or needs a display. Inputs are numpy arrays: images (N, C, H, W)
or (N, H, W), signals (N, 1, L) or (N, L).
"""

from pathlib import Path
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .plots import PathLike, _save, figure


def plot_curves(
    train_losses: Sequence[float],
    test_losses: Sequence[float],
    train_accuracies: Sequence[float],
    test_accuracies: Sequence[float],
    path: PathLike,
) -> Path:
    """Save the loss and the accuracy (0..1) per epoch, training and test, side by side, as a PNG."""
    n = len(train_losses)
    if n == 0 or any(len(s) != n for s in (test_losses, train_accuracies, test_accuracies)):
        raise ValueError(
            "plot_curves needs one value per epoch in each series, got "
            f"{[len(s) for s in (train_losses, test_losses, train_accuracies, test_accuracies)]}"
        )
    fig = figure((9, 3.5))
    epochs = range(1, n + 1)
    left, right = fig.subplots(1, 2)
    marker = "o" if n < 30 else None  # a single epoch is still visible as a dot
    left.plot(epochs, train_losses, color="tab:red", marker=marker, label="train")
    left.plot(epochs, test_losses, color="tab:red", linestyle="--", marker=marker, label="test")
    left.set(xlabel="epoch", ylabel="cross-entropy", title="loss")
    left.legend()
    right.plot(epochs, [100.0 * a for a in train_accuracies], color="tab:blue", marker=marker, label="train")
    test_percent = [100.0 * a for a in test_accuracies]
    right.plot(epochs, test_percent, color="tab:blue", linestyle="--", marker=marker, label="test")
    right.set(xlabel="epoch", ylabel="accuracy (%)", title="accuracy", ylim=(0, 101))
    right.legend(loc="lower right")
    fig.tight_layout()
    return _save(fig, path)


def confusion_matrix(labels: ArrayLike, predictions: ArrayLike, classes: int) -> np.ndarray:
    """counts[i, j]: how many examples of class i were predicted as class j."""
    true, predicted = np.asarray(labels, dtype=np.int64), np.asarray(predictions, dtype=np.int64)
    if true.shape != predicted.shape or true.ndim != 1:
        raise ValueError(
            f"confusion_matrix needs one prediction per label, got shapes {true.shape} and {predicted.shape}"
        )
    for name, values in (("labels", true), ("predictions", predicted)):
        if values.size and not (0 <= values.min() and values.max() < classes):
            raise ValueError(
                f"confusion_matrix: {name} must lie in 0..{classes - 1}, got {values.min()}..{values.max()}"
            )
    counts = np.zeros((classes, classes), dtype=np.int64)
    np.add.at(counts, (true, predicted), 1)
    return counts


def plot_confusion(labels: ArrayLike, predictions: ArrayLike, classes: Sequence[str], path: PathLike) -> Path:
    """Save the confusion matrix (true class down, predicted class across), each cell's count written in it."""
    counts = confusion_matrix(labels, predictions, len(classes))
    k = len(classes)
    fig = figure((1.0 + 0.5 * k, 0.6 + 0.5 * k))
    ax = fig.subplots()
    ax.imshow(counts, cmap="Blues")
    for i in range(k):
        for j in range(k):
            if counts[i, j]:
                color = "white" if counts[i, j] > counts.max() / 2 else "black"
                ax.text(j, i, str(counts[i, j]), ha="center", va="center", fontsize=8, color=color)
    names = [_short(c) for c in classes]
    ax.set_xticks(range(k), names, rotation=45 if max(map(len, names)) > 2 else 0)
    ax.set_yticks(range(k), names)
    accuracy = np.trace(counts) / max(counts.sum(), 1)
    ax.set(xlabel="predicted", ylabel="true", title=f"confusion matrix (test accuracy {100 * accuracy:.1f}%)")
    fig.tight_layout()
    return _save(fig, path)


def plot_misclassified(
    inputs: ArrayLike,
    labels: ArrayLike,
    predictions: ArrayLike,
    classes: Sequence[str],
    path: PathLike,
    limit: int = 24,
) -> Path:
    """Save a grid of the first ``limit`` test examples the model got wrong, each titled
    'predicted (true)'; images are drawn as pictures, 1-D signals as curves."""
    examples, true, predicted = np.asarray(inputs), np.asarray(labels), np.asarray(predictions)
    if not (len(examples) == len(true) == len(predicted)):
        raise ValueError(
            f"plot_misclassified needs one label and one prediction per input, got {len(examples)} inputs, "
            f"{len(true)} labels, {len(predicted)} predictions"
        )
    wrong = np.flatnonzero(true != predicted)[:limit]
    columns = 8
    rows = max(1, -(-len(wrong) // columns))
    fig = figure((1.3 * columns, 1.45 * rows + 0.5))
    axes = fig.subplots(rows, columns, squeeze=False)
    for ax in axes.flat:
        ax.set_axis_off()
    for ax, i in zip(axes.flat, wrong, strict=False):  # the grid may have more cells than examples
        example = examples[i]
        if example.ndim == 3:  # (C, H, W): show the first channel
            example = example[0]
        if example.ndim == 2 and example.shape[0] > 1:
            ax.imshow(example, cmap="gray_r", vmin=0.0, vmax=max(1.0, float(example.max())))
        else:  # a signal, (1, L) or (L,)
            ax.plot(example.reshape(-1), color="tab:blue", linewidth=0.8)
        ax.set_title(f"{_short(classes[predicted[i]])} ({_short(classes[true[i]])})", fontsize=8, color="tab:red")
    shown = f"the first {len(wrong)}" if len(wrong) else "none"
    total = int(np.sum(true != predicted))
    fig.suptitle(f"misclassified test examples: predicted (true); {total} in all, {shown} shown", fontsize=9)
    fig.tight_layout()
    return _save(fig, path)


def _short(name: str) -> str:
    """A class name for a small label: MNIST's '0 - zero' as '0'."""
    return str(name).split(" - ")[0]
