"""Module 5: Tensor's in-place operations: ``t[key] = value``, ``add_``, ``sub_``, ``mul_``, ``div_``,
``fill_``, ``zero_``, ``copy_``, ``scatter_`` and ``scatter_add_`` (with their out-of-place forms
``scatter`` and ``scatter_add``, ``ops/scatter.py``), and the operators ``+=``, ``-=``, ``*=`` and ``/=``.

Each writes into the tensor's own storage, returns the tensor itself and bumps its version
counter. The Functions that do the writing, and the checks that keep a backward from reading a
value changed since, are in ``ops/inplace.py``; this file gives them Tensor's method names. The
methods are attached to ``Tensor`` (``tensor.py``, module 2) when this file is imported
(``@extends(Tensor)``, ``extension.py``), so module 2's Tensor reads without them.
"""

from __future__ import annotations

import builtins
import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from .extension import extends
from .ops import advanced_index
from .ops import inplace as I
from .ops import scatter as S
from .tensor import _BOOL, _FLOAT64, _INT64, Tensor
from .tensor_data import broadcasts_to

__all__ = ["InPlace"]

if TYPE_CHECKING:
    _Methods = Tensor  # (the type checker reads these methods as Tensor's own)
else:
    _Methods = object


@extends(Tensor)
class InPlace(_Methods):
    """Tensor's in-place methods: each returns self, changed, and bumps its version."""

    def __setitem__(self, key: Any, value: Any) -> None:
        """Write value (a number or a tensor that broadcasts to ``self[key]``) into ``self[key]``;
        the key may pick elements by lists, ranges, tensors or masks too (``x[x < 0] = 0``)."""
        if advanced_index.is_advanced(key):
            I.inplace(I.SetItemAt, self, advanced_index.positions(self.shape, key), self._written(value))
        else:
            I.inplace(I.SetItem, self, key, self._written(value))

    def add_(self, other: Any, alpha: float = 1.0) -> "Tensor":
        """self += alpha * other, in place (other broadcasts to self's shape)."""
        return I.inplace(I.AddInplace, self, self._operand(other, alpha, "add_"), alpha=float(alpha))

    def sub_(self, other: Any, alpha: float = 1.0) -> "Tensor":
        """self -= alpha * other, in place."""
        return I.inplace(I.AddInplace, self, self._operand(other, alpha, "sub_"), alpha=-float(alpha))

    def mul_(self, other: Any) -> "Tensor":
        """self *= other, in place."""
        return I.mul_(self, self._operand(other, 1, "mul_"))

    def div_(self, other: Any) -> "Tensor":
        """self /= other, in place."""
        return I.inplace(I.DivInplace, self, self._operand(other, 1.0, "div_"))

    def fill_(self, value: Any) -> "Tensor":
        """Set every element to value (a number or a 0-d tensor), in place."""
        return I.inplace(I.Fill, self, self._written(value))

    def zero_(self) -> "Tensor":
        """Set every element to 0, in place."""
        return I.inplace(I.Fill, self, self._lift(0.0))

    def scatter_(
        self, dim: int, index: "Tensor", src: Any = None, value: Any = None, *, reduce: Any = None
    ) -> "Tensor":
        """Write src's values (or the number value) along ``dim`` at the positions ``index`` gives,
        in place, as PyTorch: for dim 0, ``self[index[i][j]][j] = src[i][j]``. Returns self."""
        return S.scatter_(self, dim, index, src, value, reduce=reduce)

    def scatter(self, dim: int, index: "Tensor", src: Any = None, value: Any = None, *, reduce: Any = None) -> "Tensor":
        """A copy of self with src's values (or value) written along ``dim`` at ``index`` (``scatter_``)."""
        return S.scatter(self, dim, index, src, value, reduce=reduce)

    def scatter_add_(self, dim: int, index: "Tensor", src: "Tensor") -> "Tensor":
        """Add src's values along ``dim`` at ``index``, in place (a position picked twice gets both)."""
        return S.scatter_add_(self, dim, index, src)

    def scatter_add(self, dim: int, index: "Tensor", src: "Tensor") -> "Tensor":
        """A copy of self with src's values added along ``dim`` at ``index`` (``scatter_add_``)."""
        return S.scatter_add(self, dim, index, src)

    def copy_(self, src: Any, non_blocking: builtins.bool = False) -> "Tensor":
        """Write src's values (broadcast to self's shape, from any backend) into self; returns self."""
        if isinstance(src, Tensor):
            if not broadcasts_to(src.shape, self.shape):
                raise RuntimeError(
                    f"copy_(): the source's shape {list(src.shape)} does not broadcast to the tensor's "
                    f"{list(self.shape)}"
                )
            if src.backend is not self.backend:
                src = src.to(self.backend)
        return I.inplace(I.SetItem, self, Ellipsis, self._written(src))

    def _written(self, value: Any) -> "Tensor":
        """value as it is written into this tensor: converted to its dtype, as PyTorch does."""
        value = self._lift(value)
        return value if self._dtype is _FLOAT64 else value._cast(self._dtype)

    def _operand(self, other: Any, alpha: Any, op: str) -> "Tensor":
        """other as the operand of an in-place ``op`` on self. An int64 or bool tensor keeps its
        dtype, so a result it cannot hold (a fraction, or a count in a bool) is refused, as PyTorch
        refuses it."""
        if self._dtype is not _FLOAT64:
            kinds = [_kind(other), _BOOL if alpha == 1 else _kind(alpha), _FLOAT64 if op == "div_" else _BOOL]
            result = max(kinds, key=_RANKS.index)
            if _RANKS.index(result) > _RANKS.index(self._dtype):
                raise RuntimeError(
                    f"result type {_NAMES[result]} can't be cast to the desired output type {_NAMES[self._dtype]} "
                    f"(in-place {op} on a {self._dtype} tensor)"
                )
        return self._lift(other)

    # PyTorch's in-place operators: w -= lr * w.grad changes w itself (in no_grad, for a leaf)
    def __iadd__(self, other: Any) -> "Tensor":
        return self.add_(other)

    def __isub__(self, other: Any) -> "Tensor":
        return self.sub_(other)

    def __imul__(self, other: Any) -> "Tensor":
        return self.mul_(other)

    def __itruediv__(self, other: Any) -> "Tensor":
        return self.div_(other)


_RANKS = [_BOOL, _INT64, _FLOAT64]  # bool < int64 < float64: what each can hold
_NAMES = {_BOOL: "Bool", _INT64: "Long", _FLOAT64: "Float"}


def _kind(x: Any) -> dtypes.dtype:
    """The dtype PyTorch would give a value in arithmetic: a tensor's own, bool, int64 or float."""
    if isinstance(x, Tensor):
        return x._dtype
    if isinstance(x, (builtins.bool, np.bool_)):
        return _BOOL
    if isinstance(x, numbers.Integral):
        return _INT64
    return _FLOAT64
