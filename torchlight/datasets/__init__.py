"""Data sets: toy 2-D problems (module 0) and real data for the networks of module 4.

- ``toy.py``: ``simple, diag, split, xor, circle, spiral`` (n seeded points in the unit square),
  ``TOY`` and ``get(name)``.
- ``digits.py``: ``Digits``, the UCI 8x8 handwritten digits, shipped inside the package.
- ``mnist.py``: ``MNIST`` and ``FashionMNIST`` from their IDX files (read by ``idx.read_idx``),
  downloaded with ``download=True``.
- ``signals.py``: ``Waveforms``, generated 1-D signals for conv1d.

The image and signal sets follow torchvision's interface: ``.data``, ``.targets``, ``len()`` and
items ``(tensor with a channel dimension, int label)``. docs/datasets.md describes them all.
"""

from .digits import Digits
from .idx import read_idx
from .mnist import MNIST, FashionMNIST
from .signals import Waveforms
from .toy import TOY, Graph, circle, diag, get, simple, spiral, split, xor

__all__ = [
    "Graph",
    "simple",
    "diag",
    "split",
    "xor",
    "circle",
    "spiral",
    "TOY",
    "get",
    "Digits",
    "MNIST",
    "FashionMNIST",
    "Waveforms",
    "read_idx",
]
