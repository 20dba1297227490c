"""Module 5: what module 5's engine asks of a Tensor: its version counter, its tangents, its description.

Module 1's engine needs only the members of the Variable protocol that ``tensor_variable.py``
(module 2) implements. Module 5 adds features that ask more of each value, and this file gives
Tensor its side of them, replacing the defaults that ``autograd/variable.py`` marks
``@extension_point``:

- ``_version`` and ``_bump_version``: how many times the tensor's storage was changed in place,
  shared by every view of it. ``autograd/inplace_tracking.py`` records the version of each value a
  backward saves, and refuses a backward that would read a value changed since.
- ``_match_tangent``: forward-mode AD (``autograd/forward_ad.py``) checks a Function's ``jvp``
  result with it, expanding a tangent that broadcasts to the output's shape.
- ``_describe``: a tensor as module 5's error messages name it ("Tensor of shape (2, 3)").

The members are attached to ``Tensor`` when this file is imported (``@extends(Tensor)``,
``extension.py``; ``import torchlight`` imports it), so module 2's Tensor reads without them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .extension import extends
from .tensor import Tensor
from .tensor_data import broadcasts_to

__all__ = ["EngineMembers"]

if TYPE_CHECKING:
    _Methods = Tensor  # (the type checker reads these methods as Tensor's own)
else:
    _Methods = object


@extends(Tensor)
class EngineMembers(_Methods):
    """Tensor's version counter, tangent check and description, for module 5's engine."""

    @property
    def _version(self) -> int:
        return self._data.version.value

    def _bump_version(self) -> None:
        self._data.version.value += 1

    def _match_tangent(self, t: Any, fn_name: str, index: int) -> "Tensor":
        """t in this tensor's shape: equal, or expanded from a shape that broadcasts to it (forward mode)."""
        if not isinstance(t, Tensor) or t.backend is not self.backend:
            what = type(t).__name__ if not isinstance(t, Tensor) else f"a Tensor on the '{t.backend.name}' backend"
            raise RuntimeError(
                f"function {fn_name} returned an invalid tangent at index {index}: expected a Tensor on "
                f"the '{self.backend.name}' backend, got {what}"
            )
        shape = self._data.shape
        if t._data.shape == shape:
            return t
        if not broadcasts_to(t.shape, shape):
            raise RuntimeError(
                f"Function {fn_name} returned an invalid tangent at index {index} - got {list(t.shape)} "
                f"but expected shape {list(shape)} (or one that broadcasts to it)"
            )
        return t.expand(shape)

    def _describe(self) -> str:
        return f"Tensor of shape {self.shape}"
