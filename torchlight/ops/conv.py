"""Module 4: convolutions, as one matrix multiply of the weights with the input's windows.

A convolution slides a small weight over the input: output channel o at window position l is the
dot product of ``weight[o]`` (C x K values: C channels, K = kernel positions) with the input's
window at l. Copy every window into a column (``unfold``, also called im2col) and all these dot
products together are one matrix product:

    out (N, O, L) = weight viewed as (O, C * K)  @  columns (N, C * K, L)

then the bias is added to each output channel and L is viewed as the output's spatial shape. The
windows (unfold) and their adjoint (fold) are backend primitives (``TensorBackend.unfold`` and
``fold``): a loop in the simple backend (stages 4.1 and 4.2), a parallel kernel in the fast one;
the speed comes from the fast matrix multiply. docs/performance.md says why, with measurements.

``Unfold`` and ``Fold`` are linear, and each is the other's adjoint (its transpose), so each is the
other's backward and each is its own jvp: the convolution's gradients of every order and its
forward-mode derivatives come from theirs and the matrix product's, with no code of their own.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, Any, Optional, Tuple, Union

from ..autograd.function import Context, Function
from ..backends.base import conv_output_size
from ..tensor_data import check_storage

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["Fold", "Unfold", "conv1d", "conv2d"]

IntOrTuple = Union[int, Tuple[int, ...]]


class Unfold(Function):
    """The windows of x (N, C, *sizes) as columns (N, C * K, L), as ``torch.nn.functional.unfold``.

    ``kernel_size``, ``stride`` and ``padding`` are tuples, one entry per spatial dimension (1 or 2).
    """

    @staticmethod
    def forward(
        ctx: Context, x: Tensor, kernel_size: Tuple[int, ...], stride: Tuple[int, ...], padding: Tuple[int, ...]
    ) -> Tensor:
        _check_windows("Unfold", x.shape, len(kernel_size) + 2, x.shape[2:], kernel_size, stride, padding)
        ctx.args = (x.shape[2:], kernel_size, stride, padding)
        return x.backend.unfold(x, kernel_size, stride, padding)

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Tensor, None, None, None]:
        # Each input value was copied into every window that covers it: its gradient is the sum of
        # the gradients of those copies, which is what fold adds up.
        return Fold.apply(g, *ctx.args), None, None, None

    @staticmethod
    def jvp(ctx: Context, t: Tensor, *non_tensors: None) -> Tensor:
        return Unfold.apply(t, *ctx.args[1:])  # linear: the tangent's windows


class Fold(Function):
    """Columns (N, C * K, L) added back onto an (N, C, *output_size) tensor, each onto its window:
    unfold's adjoint, as ``torch.nn.functional.fold``."""

    @staticmethod
    def forward(
        ctx: Context,
        cols: Tensor,
        output_size: Tuple[int, ...],
        kernel_size: Tuple[int, ...],
        stride: Tuple[int, ...],
        padding: Tuple[int, ...],
    ) -> Tensor:
        _check_windows("Fold", cols.shape, 3, output_size, kernel_size, stride, padding)
        blocks = conv_output_size(output_size, kernel_size, stride, padding)
        k = math.prod(kernel_size)
        if cols.shape[1] % k or cols.shape[2] != math.prod(blocks):
            raise RuntimeError(
                f"Fold: expected columns (N, C * {k}, {' * '.join(map(str, blocks))}) for output_size={output_size}, "
                f"kernel_size={kernel_size}, stride={stride}, padding={padding}, but got columns of size "
                f"{list(cols.shape)}"
            )
        ctx.args = (output_size, kernel_size, stride, padding)
        return cols.backend.fold(cols, output_size, kernel_size, stride, padding)

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Tensor, None, None, None, None]:
        return Unfold.apply(g, *ctx.args[1:]), None, None, None, None

    @staticmethod
    def jvp(ctx: Context, t: Tensor, *non_tensors: None) -> Tensor:
        return Fold.apply(t, *ctx.args)


def _check_windows(
    name: str,
    shape: Tuple[int, ...],
    dims: int,
    sizes: Tuple[int, ...],
    kernel_size: Tuple[int, ...],
    stride: Tuple[int, ...],
    padding: Tuple[int, ...],
) -> None:
    """Unfold's and Fold's arguments (tuples of one int per spatial dimension, 1 or 2 of them) fit."""
    n = len(kernel_size)
    if n not in (1, 2) or len(shape) != dims or not len(sizes) == len(stride) == len(padding) == n:
        raise RuntimeError(
            f"{name}: expected kernel_size, stride and padding of 1 or 2 entries each, as many as the "
            f"spatial sizes {tuple(sizes)}, and a {dims}-D input, but got kernel_size={kernel_size}, "
            f"stride={stride}, padding={padding} and an input of size {list(shape)}"
        )
    if min(kernel_size) < 1 or min(stride) < 1 or min(padding) < 0:
        raise RuntimeError(f"{name}: kernel_size and stride must be positive and padding at least 0")
    if any(k > s + 2 * p for k, s, p in zip(kernel_size, sizes, padding, strict=True)):
        raise RuntimeError(f"{name}: kernel_size {kernel_size} is larger than the padded size of {tuple(sizes)}")


