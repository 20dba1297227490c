"""Module 4: the adaptive pooling layers, which pool an input of any size to a fixed
``output_size``: ``AdaptiveAvgPool1d``/``2d``/``3d`` and ``AdaptiveMaxPool1d``/``2d``/``3d``, as
PyTorch's (``nn.AdaptiveAvgPool2d(1)`` is a classifier's global average pooling).

They have no parameters: each calls its function in ``ops/adaptive_pooling.py`` with the settings
it was made with, and prints them as PyTorch does.
"""

from typing import Any

from ..ops import adaptive_pooling as P
from ..tensor import Tensor
from .module import Module

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
]


class _AdaptiveAvgPool(Module):
    n = 0  # how many trailing dimensions are pooled

    def __init__(self, output_size: Any):
        super().__init__()
        P.output_sizes(type(self).__name__, output_size, self.n)  # checked now, as PyTorch checks it at the call
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        return getattr(P, f"adaptive_avg_pool{self.n}d")(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class _AdaptiveMaxPool(Module):
    n = 0

    def __init__(self, output_size: Any, return_indices: bool = False):
        super().__init__()
        P.output_sizes(type(self).__name__, output_size, self.n)
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, x: Tensor) -> Any:
        return getattr(P, f"adaptive_max_pool{self.n}d")(x, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPool):
    """The mean of each of ``output_size`` windows that cover a signal (N, C, L) or (C, L),
    whatever its length, as ``torch.nn.AdaptiveAvgPool1d``.

    :param output_size: the output's length, an int.
    """

    n = 1


class AdaptiveAvgPool2d(_AdaptiveAvgPool):
    """The mean of each of ``output_size`` windows that cover an image (N, C, H, W) or (C, H, W),
    whatever its size, as ``torch.nn.AdaptiveAvgPool2d``.

    :param output_size: the output's (H, W): an int, or a pair whose None keeps that size.
    """

    n = 2


class AdaptiveAvgPool3d(_AdaptiveAvgPool):
    """The mean of each of ``output_size`` windows that cover a volume (N, C, D, H, W) or
    (C, D, H, W), as ``torch.nn.AdaptiveAvgPool3d``.

    :param output_size: the output's (D, H, W): an int, or a triple of ints or None.
    """

    n = 3


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """The largest value of each of ``output_size`` windows that cover a signal, as
    ``torch.nn.AdaptiveMaxPool1d``.

    :param output_size: the output's length, an int.
    :param return_indices: also return where each largest value is.
    """

    n = 1


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """The largest value of each of ``output_size`` windows that cover an image, as
    ``torch.nn.AdaptiveMaxPool2d``.

    :param output_size: the output's (H, W): an int, or a pair whose None keeps that size.
    :param return_indices: also return where each largest value is (``h * W + w``, int64).
    """

    n = 2


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """The largest value of each of ``output_size`` windows that cover a volume, as
    ``torch.nn.AdaptiveMaxPool3d``.

    :param output_size: the output's (D, H, W): an int, or a triple of ints or None.
    :param return_indices: also return where each largest value is.
    """

    n = 3
