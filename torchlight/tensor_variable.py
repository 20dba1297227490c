"""Module 2: Tensor's side of the Variable protocol, what module 1's engine asks of a value.

The engine (``autograd/``) knows a value only through the members that ``autograd/variable.py``
lists; Scalar (module 1) defines them in its class, and this file gives Tensor its own:

- ``_forward_value`` and ``_wrap_output``: what a Function's forward receives for a Tensor input
  (the tensor itself), and which of its results are Tensors.
- ``_match_grad``: a gradient from a Function's backward, checked and brought to the input's shape:
  a gradient in the broadcast shape of the output is summed down (``_sum_to_shape``, stage 2.4,
  ``ops/broadcast.py``), so no op's backward needs a line about broadcasting.
- ``accumulate_derivative``: a leaf's ``.grad``, added to.
- ``_default_grad``, ``_grad_meta`` and ``_zero_grad``: the gradient ``backward()`` starts from, and
  a zero gradient for an output of a several-output Function that got none.
- ``_alias``: a new Tensor over the same data, without history.

They are attached to ``Tensor`` (``tensor.py``) when this file is imported (``@extends(Tensor)``,
``extension.py``; ``import torchlight`` imports it), filling in the members that ``Variable`` marks
``@extension_point``, so the class that modules 1 and 2 read holds Tensor's operations. Module 5's
engine asks a Tensor for more (its version counter, its tangents): ``tensor_autograd.py``.
"""

from typing import TYPE_CHECKING, Any, Optional

from .autograd.grad_mode import is_grad_enabled
from .autograd.variable import Variable
from .extension import extends
from .ops.broadcast import _sum_to_shape
from .tensor import Tensor
from .tensor_data import TensorData, broadcasts_to

__all__ = ["VariableMembers"]

if TYPE_CHECKING:
    _Methods = Tensor  # (the type checker reads these methods as Tensor's own)
else:
    _Methods = Variable  # (still a plain holder of members; through it, help() finds the protocol's docstrings)


@extends(Tensor)
class VariableMembers(_Methods):
    """Tensor's members of the Variable protocol: how module 1's engine reads and writes a Tensor."""

    def accumulate_derivative(self, d: "Tensor") -> None:
        """Add d to ``.grad`` (leaves that require grad only)."""
        if self.history is None or self.history.last_fn is not None:
            raise RuntimeError("accumulate_derivative is only for leaf tensors that require grad")
        if self.grad is not None:
            self.grad = self.grad + d
        elif is_grad_enabled():  # create_graph: the gradient keeps its own graph, as in PyTorch
            self.grad = d
        else:
            # A fresh copy: d may be shared (the same gradient reaches several leaves) or be a
            # broadcast view, and .grad is updated in place by optimizers.
            self.grad = d._new(d._data.contiguous())

    def _forward_value(self) -> "Tensor":
        return self

    @classmethod
    def _wrap_output(cls, raw: Any) -> Optional["Tensor"]:
        return raw if isinstance(raw, Tensor) else None

    def _match_grad(self, g: Any, fn_name: str, index: int) -> "Tensor":
        """g in this tensor's shape: equal, or summed down from a shape this one broadcasts to."""
        if not isinstance(g, Tensor):
            raise RuntimeError(
                f"function {fn_name} returned an invalid gradient at index {index}: expected a Tensor, "
                f"got {type(g).__name__}"
            )
        if g.backend is not self.backend:
            raise RuntimeError(
                f"function {fn_name} returned a gradient at index {index} on the '{g.backend.name}' "
                f"backend for an input on the '{self.backend.name}' backend"
            )
        shape = self._data.shape
        if g._data.shape == shape:
            return g
        if not broadcasts_to(shape, g.shape):
            raise RuntimeError(
                f"Function {fn_name} returned an invalid gradient at index {index} - got {list(g.shape)} "
                f"but expected shape compatible with {list(shape)}"
            )
        return _sum_to_shape(g, shape)

    def _grad_meta(self) -> Any:
        return (self._data.shape, self.backend)

    @classmethod
    def _zero_grad(cls, meta: Any) -> "Tensor":
        shape, backend = meta
        return Tensor(TensorData.zeros(shape), backend)

    def _default_grad(self) -> "Tensor":
        if self._data.size != 1:
            raise RuntimeError(
                f"grad can be implicitly created only for scalar outputs (this tensor has shape "
                f"{self.shape}); pass backward(grad) with a gradient of that shape, or reduce first, "
                "e.g. .sum()"
            )
        return self._new(TensorData.filled(self.shape, 1.0))

    def _alias(self) -> "Tensor":
        return self._new(self._data)
