"""The tensor operations: each a Function (``torchlight.autograd``) with a short forward, written
with the backend's primitives, and a backward written in tensor operations.

This package sits above the engine (``autograd``) and the storage (``tensor_data``, ``backends``);
``Tensor``'s methods call into it. One file per kind of operation, each naming its course module:

- ``elementwise.py`` (module 2): map and zip of scalar functions: add, mul, exp, relu, ...; and
  ``sub``, ``div``, ``tanh`` composed of them.
- ``reductions.py`` (module 2): sum and max.
- ``movement.py`` (module 2): views (view, permute, expand, squeeze, indexing) and copies.
- ``matmul.py`` (module 2): the matrix product.
- ``broadcast.py`` (module 2): ``_sum_to_shape``, a gradient summed back to a broadcast input's shape.
- ``fused.py`` (module 3): Sub, Div, Tanh and Linear as single Functions, for speed.
- ``inplace.py`` (module 5): add_, mul_, fill_, ``t[key] = value``, ...
- ``higher_order.py`` (module 5): Map's backward marked once_differentiable.
- ``advanced_index.py`` (module 4): ``x[[0, 2]]``, ``x[index_tensor]``, ``x[mask]``: copies by position.
- ``adaptive_pooling.py`` (module 4): adaptive average and max pooling in 1, 2 and 3 dimensions.
- ``fused_nn.py`` (module 4, speed): max pooling of side-by-side windows and the cross-entropy as
  single Functions over the backend's own kernels, where it has them (fast).
- ``scatter.py`` (module 5): ``scatter_``, ``scatter_add_`` and their out-of-place forms, written
  with ``inplace.py``'s SetItemAt and ``advanced_index.py``'s Put.
- ``joining.py``, ``selection.py``, ``statistics.py`` (PyTorch's API beyond the stages): cat,
  stack, repeat; where, maximum, minimum, clamp, masked_fill; min, argmax, var, std, any.

docs/adding_an_operation.md says how to add one.
"""

from .elementwise import (
    EQ,
    GT,
    LT,
    Abs,
    Add,
    Cos,
    Exp,
    Inv,
    InvBack,
    IsClose,
    Log,
    LogBack,
    Map,
    Mul,
    Neg,
    Pow,
    ReLU,
    ReluBack,
    Sigmoid,
    Sin,
    Sqrt,
    div,
    sub,
    tanh,
)
from .fused import Div, Linear, Sub, Tanh
from .higher_order import _MapOnceDifferentiable  # noqa: F401  (registers itself)
from .inplace import AddInplace, DivInplace, Fill, MulInplace, SetItem
from .joining import Cat
from .matmul import MatMul
from .movement import BroadcastView, Copy, Gather, Index, IndexBack, Permute, Squeeze, To, Unsqueeze, View
from .reductions import Max, MaxDim, Sum
from .selection import Maximum, Where

__all__ = [
    "Abs",
    "Add",
    "AddInplace",
    "BroadcastView",
    "Copy",
    "Div",
    "DivInplace",
    "EQ",
    "Exp",
    "Fill",
    "GT",
    "Gather",
    "Index",
    "IndexBack",
    "Inv",
    "InvBack",
    "IsClose",
    "LT",
    "Linear",
    "Log",
    "LogBack",
    "Map",
    "MatMul",
    "Max",
    "MaxDim",
    "Mul",
    "MulInplace",
    "Neg",
    "Permute",
    "Pow",
    "ReLU",
    "ReluBack",
    "SetItem",
    "Sigmoid",
    "Sqrt",
    "Squeeze",
    "Sub",
    "Sum",
    "Tanh",
    "To",
    "Unsqueeze",
    "View",
    "Cat",
    "Sin",
    "Cos",
    "Maximum",
    "Where",
    "div",
    "sub",
    "tanh",
]
