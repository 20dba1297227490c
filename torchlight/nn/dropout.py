"""Module 4: Dropout, the layer that zeroes random activations while training (``model.train()``)
and passes them through unchanged in evaluation (``model.eval()``)."""

import numbers

from ..tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["Dropout"]


class Dropout(Module):
    """While training, each element zeroed with probability ``p`` and the rest scaled by
    ``1 / (1 - p)``; the identity in eval mode (as ``torch.nn.Dropout``). Masks are drawn from
    torchlight's generator (``torchlight.manual_seed``).

    :param p: the probability of zeroing an element, in [0, 1].
    :param inplace: accepted for PyTorch's programs (the result is a new tensor).
    """

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p!r}")
        self.p: float = float(p)
        self.inplace: bool = bool(inplace)

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