def convolve(
    x: Tensor, weight: Tensor, bias: Optional[Tensor], stride: Tuple[int, ...], padding: Tuple[int, ...]
) -> Tensor:
    """The convolution of x (N, C, *sizes) with weight (O, C, *kernel) plus bias (O,) (None: no
    bias), for checked arguments: (N, O, *output sizes)."""
    batch, out_channels = x.shape[0], weight.shape[0]  # noqa: F841  (stage 4.1's code uses them)
    kernel = weight.shape[2:]
    out_sizes = conv_output_size(x.shape[2:], kernel, stride, padding)  # noqa: F841  (stage 4.1's code uses it)
    # BEGIN SOLUTION 4.1: the convolution as weight @ columns, plus the bias
    # HINT: Unfold.apply(x, kernel, stride, padding) gives the (N, C * K, L) columns, one per
    # window. Which shape of the weight makes one matrix product (matmul broadcasts over N) give
    # every output channel at every window? The bias is one value per output channel, the same at
    # every window; the result's L windows are out_sizes laid flat.
    columns = Unfold.apply(x, kernel, stride, padding)
    out = weight.reshape(out_channels, -1) @ columns
    if bias is not None:
        out = out + bias.view(out_channels, 1)
    return out.view(batch, out_channels, *out_sizes)
    # END SOLUTION 4.1


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor] = None,
    stride: IntOrTuple = 1,
    padding: Union[IntOrTuple, str] = 0,
    dilation: IntOrTuple = 1,
    groups: int = 1,
) -> Tensor:
    """1-D convolution (cross-correlation, as PyTorch) of input (N, C, W) or (C, W) with weight
    (O, C, K): (N, O, W_out), W_out = (W + 2 padding - K) // stride + 1.

    :param input: a signal (N, C, W) or (C, W).
    :param weight: the filters (O, C, K).
    :param bias: one value per output channel, (O,) (None: none).
    :param stride: the step between windows: an int.
    :param padding: zeros added on each side: an int, ``"valid"`` (0) or ``"same"`` (output as long as
        the input; stride 1, odd kernel).
    :param dilation: only 1 (PyTorch's other values are not supported).
    :param groups: only 1 (PyTorch's other values are not supported).
    """
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor] = None,
    stride: IntOrTuple = 1,
    padding: Union[IntOrTuple, str] = 0,
    dilation: IntOrTuple = 1,
    groups: int = 1,
) -> Tensor:
    """2-D convolution (cross-correlation, as PyTorch) of input (N, C, H, W) or (C, H, W) with
    weight (O, C, KH, KW): (N, O, H_out, W_out).

    :param input: an image (N, C, H, W) or (C, H, W).
    :param weight: the filters (O, C, KH, KW).
    :param bias: one value per output channel, (O,) (None: none).
    :param stride: the step between windows: an int or a pair (height, width).
    :param padding: zeros added on each side: an int, a pair, ``"valid"`` or ``"same"`` (stride 1, odd
        kernel).
    :param dilation: only 1 (PyTorch's other values are not supported).
    :param groups: only 1 (PyTorch's other values are not supported).
    """
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def _conv(
    name: str,
    spatial: int,
    input: Any,
    weight: Any,
    bias: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: Any,
) -> Tensor:
    """Check the arguments as PyTorch does (with its messages), then convolve."""
    from ..tensor import Tensor, _tensor_of

    # an nn.Parameter stands for the tensor it holds (F.conv2d(x, self.weight, self.bias), as PyTorch)
    input, weight, bias = _tensor_of(input), _tensor_of(weight), _tensor_of(bias)
    for arg, value in (("input", input), ("weight", weight)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(value).__name__}")
    if bias is not None and not isinstance(bias, Tensor):
        raise TypeError(f"{name}(): argument 'bias' must be Tensor or None, not {type(bias).__name__}")
    if groups != 1:
        raise NotImplementedError(f"{name}(): groups={groups!r} is not supported (only groups=1)")
    if int_tuple(name, "dilation", dilation, spatial) != (1,) * spatial:
        raise NotImplementedError(f"{name}(): dilation={dilation!r} is not supported (only dilation=1)")
    for t in (weight, bias):
        if t is not None and t.backend is not input.backend:
            raise RuntimeError(
                f"{name}(): expected input, weight and bias on the same backend, but input is on "
                f"'{input.backend.name}' and {'weight' if t is weight else 'bias'} on '{t.backend.name}'; "
                f"move it with .to('{input.backend.name}')"
            )
    if weight.dims != spatial + 2:
        raise RuntimeError(
            f"{name}(): expected a {spatial + 2}-D weight (out_channels, in_channels, {_kernel_names(spatial)}), "
            f"but got weight of size {list(weight.shape)}"
        )
    if input.dims not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to {name}, but got input "
            f"of size: {list(input.shape)}"
        )
    batched = input.dims == spatial + 2
    x = input if batched else input.unsqueeze(0)
    kernel = weight.shape[2:]
    if min(weight.shape[:2] + kernel) < 1:
        raise RuntimeError(f"{name}(): weight of size {list(weight.shape)} has no elements in some dimension")
    stride = int_tuple(name, "stride", stride, spatial)
    if min(stride) < 1:
        raise RuntimeError(f"{name}(): non-positive stride is not supported, got stride={stride}")
    padding = _padding(name, padding, kernel, stride)
    if min(padding) < 0:
        raise RuntimeError(f"{name}(): negative padding is not supported, got padding={padding}")
    if x.shape[1] != weight.shape[1]:
        raise RuntimeError(
            f"Given groups=1, weight of size {list(weight.shape)}, expected input{list(x.shape)} to have "
            f"{weight.shape[1]} channels, but got {x.shape[1]} channels instead"
        )
    if bias is not None and bias.shape != (weight.shape[0],):
        raise RuntimeError(
            f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with "
            f"{weight.shape[0]} elements, but got bias of size {list(bias.shape)} instead"
        )
    padded = tuple(n + 2 * p for n, p in zip(x.shape[2:], padding, strict=True))
    if any(k > n for k, n in zip(kernel, padded, strict=True)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel size: "
            f"({' x '.join(map(str, kernel))}). Kernel size can't be greater than actual input size"
        )
    # the columns that unfold will make, (N, C * K, L): a size whose storage no int64 counts is
    # refused here, naming it, before any kernel loops over it
    windows = math.prod(conv_output_size(x.shape[2:], kernel, stride, padding))
    check_storage((x.shape[0], x.shape[1] * math.prod(kernel), windows))
    out = convolve(x, weight, bias, stride, padding)
    return out if batched else out.squeeze(0)


