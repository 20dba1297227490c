"""Module 3 (speed): Tensor's ``-``, ``/`` and ``tanh`` as the single fused Functions of ``ops/fused.py``.

Module 2 composes them of primitives (``tensor.py``, ``ops/elementwise.py``): ``a - b`` is
``a + (-b)``, ``a / b`` is ``a * inv(b)`` and ``tanh(a)`` is ``2 * sigmoid(2a) - 1``, two to four
operations and graph nodes each. ``ops/fused.py`` computes each in one, with the same values and
gradients (tests/module3/test_fused.py), and this file makes Tensor's methods use them: it
replaces the five methods that ``tensor.py`` marks ``@extension_point`` when it is imported
(``import torchlight`` imports it). The composed versions stay in ``ops/elementwise.py``.

(``ops/fused.py`` cannot do this itself: ``tensor.py`` imports ``ops``, whose ``__init__.py``
imports ``fused.py``, so ``fused.py`` importing ``tensor.py`` would go round in a circle.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .extension import extends
from .ops.fused import Div, Sub, Tanh
from .tensor import Tensor

__all__ = ["Fused"]

if TYPE_CHECKING:
    _Methods = Tensor  # (the type checker reads these methods as Tensor's own)
else:
    _Methods = object


@extends(Tensor)
class Fused(_Methods):
    """Tensor's ``-``, ``/`` and ``tanh``, one Function each."""

    def __sub__(self, b: Any) -> Tensor:
        return Sub.apply(self, self._lift(b))

    def __rsub__(self, b: Any) -> Tensor:
        return Sub.apply(self._lift(b), self)

    def __truediv__(self, b: Any) -> Tensor:
        return Div.apply(self, self._lift(b))

    def __rtruediv__(self, b: Any) -> Tensor:
        return Div.apply(self._lift(b), self)

    def tanh(self) -> Tensor:
        """Hyperbolic tangent, elementwise (fused; composed: ``ops.tanh``)."""
        return Tanh.apply(self)
