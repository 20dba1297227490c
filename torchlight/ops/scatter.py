"""Module 5: ``scatter`` and ``scatter_add``, gather's inverse: write (or add) values along a dimension
at positions given by an index tensor, as PyTorch's ``scatter_``, ``scatter``, ``scatter_add_`` and
``scatter_add``. For dim 0 of a 2-D tensor, ``self[index[i][j]][j] = src[i][j]``; for dim 1,
``self[i][index[i][j]] = src[i][j]``; only the part of ``src`` as large as ``index`` is used.

Nothing new is computed here: the index gives the row-major positions of the elements written
(``scatter_positions``), and module 5's ``SetItemAt`` writes values at such positions (the Function
behind ``x[[0, 2]] = v``), so ``scatter_`` is in place, bumps the version counter and has its
gradients and tangents: to self where it was not written, to src where it was. ``scatter_add_`` is
``self.add_(...)`` of module 4's ``Put``, which adds values at positions (a position picked twice
gets both). The out-of-place forms work on a clone.

Where index picks one position twice, ``scatter`` keeps the last value written, in index's
row-major order, and only that value gets a gradient there (PyTorch leaves that order unspecified).
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, Optional, Tuple

import numpy as np

from .. import dtypes
from ..tensor_data import normalize_dim
from . import inplace as I
from .advanced_index import Put

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_positions"]


def _shape(t: Tensor) -> Tuple[int, ...]:
    """t's shape, a 0-d tensor counting as 1-D with one element (as PyTorch's scatter counts it)."""
    return t.shape if t.dims else (1,)


def scatter_positions(
    name: str, self: Tensor, dim: int, index: Tensor, src: Optional[Tensor] = None
) -> Tuple[int, np.ndarray]:
    """(dim, row-major positions in self of the elements that index writes, in index's shape), with
    PyTorch's checks: an integer index (here also whole-number floats) with as many dimensions as
    self, no larger than self apart from ``dim`` nor than src, its values in ``[0, self.size(dim))``."""
    if not hasattr(index, "_data"):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._dtype is dtypes.bool_:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    shape, ishape = _shape(self), _shape(index)
    dim = normalize_dim(dim, max(self.dims, 1))
    if len(ishape) != len(shape):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    sshape = None if src is None else _shape(src)
    if sshape is not None and len(sshape) != len(shape):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if any(
        (d != dim and ishape[d] > shape[d]) or (sshape is not None and ishape[d] > sshape[d]) for d in range(len(shape))
    ):
        also = f" and to be no larger size than src {list(sshape)}" if sshape is not None else ""
        raise RuntimeError(
            f"Expected index {list(ishape)} to be no larger than self {list(shape)} apart from dimension {dim}{also}"
        )
    values = index.detach().to_numpy().reshape(ishape)
    if not np.all(np.isfinite(values) & (values == np.round(values))):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index (got values that are not whole numbers)")
    values = values.astype(np.int64)
    outside = (values < 0) | (values >= shape[dim])
    if outside.any():
        bad = int(values[outside][0])
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {shape[dim]}")
    coords = list(np.indices(ishape, dtype=np.int64))
    coords[dim] = values
    return dim, np.ravel_multi_index(tuple(coords), shape)


def _source(name: str, self: Tensor, index: Tensor, src: Any, value: Any) -> Tuple[Any, bool]:
    """(what is written: src, or value as a number; whether it is a tensor), from PyTorch's two
    forms ``scatter_(dim, index, src)`` and ``scatter_(dim, index, value)``."""
    if src is not None and value is not None:
        raise TypeError(f"{name}() takes either src (a Tensor) or value (a number), not both")
    given = src if src is not None else value
    if given is None:
        raise TypeError(f"{name}() missing the values to write: src (a Tensor) or value (a number)")
    if hasattr(given, "_data") or hasattr(given, "value"):  # a Tensor, or an nn.Parameter standing for one
        return self._lift(given), True
    if isinstance(given, numbers.Number) and not isinstance(given, complex):
        return given, False
    raise TypeError(f"{name}(): src must be a Tensor or value a number, got {type(given).__name__}")


def _region(src: Tensor, index: Tensor) -> Tensor:
    """The part of src as large as index (a 0-d src or index counting as 1-D)."""
    src = src if src.dims else src.view(1)
    key = tuple(slice(0, n) for n in _shape(index))
    part = src[key]
    return part if index.dims else part.view(1)


def scatter_(
    self: Tensor, dim: int, index: Tensor, src: Any = None, value: Any = None, *, reduce: Optional[str] = None
) -> Tensor:
    """Write src's values (or the number value) into self along ``dim`` at ``index``; returns self.

    ``reduce="add"`` adds them instead (``scatter_add_``); ``"multiply"`` is not supported here.
    """
    given, is_tensor = _source("scatter_", self, index, src, value)
    if reduce is not None:
        if reduce == "add":
            return scatter_add_(self, dim, index, given if is_tensor else self._lift(given).expand(_shape(index)))
        if reduce == "multiply":
            raise NotImplementedError("scatter_(reduce='multiply') is not supported by torchlight; use reduce='add'")
        raise RuntimeError("reduce argument must be either add or multiply.")
    _, positions = scatter_positions("scatter_", self, dim, index, given if is_tensor else None)
    written = _region(given, index) if is_tensor else given
    return I.inplace(I.SetItemAt, self, positions, self._written(written))


def scatter(
    input: Tensor, dim: int, index: Tensor, src: Any = None, value: Any = None, *, reduce: Optional[str] = None
) -> Tensor:
    """A copy of input with src's values (or value) written along ``dim`` at ``index`` (``scatter_``).

    :param input: the tensor copied.
    :param dim: the dimension that index picks along.
    :param index: an int64 tensor: where each value goes along dim.
    :param src: a tensor of the values (or give value).
    :param value: one number for every position (or give src).
    :param reduce: ``"add"``: add to what is there (None: replace; ``"multiply"`` is not supported).
    """
    return scatter_(input.clone(), dim, index, src, value, reduce=reduce)


def scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """Add src's values into self along ``dim`` at ``index``; a position picked twice gets both.
    Returns self."""
    src, is_tensor = _source("scatter_add_", self, index, src, None)
    if not is_tensor:
        raise TypeError(f"scatter_add_(): argument 'src' must be Tensor, not {type(src).__name__}")
    _, positions = scatter_positions("scatter_add_", self, dim, index, src)
    added = Put.apply(_region(src, index), _shape(self), positions)
    return self.add_(added if self.dims else added.view(()))


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy of input with src's values added along ``dim`` at ``index`` (``scatter_add_``).

    :param input: the tensor copied.
    :param dim: the dimension that index picks along.
    :param index: an int64 tensor: where each value goes along dim.
    :param src: a tensor of the values.
    """
    return scatter_add_(input.clone(), dim, index, src)
