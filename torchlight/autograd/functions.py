"""Module 5: the tensor operations, by the name the contract gives them (``torchlight.autograd.functions.Add``).

They live in ``torchlight/ops/`` (above the engine, which knows nothing of tensors); this module
re-exports them so that code written against this name keeps working. It imports every operation,
module 5's in-place ones included, so it belongs to module 5: no file of an earlier module imports it.
"""

from ..ops import *  # noqa: F403
from ..ops import __all__ as _ops
from ..ops.conv import Fold, Unfold  # module 4: the windows of a convolution

__all__ = [*_ops, "Fold", "Unfold"]
