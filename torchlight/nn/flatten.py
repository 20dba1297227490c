"""Module 4: Flatten, the layer between a convolutional network's feature maps and its Linear head."""

from math import prod

from ..tensor import Tensor
from ..tensor_data import normalize_dim
from .module import Module

__all__ = ["Flatten"]


class Flatten(Module):
    """Merges dimensions ``start_dim`` to ``end_dim`` into one: ``(N, C, H, W)`` becomes
    ``(N, C * H * W)`` with the defaults, keeping the batch dimension (as ``torch.nn.Flatten``).

    :param start_dim: the first dimension merged.
    :param end_dim: the last dimension merged.
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        for name, d in (("start_dim", start_dim), ("end_dim", end_dim)):
            if isinstance(d, bool) or not isinstance(d, int):
                raise TypeError(f"Flatten: {name} must be an int, got {type(d).__name__}")
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        """input with dimensions start_dim..end_dim merged (a view when input is contiguous)."""
        if not isinstance(input, Tensor):
            raise TypeError(f"Flatten expects a Tensor input, got {type(input).__name__}")
        if input.dims == 0:
            return input.reshape(1)
        start, end = normalize_dim(self.start_dim, input.dims), normalize_dim(self.end_dim, input.dims)
        if start > end:
            raise RuntimeError(
                f"flatten() has invalid args: start_dim cannot come after end_dim (start_dim={self.start_dim} "
                f"is dimension {start}, end_dim={self.end_dim} is dimension {end} of an input of shape {input.shape})"
            )
        shape = input.shape
        return input.reshape(*shape[:start], prod(shape[start : end + 1]), *shape[end + 1 :])

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
