"""Module 2: the index arithmetic, by its former name: it lives beside tensor_data, in ``torchlight/indexing.py``.

This name is kept so that older imports (``from torchlight.backends import indexing``) still work."""

from ..indexing import broadcast_index, index_to_position, to_index

__all__ = ["broadcast_index", "index_to_position", "to_index"]
