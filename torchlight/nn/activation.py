"""Module 4: activation layers, each a Module around one function of ``nn.functional``, so that
a network can be written as a ``Sequential`` of layers."""

from ..tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["LogSoftmax", "ReLU", "Sigmoid", "Softmax", "Tanh"]


class ReLU(Module):
    """max(x, 0), elementwise.

    :param inplace: accepted for PyTorch's programs (``nn.ReLU(inplace=True)``); a new tensor is
        computed and the input left unchanged: the result is the same.
    """

    def __init__(self, inplace: bool = False):
        super().__init__()
        if not isinstance(inplace, bool):
            raise TypeError(f"ReLU(inplace): expected True or False, got {inplace!r}")
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    """1 / (1 + exp(-x)), elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return F.sigmoid(input)


class Tanh(Module):
    """tanh(x), elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return F.tanh(input)


def _check_dim(dim: object, layer: str) -> int:
    # PyTorch still accepts dim=None (with a deprecation warning) and guesses one; torchlight asks.
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"{layer}(dim): dim must be an int (the dimension of the classes), got {dim!r}")
    return dim


class Softmax(Module):
    """softmax along ``dim``: each slice along it becomes probabilities that sum to 1.

    :param dim: the dimension that sums to 1.
    """

    def __init__(self, dim: int):
        super().__init__()
        self.dim = _check_dim(dim, "Softmax")

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """log(softmax) along ``dim``, computed stably (the input ``NLLLoss`` expects).

    :param dim: the dimension softmax normalizes over.
    """

    def __init__(self, dim: int):
        super().__init__()
        self.dim = _check_dim(dim, "LogSoftmax")

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