def _kernel_names(spatial: int) -> str:
    return "kW" if spatial == 1 else "kH, kW"


def int_tuple(name: str, arg: str, value: Any, n: int) -> Tuple[int, ...]:
    """``value`` (an int, or a tuple or list of n ints) as a tuple of n ints, as PyTorch reads
    ``stride``, ``padding`` and ``kernel_size``; anything else is a clear error naming ``arg``."""
    values = value if isinstance(value, (tuple, list)) else (value,) * n
    for v in values:
        if not isinstance(v, numbers.Integral) or isinstance(v, bool):
            raise TypeError(f"{name}(): argument '{arg}' must be an int or a tuple of {n} ints, but got {value!r}")
        if not -(2**63) <= int(v) < 2**63:  # (a kernel's arguments are int64s: numba's would overflow)
            raise ValueError(
                f"{name}(): Overflow when unpacking long long: argument '{arg}' = {value!r} does not fit in a "
                "64-bit integer"
            )
    if len(values) != n:
        raise RuntimeError(
            f"expected {arg} to be a single integer value or a list of {n} values to match the "
            f"convolution dimensions, but got {arg}={list(values)}"
        )
    return tuple(int(v) for v in values)


def _padding(name: str, padding: Any, kernel: Tuple[int, ...], stride: Tuple[int, ...]) -> Tuple[int, ...]:
    """The padding as a tuple of ints; 'valid' is none, 'same' keeps the size (stride 1, odd kernels)."""
    if padding == "valid":
        return (0,) * len(kernel)
    if padding == "same":
        if stride != (1,) * len(kernel):
            raise RuntimeError(f"{name}(): padding='same' is not supported for strided convolutions")
        if any(k % 2 == 0 for k in kernel):
            raise NotImplementedError(
                f"{name}(): padding='same' with an even kernel size {kernel} needs uneven padding, "
                "which is not supported; give the padding as ints"
            )
        return tuple((k - 1) // 2 for k in kernel)
    if isinstance(padding, str):
        raise ValueError(f"{name}(): invalid padding string {padding!r}, expected one of 'valid' or 'same'")
    return int_tuple(name, "padding", padding, len(kernel))
