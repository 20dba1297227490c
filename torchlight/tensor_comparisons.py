"""Module 2: Tensor's comparisons: ``<``, ``>``, ``<=``, ``>=``, ``==``, ``!=`` and ``is_close``.

Each compares elementwise, broadcasting as arithmetic does, through the Functions ``LT``, ``GT``,
``EQ`` and ``IsClose`` of ``ops/elementwise.py``, and gives 1.0 where it holds, else 0.0, in a
result that does not require grad, as PyTorch's comparisons; the operators label it bool (int64
and bool tensors hold whole numbers as float64, labelled). A Tensor that defines ``==`` still
hashes by identity (``__hash__``), so tensors can be dict keys and set members, as in PyTorch.

The methods are attached to ``Tensor`` (``tensor.py``) when this file is imported
(``@extends(Tensor)``, ``extension.py``; ``import torchlight`` imports it), so the class that
modules 1 and 2 read holds their arithmetic.
"""

import numbers
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from .extension import extends
from .ops.elementwise import EQ, GT, LT, IsClose
from .tensor import Tensor, _as_bool

__all__ = ["Comparisons"]

if TYPE_CHECKING:
    _Methods = Tensor  # (the type checker reads these methods as Tensor's own)
else:
    _Methods = object


@extends(Tensor)
class Comparisons(_Methods):
    """Tensor's comparisons, elementwise, without gradient."""

    def __lt__(self, b: Any) -> "Tensor":
        return _as_bool(LT.apply(self, self._lift(b)))

    def __gt__(self, b: Any) -> "Tensor":
        return _as_bool(GT.apply(self, self._lift(b)))

    def __le__(self, b: Any) -> "Tensor":
        # < or ==, never both (not 1 - (>), which would call nan <= 0 true)
        other = self._lift(b)
        return _as_bool(LT.apply(self, other) + EQ.apply(self, other))

    def __ge__(self, b: Any) -> "Tensor":
        other = self._lift(b)
        return _as_bool(GT.apply(self, other) + EQ.apply(self, other))

    def __eq__(self, b: Any) -> "Tensor":  # type: ignore[override]
        equal = self._equal(b)
        return NotImplemented if equal is None else _as_bool(equal)

    def __ne__(self, b: Any) -> "Tensor":  # type: ignore[override]
        equal = self._equal(b)
        return NotImplemented if equal is None else _as_bool(1.0 - equal)

    def _equal(self, b: Any) -> Optional["Tensor"]:
        """1.0 where self equals b elementwise, else 0.0; None for a b that == does not compare with.

        As PyTorch, == compares elementwise with a tensor, a number, a numpy array (of numbers) and
        a complex number, which equals a real value only where its imaginary part is 0. Anything
        else (a list, a string, None) is not a tensor's equal: Python's own == answers False.
        """
        if isinstance(b, (Tensor, numbers.Real)):
            return EQ.apply(self, self._lift(b))
        if isinstance(b, np.ndarray) and b.dtype.kind in "biufc":
            b = b.astype(np.complex128 if b.dtype.kind == "c" else np.float64)
        elif not isinstance(b, numbers.Complex):
            return None
        equal = EQ.apply(self, self._constant(np.asarray(np.real(b), dtype=np.float64)))
        imaginary = np.imag(b) != 0
        if np.any(imaginary):  # equal nowhere a complex value is off the real line
            equal = equal * self._constant(np.asarray(~imaginary, dtype=np.float64))
        return equal

    __hash__ = object.__hash__  # (defining __eq__ would otherwise make tensors unhashable)

    def is_close(self, b: Any) -> "Tensor":
        """1.0 where |self - b| < 1e-2, else 0.0 (no gradient)."""
        return IsClose.apply(self, self._lift(b))
