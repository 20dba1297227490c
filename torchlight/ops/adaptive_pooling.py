"""Module 4: adaptive pooling, which pools a signal, image or volume of any size to a fixed
``output_size``, as PyTorch's ``adaptive_{avg,max}_pool{1,2,3}d`` (e.g. a classifier's head that
takes a feature map of any size down to 1 x 1, or to 7 x 7).

Along each pooled dimension, output position i pools input positions ``floor(i * L / L_out)`` to
``ceil((i + 1) * L / L_out)`` (end excluded): the windows cover the input, may differ in size by
one, and overlap where L is not a multiple of L_out. The last 1, 2 or 3 dimensions are pooled;
in front of them are the channels, and optionally a batch. Both kinds are composed of existing
operations, one pooled dimension at a time:

- the mean over such windows is linear in the input: along the last dimension it is ``x @ A.T``,
  where row i of ``A`` holds 1 / (window size) over window i and zeros elsewhere; another
  dimension is moved last for it and back (``transpose``);
- the maximum over a box is the maximum over its first dimension of the maxima over the rest:
  the maxima over each window of the last dimension (``max`` of a slice), stacked, then of the
  dimension before it, and so on. The gradient goes to the first maximum of each window in
  row-major order, as PyTorch's. With ``return_indices=True`` the max also returns where each
  maximum is: its row-major position within one channel's input (int64, computed on the host),
  as PyTorch returns it for ``max_unpool`` and for inspection.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, List, Optional, Tuple, Union

import numpy as np

from ..tensor_data import TensorData
from .joining import stack

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "adaptive_windows",
    "output_size_pair",
    "output_sizes",
]


def adaptive_windows(size: int, out: int) -> List[Tuple[int, int]]:
    """(start, end) of each of ``out`` windows over ``size`` positions, as PyTorch's adaptive pooling."""
    return [((i * size) // out, math.ceil((i + 1) * size / out)) for i in range(out)]


def output_sizes(name: str, output_size: Any, n: int) -> Tuple[Optional[int], ...]:
    """output_size (an int, or a sequence of n ints or None; for 1-D pooling an int or a 1-tuple)
    as an n-tuple, checked as PyTorch checks it."""
    sizes = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * n
    if len(sizes) != n:
        if n == 1:
            raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got {len(sizes)})")
        raise RuntimeError(f"{name}: output_size must be {n}")
    for s in sizes:
        if (s is None and n == 1) or (s is not None and (isinstance(s, bool) or not isinstance(s, (int, np.integer)))):
            kinds = "ints" if n == 1 else "ints or None"
            raise TypeError(f"{name}: output_size must be {kinds}, got {output_size!r}")
        if s is not None and s < 0:
            raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received {s}")
    return sizes


def output_size_pair(name: str, output_size: Any) -> Tuple[Optional[int], Optional[int]]:
    """output_size (an int, or a pair of ints or None) as a pair, checked as PyTorch checks it."""
    return output_sizes(name, output_size, 2)  # type: ignore[return-value]


def _arguments(name: str, input: Any, output_size: Any, n: int) -> Tuple[Tensor, Tuple[int, ...]]:
    """input as a Tensor with n pooled dimensions behind its channels (and batch), and the output
    sizes (None filled in with the input's size), with PyTorch's checks."""
    from ..tensor import Tensor, _tensor_of

    input = _tensor_of(input)  # an nn.Parameter stands for its tensor
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dims not in (n + 1, n + 2):
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got {list(input.shape)}")
    sizes = output_sizes(name, output_size, n)
    for d in range(1, input.dims):
        if input.shape[d] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input has sizes "
                f"{list(input.shape)} with dimension {d} being empty"
            )
    spatial = input.shape[-n:]
    return input, tuple(size if out is None else out for size, out in zip(spatial, sizes, strict=True))


def _empty(x: Tensor, shape: Tuple[int, ...]) -> Tensor:
    """A result with no elements, still in x's graph (its gradient into x is zero)."""
    return x.reshape(-1)[:0].reshape(shape)


def _averaging(x: Tensor, size: int, out: int) -> Tensor:
    """The (out, size) matrix whose row i averages window i of ``size`` positions."""
    a = np.zeros((out, size))
    for i, (start, end) in enumerate(adaptive_windows(size, out)):
        a[i, start:end] = 1.0 / (end - start)
    return x._constant(a)


