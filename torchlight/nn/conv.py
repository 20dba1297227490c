"""Module 4: Conv1d and Conv2d, the convolution layers (``torch.nn.Conv1d`` and ``Conv2d``).

Each owns a ``weight`` of shape (out_channels, in_channels, *kernel_size) and a ``bias`` of shape
(out_channels,), and calls ``conv1d`` or ``conv2d`` (``torchlight/ops/conv.py``). Both start as
PyTorch's do: uniform in (-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = in_channels *
prod(kernel_size) (``kaiming_uniform_(a=sqrt(5))`` for the weight works out to that bound).
"""

import math
import numbers
from typing import Any, Callable, Optional, Tuple, Union

import numpy as np

from .. import random
from ..backends import TensorBackend
from ..ops.conv import conv1d, conv2d, int_tuple
from ..tensor import Tensor, tensor
from ..tensor_data import check_storage
from .module import Module, Parameter

__all__ = ["Conv1d", "Conv2d"]


class _ConvNd(Module):
    """What Conv1d and Conv2d share: the arguments, the parameters and their initialization."""

    _spatial = 0
    _conv: Callable[..., Tensor]

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        backend: Union[str, TensorBackend, None] = None,
        seed: Optional[int] = None,
        generator: Optional[np.random.Generator] = None,
    ):
        super().__init__()
        name = type(self).__name__
        for arg, n in (("in_channels", in_channels), ("out_channels", out_channels)):
            if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 1:
                raise ValueError(f"{name}: {arg} must be a positive int, got {n!r}")
        if groups != 1 or int_tuple(name, "dilation", dilation, self._spatial) != (1,) * self._spatial:
            raise NotImplementedError(f"{name}: only groups=1 and dilation=1 are supported")
        kernel = int_tuple(name, "kernel_size", kernel_size, self._spatial)
        if min(kernel) < 1:
            raise ValueError(f"{name}: kernel_size must be positive, got {kernel_size!r}")
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.kernel_size: Tuple[int, ...] = kernel
        self.stride: Tuple[int, ...] = int_tuple(name, "stride", stride, self._spatial)
        if min(self.stride) < 1:
            raise ValueError(f"{name}: stride must be positive, got {stride!r}")
        if isinstance(padding, str) and padding not in ("same", "valid"):
            raise ValueError(f"{name}: invalid padding string {padding!r}, should be one of 'same' or 'valid'")
        self.padding: Union[str, Tuple[int, ...]] = (
            padding if isinstance(padding, str) else int_tuple(name, "padding", padding, self._spatial)
        )
        if not isinstance(self.padding, str) and min(self.padding) < 0:
            raise ValueError(f"{name}: padding must be at least 0, got {padding!r}")
        rng = random.generator(seed, generator)
        bound = 1.0 / math.sqrt(in_channels * math.prod(kernel))
        shape = (out_channels, in_channels) + kernel
        check_storage(shape)  # (PyTorch's error for a weight too large, not numpy's)
        self.weight = Parameter(tensor(rng.uniform(-bound, bound, shape), backend=backend))
        if bias:
            self.bias = Parameter(tensor(rng.uniform(-bound, bound, (out_channels,)), backend=backend))
        else:
            self.register_parameter("bias", None)  # an empty slot, as PyTorch: parameters() skips it

    def forward(self, x: Tensor) -> Tensor:
        """The convolution of x with this layer's weight, plus its bias."""
        bias = None if self.bias is None else self.bias.value
        return type(self)._conv(x, self.weight.value, bias, self.stride, self.padding)

    def extra_repr(self) -> str:
        # As PyTorch prints it: padding only when there is some, bias only when there is none.
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._spatial:
            s += f", padding={self.padding}"
        if self.bias is None:
            s += ", bias=False"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over (N, in_channels, W) inputs, as ``torch.nn.Conv1d``: (N, out_channels, W_out).

    :param in_channels: the input's channels.
    :param out_channels: the output's channels (the number of filters).
    :param kernel_size: the window's size: an int.
    :param stride: the step between windows: an int.
    :param padding: zeros added on each side: an int, or ``"same"`` or ``"valid"``.
    :param dilation: only 1 (PyTorch's other values are not supported).
    :param groups: only 1 (PyTorch's other values are not supported).
    :param bias: give the layer a bias.
    :param backend: the backend or its name of the parameters (default: the default backend).
    :param seed: draw the initial values from a new generator seeded with it.
    :param generator: a numpy Generator to draw them from (default: torchlight's).
    """

    _spatial = 1
    _conv = staticmethod(conv1d)


class Conv2d(_ConvNd):
    """2-D convolution over (N, in_channels, H, W) inputs, as ``torch.nn.Conv2d``: (N, out_channels,
    H_out, W_out).

    :param in_channels: the input's channels.
    :param out_channels: the output's channels (the number of filters).
    :param kernel_size: the window's size: an int or a pair (height, width).
    :param stride: the step between windows: an int or a pair (height, width).
    :param padding: zeros added on each side: an int or a pair (height, width), or ``"same"`` or ``"valid"``.
    :param dilation: only 1 (PyTorch's other values are not supported).
    :param groups: only 1 (PyTorch's other values are not supported).
    :param bias: give the layer a bias.
    :param backend: the backend or its name of the parameters (default: the default backend).
    :param seed: draw the initial values from a new generator seeded with it.
    :param generator: a numpy Generator to draw them from (default: torchlight's).
    """

    _spatial = 2
    _conv = staticmethod(conv2d)
