"""Module 2: Tensor's conversions: its values as a numpy array, a Python number or text, and the
tensor on another backend.

``to_numpy`` and ``item`` read the values out (``_values`` as the tensor's dtype reads them: int64
and bool tensors hold whole numbers as float64, labelled), ``repr`` and ``bool`` are Python's
conversions, and ``to`` moves a tensor to another backend as an operation, so gradients flow back
through it. The way in, ``Tensor.from_numpy``, is construction and stays in ``tensor.py``.

The methods are attached to ``Tensor`` (``tensor.py``) when this file is imported
(``@extends(Tensor)``, ``extension.py``; ``import torchlight`` imports it), so the class that
modules 1 and 2 read holds their operations. Module 4 adds PyTorch's conversions (``numpy()``,
``tolist``, ``double``, ``to`` with devices and dtypes, ...) in ``tensor_pytorch.py``.
"""

from typing import TYPE_CHECKING, Any

import numpy as np

from . import backends
from .extension import extends, extension_point
from .ops.movement import To
from .tensor import _FLOAT64, Tensor, _backend

__all__ = ["Conversions"]

if TYPE_CHECKING:
    _Methods = Tensor  # (the type checker reads these methods as Tensor's own)
else:
    _Methods = object


@extends(Tensor)
class Conversions(_Methods):
    """Tensor's values as a numpy array, a Python number or text; the tensor on another backend."""

    def to_numpy(self) -> np.ndarray:
        """A new numpy array with this tensor's values."""
        return self._data.to_numpy()

    def item(self) -> float:
        """The value of a one-element tensor as a Python float."""
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        value = float(self._data.storage[self._data.offset])
        return value if self._dtype is _FLOAT64 else self._dtype.numpy(value).item()  # int or bool

    def _values(self) -> np.ndarray:
        """A new numpy array of the values, of this tensor's dtype (int64 and bool as numpy's)."""
        values = self.to_numpy()
        return values if self._dtype is _FLOAT64 else values.astype(self._dtype.numpy)

    @extension_point  # module 4 adds PyTorch's forms: devices, dtypes, copy= (tensor_pytorch.py)
    def to(self, backend: Any) -> "Tensor":
        """This tensor on another backend (a name such as "fast", or a TensorBackend): itself if it
        is there already. The move is an operation, so gradients flow back through it."""
        target = _backend(backend)
        return self if target is self.backend else self._keep(To.apply(self, target))

    def __repr__(self) -> str:
        values = np.array2string(self._values(), separator=", ", prefix="tensor(")
        extra = ""
        if self.history is not None:
            fn = self.history.last_fn
            extra = ", requires_grad=True" if fn is None else f", grad_fn=<{fn.name}>"
        if not backends.is_default(self.backend):
            extra += f", backend='{self.backend.name}'"
        return f"tensor({values}{extra})"

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous (shape {self.shape})")
        return bool(self.item())
