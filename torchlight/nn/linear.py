"""Module 2: Linear, the fully connected layer ``y = x @ weight.T + bias``.

The first layer built from tensors: one matrix multiplication replaces the ``in * out`` Scalar
multiplications of module 1's ``ScalarLinear``.
"""

import math
import numbers
from typing import Optional, Union

import numpy as np

from ..autograd import functions as F
from ..backends import TensorBackend
from ..tensor import Tensor, tensor
from .module import Module, Parameter

__all__ = ["Linear"]


class Linear(Module):
    """Applies ``x @ weight.T + bias`` to the last dimension of ``x`` (as ``torch.nn.Linear``).

    ``weight`` has shape ``(out_features, in_features)`` and ``bias`` ``(out_features,)``; both
    start uniform in ``(-1/sqrt(in_features), 1/sqrt(in_features))``, PyTorch's default. The
    draw is reproducible: pass ``seed``, or a numpy ``generator`` shared by several layers so that
    each gets different values.
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        backend: Union[str, TensorBackend, None] = None,
        seed: Optional[int] = None,
        generator: Optional[np.random.Generator] = None,
    ):
        super().__init__()
        for name, n in (("in_features", in_features), ("out_features", out_features)):
            if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 1:
                raise ValueError(f"Linear(in_features, out_features): {name} must be a positive int, got {n!r}")
        if seed is not None and generator is not None:
            raise ValueError("Linear: pass seed or generator, not both")
        rng = generator if generator is not None else np.random.default_rng(seed)
        self.in_features, self.out_features = int(in_features), int(out_features)
        bound = 1.0 / math.sqrt(in_features)
        self.weight = Parameter(tensor(rng.uniform(-bound, bound, (out_features, in_features)), backend=backend))
        if bias:
            self.bias = Parameter(tensor(rng.uniform(-bound, bound, (out_features,)), backend=backend))
        else:
            self.register_parameter("bias", None)  # an empty slot, as PyTorch: parameters() skips it

    def forward(self, x: Tensor) -> Tensor:
        """``x`` of shape ``(..., in_features)`` to ``(..., out_features)``."""
        if not isinstance(x, Tensor):
            raise TypeError(f"Linear expects a Tensor input, got {type(x).__name__}; make one with torchlight.tensor(...)")
        if x.dims == 0 or x.shape[-1] != self.in_features:
            raise RuntimeError(
                f"Linear(in_features={self.in_features}, out_features={self.out_features}) got an input of "
                f"shape {x.shape}: its last dimension must be {self.in_features}"
            )
        return F.Linear.apply(x, self.weight.value, None if self.bias is None else self.bias.value)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
