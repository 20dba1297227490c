"""Module 4: pooling, composed of views and reductions: no Function, no kernel of its own.

``tile`` lays each kh x kw block of an image out along a new last dimension, with a view, a permute
and a copy; pooling is then a reduction over that dimension (avg: ``mean(-1)``, max: ``max(-1)``),
so its gradient is the reduction's and the views', to any order. Windows that overlap or reach
into padding (a stride other than the kernel size, or padding) are not blocks of the image: they
come from the convolution's unfold (stage 4.2) instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Tuple

from ..backends.base import conv_output_size
from .conv import Unfold, int_tuple

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["avg_pool2d", "max_pool2d", "tile"]


def tile(input: Tensor, kernel: Tuple[int, int]) -> Tensor:
    """(N, C, H, W) to (N, C, H // kh, W // kw, kh * kw): the values of each kh x kw block of the
    image along a last dimension (row by row within the block); H and W must be multiples. input
    may be any view (permuted, sliced); the gradient flows back through the views.

    :param input: an image (N, C, H, W).
    :param kernel: the block's size (kh, kw).
    """
    n, c, h, w, kh, kw = _tile_arguments(input, kernel)
    # BEGIN SOLUTION 4.3: the blocks as views
    # HINT: module 2's movement operations are enough. Name the six dimensions of an image whose H
    # is cut into blocks of kh rows and W into blocks of kw columns: which order puts a block's
    # kh * kw values last, row by row? (view splits or merges dimensions only of contiguous values.)
    x = input.contiguous().view(n, c, h // kh, kh, w // kw, kw)
    x = x.permute(0, 1, 2, 4, 3, 5).contiguous()
    return x.view(n, c, h // kh, w // kw, kh * kw)
    # END SOLUTION 4.3


def avg_pool2d(
    input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False
) -> Tensor:
    """The mean of each kernel_size window of input (N, C, H, W) or (C, H, W), windows ``stride``
    apart (default: the kernel size, side by side); ``padding`` zeros count in the mean, as in PyTorch.

    :param input: an image (N, C, H, W) or (C, H, W).
    :param kernel_size: the window's size: an int or a pair (height, width).
    :param stride: the step between windows: an int or a pair (default: the kernel size).
    :param padding: zeros added on each side: an int or a pair.
    :param ceil_mode: only False (PyTorch's True is not supported).
    """
    x, kernel, stride, padding = _pool_arguments("avg_pool2d", input, kernel_size, stride, padding, ceil_mode)
    # BEGIN SOLUTION 4.3: the mean of each window
    # HINT: with every window's values along one dimension, pooling is a reduction; _windows (below)
    # lays them out, given a value to stand for the padding: which value does a mean count there?
    # x is always 4-D; a 3-D input (C, H, W) must get a 3-D result.
    windows = _windows(x, kernel, stride, padding, 0.0)
    out = windows.mean(-1)
    return out if input.dims == 4 else out.squeeze(0)
    # END SOLUTION 4.3


def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor:
    """The largest value of each kernel_size window of input (N, C, H, W) or (C, H, W), windows
    ``stride`` apart (default: the kernel size); ``padding`` is -inf, never the maximum. The
    gradient goes to the first position of each window's maximum."""
    if int_tuple("max_pool2d", "dilation", dilation, 2) != (1, 1):
        raise NotImplementedError(f"max_pool2d(): dilation={dilation!r} is not supported (only 1)")
    if return_indices:
        raise NotImplementedError("max_pool2d(): return_indices=True is not supported")
    x, kernel, stride, padding = _pool_arguments("max_pool2d", input, kernel_size, stride, padding, ceil_mode)
    # BEGIN SOLUTION 4.3: the maximum of each window
    # HINT: as avg_pool2d; which value, standing for the padding, can never be a maximum?
    windows = _windows(x, kernel, stride, padding, float("-inf"))
    out = windows.max(-1).values
    return out if input.dims == 4 else out.squeeze(0)
    # END SOLUTION 4.3


def _windows(
    x: Tensor, kernel: Tuple[int, ...], stride: Tuple[int, ...], padding: Tuple[int, ...], fill: float
) -> Tensor:
    """The pooling windows of x (N, C, H, W) along a last dimension: (N, C, H_out, W_out, kh * kw),
    ``fill`` standing for the padding."""
    n, c = x.shape[:2]
    out_h, out_w = conv_output_size(x.shape[2:], kernel, stride, padding)
    kh, kw = kernel
    if stride == kernel and padding == (0, 0):  # blocks side by side: tile (what no window reaches cut off)
        if (out_h * kh, out_w * kw) != x.shape[2:]:
            x = x[:, :, : out_h * kh, : out_w * kw]
        return tile(x, (kh, kw))
    # Overlapping or padded windows: the convolution's columns (N, C * K, L), viewed as
    # (N, C, K, H_out, W_out) and permuted: no copy.
    columns = Unfold.apply(x, kernel, stride, padding)
    windows = columns.view(n, c, kh * kw, out_h, out_w).permute(0, 1, 3, 4, 2)
    if fill != 0.0 and padding != (0, 0):
        # 1 where a window sees the input, 0 in the padding; log turns that into 0 and -inf.
        inside = Unfold.apply(x.new_ones(1, 1, *x.shape[2:]), kernel, stride, padding)
        windows = windows + inside.log().view(1, 1, kh * kw, out_h, out_w).permute(0, 1, 3, 4, 2)
    return windows


def _tile_arguments(input: Any, kernel: Any) -> Tuple[int, int, int, int, int, int]:
    from ..tensor import Tensor, _tensor_of

    input = _tensor_of(input)  # an nn.Parameter stands for its tensor
    if not isinstance(input, Tensor):
        raise TypeError(f"tile(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dims != 4:
        raise RuntimeError(f"tile(): expected a 4-D input (N, C, H, W), but got input of size {list(input.shape)}")
    kh, kw = int_tuple("tile", "kernel", kernel, 2)
    if kh < 1 or kw < 1:
        raise ValueError(f"tile(): the kernel must be positive, got kernel={(kh, kw)}")
    n, c, h, w = input.shape
    if h % kh or w % kw:
        raise RuntimeError(f"tile(): the input's height and width {(h, w)} must be multiples of the kernel {(kh, kw)}")
    return n, c, h, w, kh, kw


def pool_settings(
    name: str, kernel_size: Any, stride: Any, padding: Any
) -> Tuple[Tuple[int, ...], Tuple[int, ...], Tuple[int, ...]]:
    """(kernel, stride, padding) as pairs of ints (stride None: the kernel), checked as PyTorch checks them."""
    kernel = int_tuple(name, "kernel_size", kernel_size, 2)
    stride = kernel if stride is None else int_tuple(name, "stride", stride, 2)
    padding = int_tuple(name, "padding", padding, 2)
    if min(kernel) < 1:
        raise RuntimeError(f"{name}(): kernel_size must be greater than zero, but got kernel_size={kernel}")
    if min(stride) < 1:
        raise RuntimeError(f"{name}(): stride should be greater than zero, but got stride={stride}")
    if min(padding) < 0 or any(2 * p > k for p, k in zip(padding, kernel, strict=True)):
        raise RuntimeError(
            f"{name}(): pad should be at least 0 and at most half of effective kernel size, but got "
            f"pad={padding}, kernel_size={kernel}"
        )
    return kernel, stride, padding


def _pool_arguments(
    name: str, input: Any, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool
) -> Tuple[Tensor, Tuple[int, ...], Tuple[int, ...], Tuple[int, ...]]:
    """(input as (N, C, H, W), kernel, stride, padding), checked as PyTorch checks them."""
    from ..tensor import Tensor, _tensor_of

    input = _tensor_of(input)  # an nn.Parameter stands for its tensor
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if ceil_mode:
        raise NotImplementedError(f"{name}(): ceil_mode=True is not supported")
    kernel, stride, padding = pool_settings(name, kernel_size, stride, padding)
    if input.dims not in (3, 4) or 0 in input.shape[-3:]:
        raise RuntimeError(
            f"{name}(): Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
            f"but got input of size: {list(input.shape)}"
        )
    x = input if input.dims == 4 else input.unsqueeze(0)
    out_h, out_w = conv_output_size(x.shape[2:], kernel, stride, padding)
    if out_h < 1 or out_w < 1:
        c, h, w = x.shape[1:]
        raise RuntimeError(
            f"{name}(): Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{out_h}x{out_w}). "
            "Output size is too small"
        )
    return x, kernel, stride, padding
