"""Module 4: MaxPool2d and AvgPool2d, the pooling layers (``torch.nn.MaxPool2d`` and ``AvgPool2d``).

They have no parameters: each calls ``max_pool2d`` or ``avg_pool2d`` (``torchlight/ops/pooling.py``)
with the settings it was made with, and prints them as PyTorch does (MaxPool2d through
``ops/fused_nn.py``, which pools side-by-side windows in one kernel where the backend has one).
The adaptive pooling layers, which pool to a fixed output size, are in ``adaptive_pooling.py``.
"""

from typing import Any

from ..ops.fused_nn import max_pool2d
from ..ops.pooling import avg_pool2d, pool_settings
from ..tensor import Tensor
from .module import Module

__all__ = ["AvgPool2d", "MaxPool2d"]


class MaxPool2d(Module):
    """The largest value of each ``kernel_size`` window, windows ``stride`` apart (default: the
    kernel size), as ``torch.nn.MaxPool2d``.

    :param kernel_size: the window's size: an int or a pair (height, width).
    :param stride: the step between windows: an int or a pair (default: the kernel size).
    :param padding: -inf added on each side (never the maximum): an int or a pair.
    :param dilation: only 1 (PyTorch's other values are not supported).
    :param return_indices: only False (not supported).
    :param ceil_mode: only False (not supported).
    """

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        dilation: Any = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ):
        super().__init__()
        if dilation != 1 or return_indices or ceil_mode:
            raise NotImplementedError("MaxPool2d: only dilation=1, return_indices=False, ceil_mode=False are supported")
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size  # as PyTorch keeps it
        self.padding = padding
        self.dilation, self.return_indices, self.ceil_mode = dilation, return_indices, ceil_mode
        pool_settings("MaxPool2d", kernel_size, self.stride, padding)  # the errors now, not at the first call

    def forward(self, x: Tensor) -> Tensor:
        """x (N, C, H, W) or (C, H, W) pooled: (N, C, H_out, W_out)."""
        return max_pool2d(x, self.kernel_size, self.stride, self.padding)

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class AvgPool2d(Module):
    """The mean of each ``kernel_size`` window, windows ``stride`` apart (default: the kernel
    size; zero padding counts in the mean), as ``torch.nn.AvgPool2d``.

    :param kernel_size: the window's size: an int or a pair (height, width).
    :param stride: the step between windows: an int or a pair (default: the kernel size).
    :param padding: zeros added on each side, counted in the mean: an int or a pair.
    :param ceil_mode: only False (not supported).
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False):
        super().__init__()
        if ceil_mode:
            raise NotImplementedError("AvgPool2d: ceil_mode=True is not supported")
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        pool_settings("AvgPool2d", kernel_size, self.stride, padding)

    def forward(self, x: Tensor) -> Tensor:
        """x (N, C, H, W) or (C, H, W) pooled: (N, C, H_out, W_out)."""
        return avg_pool2d(x, self.kernel_size, self.stride, self.padding)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
