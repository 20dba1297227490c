"""Modules 0-4: data sets of small 2-D toy problems, for the first networks.

Each toy set is a function ``(n, seed=0) -> Graph`` of n points in the unit square with 0/1
labels. The same seed always gives the same points: each call draws from its own
``random.Random(seed)`` and never touches global random state.
"""

import math
import numbers
import random
from dataclasses import dataclass
from typing import Callable, Dict, List, Tuple

__all__ = ["Graph", "simple", "diag", "split", "xor", "circle", "spiral", "TOY", "get"]


@dataclass
class Graph:
    """A labelled 2-D point set: ``X[i] = (x1, x2)`` has label ``y[i]`` (0 or 1)."""

    n: int
    X: List[Tuple[float, float]]
    y: List[int]

    @property
    def N(self) -> int:
        """The number of points (MiniTorch's spelling of ``n``)."""
        return self.n

    def __len__(self) -> int:
        return self.n


def _check(fn_name: str, n: object, seed: object) -> None:
    # bool is an int subclass, but circle(True) is surely a mistake.
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(f"{fn_name}(n): n is the number of points and must be an int, got {type(n).__name__} {n!r}")
    if n <= 0:
        raise ValueError(f"{fn_name}(n): n is the number of points and must be positive, got {n}")
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool):
        raise TypeError(f"{fn_name}(n, seed): seed must be an int, got {type(seed).__name__} {seed!r}")


def _labelled(fn_name: str, n: int, seed: int, label: Callable[[float, float], bool]) -> Graph:
    """n uniform points in [0, 1)^2, labelled 1 where ``label(x1, x2)`` holds, else 0.

    A Graph of the points as (x1, x2) tuples of floats and their labels as the ints 0 and 1. The
    points are drawn from their own ``random.Random(seed)``: the same seed gives the same points,
    and Python's global random state is left as it was.
    """
    _check(fn_name, n, seed)
    # BEGIN SOLUTION 0.4: draw n seeded points and label them
    rng = random.Random(seed)
    X = [(rng.random(), rng.random()) for _ in range(n)]
    y = [1 if label(x1, x2) else 0 for x1, x2 in X]
    return Graph(n, X, y)
    # END SOLUTION 0.4


def simple(n: int, seed: int = 0) -> Graph:
    """Left half (x1 < 0.5) is class 1: one vertical line separates the classes.

    :param n: how many points.
    :param seed: the seed the points are drawn with.
    :returns: a Graph: ``n``, ``X`` (n points in the unit square) and ``y`` (n labels, 0 or 1).
    """
    return _labelled("simple", n, seed, lambda x1, x2: x1 < 0.5)


def diag(n: int, seed: int = 0) -> Graph:
    """The corner below the diagonal x1 + x2 < 0.5 is class 1: one slanted line separates them.

    :param n: how many points.
    :param seed: the seed the points are drawn with.
    :returns: a Graph: ``n``, ``X`` (n points in the unit square) and ``y`` (n labels, 0 or 1).
    """
    return _labelled("diag", n, seed, lambda x1, x2: x1 + x2 < 0.5)


def split(n: int, seed: int = 0) -> Graph:
    """Both outer strips (x1 < 0.2 or x1 > 0.8) are class 1: needs two lines, so a hidden layer.

    :param n: how many points.
    :param seed: the seed the points are drawn with.
    :returns: a Graph: ``n``, ``X`` (n points in the unit square) and ``y`` (n labels, 0 or 1).
    """
    return _labelled("split", n, seed, lambda x1, x2: x1 < 0.2 or x1 > 0.8)


def xor(n: int, seed: int = 0) -> Graph:
    """Top-left and bottom-right quadrants are class 1: the classic problem no single line solves.

    That is, exactly one of x1 and x2 is below 0.5 (x2 points up; 0.5 itself is not below).

    :param n: how many points.
    :param seed: the seed the points are drawn with.
    :returns: a Graph: ``n``, ``X`` (n points in the unit square) and ``y`` (n labels, 0 or 1).
    """
    # BEGIN SOLUTION 0.4
    return _labelled("xor", n, seed, lambda x1, x2: (x1 < 0.5) != (x2 < 0.5))
    # END SOLUTION 0.4


def circle(n: int, seed: int = 0) -> Graph:
    """Points outside the circle of radius sqrt(0.1) around (0.5, 0.5) are class 1 (on it: 0).

    :param n: how many points.
    :param seed: the seed the points are drawn with.
    :returns: a Graph: ``n``, ``X`` (n points in the unit square) and ``y`` (n labels, 0 or 1).
    """
    # BEGIN SOLUTION 0.4
    return _labelled("circle", n, seed, lambda x1, x2: (x1 - 0.5) ** 2 + (x2 - 0.5) ** 2 > 0.1)
    # END SOLUTION 0.4


def spiral(n: int, seed: int = 0) -> Graph:
    """Two interleaved spiral arms around (0.5, 0.5), one per class; point i has class i % 2.

    Each arm turns 1.5 times while its radius grows from 0.05 to 0.45, so every point lies
    inside the unit square; a little noise makes seeds differ.

    :param n: how many points.
    :param seed: the seed the points are drawn with.
    :returns: a Graph: ``n``, ``X`` (n points in the unit square) and ``y`` (n labels, 0 or 1).
    """
    _check("spiral", n, seed)
    rng = random.Random(seed)
    X, y = [], []
    for i in range(n):
        cls = i % 2
        t = rng.random()  # how far along the arm
        radius = 0.05 + 0.4 * t
        angle = 3.0 * math.pi * t + cls * math.pi  # the second arm is the first turned half a circle
        x1 = 0.5 + radius * math.cos(angle) + rng.gauss(0.0, 0.01)
        x2 = 0.5 + radius * math.sin(angle) + rng.gauss(0.0, 0.01)
        X.append((min(max(x1, 0.0), 1.0), min(max(x2, 0.0), 1.0)))
        y.append(cls)
    return Graph(n, X, y)


TOY: Dict[str, Callable[..., Graph]] = {
    "simple": simple,
    "diag": diag,
    "split": split,
    "xor": xor,
    "circle": circle,
    "spiral": spiral,
}


def get(name: str) -> Callable[..., Graph]:
    """The toy data set function called ``name`` (one of ``TOY``'s keys).

    :param name: one of ``TOY``'s keys.
    :raises ValueError: for any other name.
    """
    try:
        return TOY[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown data set {name!r}; choose one of: {', '.join(TOY)}") from None
