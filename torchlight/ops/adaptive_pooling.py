"""Module 4: adaptive pooling, which pools an image of any size to a fixed ``output_size``, as
PyTorch's ``adaptive_avg_pool2d`` and ``adaptive_max_pool2d`` (e.g. a classifier's head that
takes a feature map of any size down to 1 x 1, or to 7 x 7).

Output row i pools input rows ``floor(i * H / H_out)`` to ``ceil((i + 1) * H / H_out)`` (end
excluded), and columns likewise: the windows cover the image, may differ in size by one, and
overlap where H is not a multiple of H_out. Both are composed of existing operations:

- the mean over such windows is linear in the image: ``A_h @ x @ A_w.T``, where row i of ``A_h``
  holds 1 / (window size) over window i's rows and zeros elsewhere;
- the maximum over a rectangle is the maximum over its rows of the maxima of each row: the
  maxima over each window's columns (``max(-1)`` of a slice), stacked, then over its rows. The
  gradient goes to the first maximum of each window in row-major order, as PyTorch's.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, List, Optional, Tuple

import numpy as np

from .joining import stack

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["adaptive_avg_pool2d", "adaptive_max_pool2d", "adaptive_windows", "output_size_pair"]


def adaptive_windows(size: int, out: int) -> List[Tuple[int, int]]:
    """(start, end) of each of ``out`` windows over ``size`` positions, as PyTorch's adaptive pooling."""
    return [((i * size) // out, math.ceil((i + 1) * size / out)) for i in range(out)]


def output_size_pair(name: str, output_size: Any) -> Tuple[Optional[int], Optional[int]]:
    """output_size (an int, or a pair of ints or None) as a pair, checked as PyTorch checks it."""
    pair = (output_size, output_size) if not isinstance(output_size, (tuple, list)) else tuple(output_size)
    if len(pair) != 2:
        raise RuntimeError(f"{name}: output_size must be 2")
    for s in pair:
        if s is not None and (isinstance(s, bool) or not isinstance(s, (int, np.integer))):
            raise TypeError(f"{name}: output_size must be ints or None, got {output_size!r}")
        if s is not None and s < 0:
            raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received {s}")
    return pair  # type: ignore[return-value]


def _arguments(name: str, input: Any, output_size: Any) -> Tuple[Tensor, int, int]:
    from ..tensor import Tensor, _tensor_of

    input = _tensor_of(input)  # an nn.Parameter stands for its tensor
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dims not in (3, 4):
        raise RuntimeError(f"{name}(): Expected 3D or 4D tensor, but got {list(input.shape)}")
    out_h, out_w = output_size_pair(name, output_size)
    h, w = input.shape[-2:]
    return input, h if out_h is None else out_h, w if out_w is None else out_w


def _averaging(x: Tensor, size: int, out: int) -> Tensor:
    """The (out, size) matrix whose row i averages window i of ``size`` positions."""
    a = np.zeros((out, size))
    for i, (start, end) in enumerate(adaptive_windows(size, out)):
        a[i, start:end] = 1.0 / (end - start)
    return x._constant(a)


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """The mean of each window of input (N, C, H, W) or (C, H, W): (N, C, *output_size)."""
    x, out_h, out_w = _arguments("adaptive_avg_pool2d", input, output_size)
    h, w = x.shape[-2:]
    rows = _averaging(x, h, out_h)  # (out_h, H)
    columns = _averaging(x, w, out_w)  # (out_w, W)
    return rows @ x @ columns.T


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Tensor:
    """The largest value of each window of input (N, C, H, W) or (C, H, W): (N, C, *output_size)."""
    if return_indices:
        raise NotImplementedError("adaptive_max_pool2d(): return_indices=True is not supported")
    x, out_h, out_w = _arguments("adaptive_max_pool2d", input, output_size)
    h, w = x.shape[-2:]
    if out_h == 0 or out_w == 0 or h == 0 or w == 0:
        raise RuntimeError(
            f"adaptive_max_pool2d(): expected an input and output_size without zero sizes, got input of size "
            f"{list(x.shape)} and output_size {(out_h, out_w)}"
        )
    # Columns first, then rows: the first row holding a window's maximum, and in it the first column.
    by_columns = stack([x[..., start:end].max(-1).values for start, end in adaptive_windows(w, out_w)], -1)
    return stack([by_columns[..., start:end, :].max(-2).values for start, end in adaptive_windows(h, out_h)], -2)
