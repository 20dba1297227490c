"""Data sets: the 2-D toy problems of the first networks (module 0, ``toy.py``).

``from torchlight import datasets; datasets.xor(100)``: every name is re-exported here.
"""

from .toy import TOY, Graph, circle, diag, get, simple, spiral, split, xor

__all__ = ["Graph", "simple", "diag", "split", "xor", "circle", "spiral", "TOY", "get"]