def _avg(name: str, input: Any, output_size: Any, n: int) -> Tensor:
    x, outs = _arguments(name, input, output_size, n)
    shape = x.shape[:-n] + outs
    if 0 in shape:
        return _empty(x, shape)
    for k, out in enumerate(outs):
        axis = k - n  # -n for the first pooled dimension, ..., -1 for the last
        size = x.shape[axis]
        if out == size:
            continue  # every window is one position: nothing to average
        matrix = _averaging(x, size, out).T  # (size, out)
        x = x @ matrix if axis == -1 else (x.transpose(axis, -1) @ matrix).transpose(axis, -1)
    return x


def _max(name: str, input: Any, output_size: Any, n: int, return_indices: bool) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    x, outs = _arguments(name, input, output_size, n)
    shape = x.shape[:-n] + outs
    if 0 in shape:
        values = _empty(x, shape)
    else:
        values = x
        # The last dimension first: so the first maximum kept is the first in row-major order.
        for k in reversed(range(n)):
            axis = k - n
            after = (slice(None),) * (-axis - 1)
            windows = adaptive_windows(values.shape[axis], outs[k])
            values = stack([values[(Ellipsis, slice(s, e)) + after].max(axis).values for s, e in windows], axis)
    if not return_indices:
        return values
    return values, _indices(x, n, outs)


def _indices(x: Tensor, n: int, outs: Tuple[int, ...]) -> Tensor:
    """Where each window's first maximum (row-major) is, as a row-major position within the pooled
    dimensions: an int64 tensor of the output's shape."""
    from ..tensor import _as_int64

    values = x.detach().to_numpy()
    spatial = values.shape[-n:]
    where = np.zeros(values.shape[:-n] + outs, dtype=np.int64)
    windows = [adaptive_windows(size, out) for size, out in zip(spatial, outs, strict=True)]
    for cell in np.ndindex(*outs) if where.size else ():  # (no windows to look at in an empty result)
        box = [windows[k][i] for k, i in enumerate(cell)]
        block = values[(Ellipsis,) + tuple(slice(s, e) for s, e in box)]
        first = np.argmax(block.reshape(block.shape[:-n] + (-1,)), axis=-1)
        local = np.unravel_index(first, tuple(e - s for s, e in box))
        where[(Ellipsis,) + cell] = np.ravel_multi_index(
            tuple(c + s for c, (s, _) in zip(local, box, strict=True)), spatial
        )
    return _as_int64(x._new(TensorData(where.astype(np.float64).reshape(-1), where.shape)))


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """The mean of each window of input (N, C, L) or (C, L): (N, C, output_size).

    :param input: a signal (N, C, L) or (C, L).
    :param output_size: the output's length, an int.
    """
    return _avg("adaptive_avg_pool1d", input, output_size, 1)


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """The mean of each window of input (N, C, H, W) or (C, H, W): (N, C, *output_size).

    :param input: an image (N, C, H, W) or (C, H, W).
    :param output_size: the output's (H, W): an int, or a pair whose None keeps that size.
    """
    return _avg("adaptive_avg_pool2d", input, output_size, 2)


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """The mean of each window of input (N, C, D, H, W) or (C, D, H, W): (N, C, *output_size).

    :param input: a volume (N, C, D, H, W) or (C, D, H, W).
    :param output_size: the output's (D, H, W): an int, or a triple of ints or None.
    """
    return _avg("adaptive_avg_pool3d", input, output_size, 3)


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """The largest value of each window of input (N, C, L) or (C, L): (N, C, output_size), and with
    ``return_indices=True`` also where each is (int64 positions along L).

    :param input: a signal (N, C, L) or (C, L).
    :param output_size: the output's length, an int.
    :param return_indices: also return where each largest value is.
    """
    return _max("adaptive_max_pool1d", input, output_size, 1, return_indices)


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """The largest value of each window of input (N, C, H, W) or (C, H, W): (N, C, *output_size),
    and with ``return_indices=True`` also where each is (int64, ``h * W + w``).

    :param input: an image (N, C, H, W) or (C, H, W).
    :param output_size: the output's (H, W): an int, or a pair whose None keeps that size.
    :param return_indices: also return where each largest value is.
    """
    return _max("adaptive_max_pool2d", input, output_size, 2, return_indices)


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """The largest value of each window of input (N, C, D, H, W) or (C, D, H, W), and with
    ``return_indices=True`` also where each is (int64, ``(d * H + h) * W + w``).

    :param input: a volume (N, C, D, H, W) or (C, D, H, W).
    :param output_size: the output's (D, H, W): an int, or a triple of ints or None.
    :param return_indices: also return where each largest value is.
    """
    return _max("adaptive_max_pool3d", input, output_size, 3, return_indices)
