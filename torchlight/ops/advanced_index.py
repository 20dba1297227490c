"""Module 4: advanced indexing, ``x[idx]`` with lists, ranges or tensors of integers and bool masks.

Module 2's indexing (``ops/movement.py``: integers, slices, ``None``, ``...``) gives views. An index
that is a sequence picks arbitrary elements, so its result is a copy: ``x[[0, 2]]`` rows 0 and 2,
``x[[0, 2], [1, 3]]`` the elements (0, 1) and (2, 3), ``x[x > 0]`` the positive elements in order,
with numpy's rules, which PyTorch follows (an index of several sequences broadcasts them; sequences
separated by a slice put their dimensions first).

The key is turned into the row-major positions of the picked elements (numpy applies the key to
``arange(numel).reshape(shape)``, on the host), and two Functions move values by those positions:
``Take`` reads them, and its backward ``Put`` adds a gradient back into zeros (an element picked
twice gets both gradients); each is the other's backward, so higher derivatives work too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Tuple

import numpy as np

from ..autograd.function import Context, Function
from ..tensor_data import IndexingError, Shape, TensorData, prod

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["Put", "Take", "index", "is_advanced", "positions"]


def is_advanced(key: Any) -> bool:
    """True for a key that needs advanced indexing: a list, range, tensor or array, alone or in a tuple."""
    parts = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, (list, range, tuple, np.ndarray)) or hasattr(k, "_data") for k in parts)


def index(a: Tensor, key: Any) -> Tensor:
    """``a[key]`` for a key with sequences of integers or bool masks: a new tensor, differentiable."""
    return Take.apply(a, positions(a.shape, key))


def positions(shape: Shape, key: Any) -> np.ndarray:
    """The row-major positions, in a tensor of ``shape``, of the elements ``key`` picks (in the
    result's shape)."""
    parts = key if isinstance(key, tuple) else (key,)
    every = np.arange(prod(shape), dtype=np.int64).reshape(shape)
    try:
        return np.asarray(every[tuple(_numpy_key(k) for k in parts)])
    except IndexError as e:
        raise IndexingError(str(e).replace("axis", "dimension")) from None


def _numpy_key(k: Any) -> Any:
    """One entry of the key as numpy reads it: tensors as int64 or bool arrays, ranges as lists."""
    if isinstance(k, range):
        return list(k)
    if isinstance(k, tuple):  # a tuple inside the key is a sequence of positions
        return [_numpy_key(x) for x in k]
    if isinstance(k, list):
        return [_numpy_key(x) if hasattr(x, "_data") else x for x in k]
    if not hasattr(k, "_data"):
        return k
    dtype = k.dtype
    values = k.detach().to_numpy()
    if dtype.is_floating_point:  # torchlight.tensor([0, 2]) is float64: accepted where it holds whole numbers
        if not np.all(np.isfinite(values) & (values == np.round(values))):
            raise IndexingError("tensors used as indices must be long, int, byte or bool tensors")
        return values.astype(np.int64)
    return values.astype(bool if dtype.numpy is np.bool_ else np.int64)


class Take(Function):
    """The elements of a at row-major ``positions`` (an int array), in positions' shape."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, positions: np.ndarray) -> Tensor:
        ctx.shape, ctx.positions = a.shape, positions
        values = a.contiguous().to_numpy().reshape(-1)[positions]
        return a._new(TensorData(np.ascontiguousarray(values, dtype=np.float64).reshape(-1), positions.shape))

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Tensor, None]:
        return Put.apply(g, ctx.shape, ctx.positions), None

    @staticmethod
    def jvp(ctx: Context, t: Tensor, t_positions: None = None) -> Tensor:
        return Take.apply(t, ctx.positions)


class Put(Function):
    """Zeros of ``shape`` with g's elements added at row-major ``positions``: Take's backward."""

    @staticmethod
    def forward(ctx: Context, g: Tensor, shape: Shape, positions: np.ndarray) -> Tensor:
        ctx.shape, ctx.positions = tuple(shape), positions
        out = np.zeros(prod(shape))
        np.add.at(out, positions.reshape(-1), g.contiguous().to_numpy().reshape(-1))
        return g._new(TensorData(out, tuple(shape)))

    @staticmethod
    def backward(ctx: Context, gg: Tensor) -> Tuple[Tensor, None, None]:
        return Take.apply(gg, ctx.positions), None, None

    @staticmethod
    def jvp(ctx: Context, t: Tensor, t_shape: None = None, t_positions: None = None) -> Tensor:
        return Put.apply(t, ctx.shape, ctx.positions)
