"""Module 3 (speed): SGD's step for Tensors of the compiled backends, as numpy arithmetic on their storages.

``SGD._update`` (``sgd.py``) moves a parameter with tensor operations: ``value.sub_(g, alpha=lr)``
is an in-place Function with its checks and two kernel calls, and momentum adds two more, for
every parameter at every step (about a sixth of a small network's training step). Here the same
arithmetic, in the same order (so the same values to the bit, ``tests/module3/test_sgd_arrays.py``),
runs on numpy views of the storages, and the value's version counter moves as ``sub_`` would move
it. The simple backend, Scalars, and tensors that are not one contiguous block of memory take
``sgd.py``'s step, which is what a student reads.
"""

from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from ..extension import extends
from .sgd import SGD

__all__ = ["Arrays", "storage_view"]

_taught_update = SGD._update

if TYPE_CHECKING:
    _Methods = SGD  # (the type checker reads these methods as SGD's own)
else:
    _Methods = object


@extends(SGD)
class Arrays(_Methods):
    """SGD's ``_update`` on numpy views of the storages, where there are such views."""

    fast = True  # False: every parameter takes sgd.py's step (the tests compare the two)

    def _update(self, p: Any, value: Any, group: dict) -> None:
        grad = value.grad
        if not self.fast or getattr(value, "backend", None) is None or value.backend.name == "simple":
            return _taught_update(self, p, value, group)
        v, g = storage_view(value), storage_view(grad)
        state = self.state.get(p, {}) if group["momentum"] != 0.0 else {}
        buffer = state.get("momentum_buffer")
        b = None if buffer is None else storage_view(buffer)
        if v is None or g is None or (buffer is not None and b is None) or g.shape != v.shape:
            return _taught_update(self, p, value, group)
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        if group["weight_decay"] != 0.0:
            g = g + v * group["weight_decay"]
        if momentum != 0.0:
            if buffer is None:
                buffer = value.new_zeros(value.shape)  # (its first value is g itself, as _copy's)
                b = storage_view(buffer)
                assert b is not None  # a fresh tensor is one contiguous block
                b[...] = g
                self.state.setdefault(p, {})["momentum_buffer"] = buffer
            else:
                assert b is not None  # (else the taught step ran above)
                b *= momentum
                b += g if dampening == 0.0 else g * (1.0 - dampening)
                buffer._bump_version()
            g = g + b * momentum if group["nesterov"] else b
        v += g * -lr
        value._bump_version()


def storage_view(t: Any) -> Optional[np.ndarray]:
    """The tensor's elements as a writable numpy array over its storage (None if they are not one
    contiguous block of an in-memory storage)."""
    d = t._data
    if not isinstance(d.storage, np.ndarray) or not d.is_contiguous():
        return None
    return d.storage[d.offset : d.offset + d.size].reshape(d.shape)
