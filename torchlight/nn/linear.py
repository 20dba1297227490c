"""Module 2: Linear, the fully connected layer ``y = x @ weight.T + bias``.

The first layer built from tensors: one matrix multiplication replaces the ``in * out`` Scalar
multiplications of module 1's ``ScalarLinear``. Module 3 makes it faster with one fused Function
(``ops/fused.py``) that computes the same values and gradients: module 3 plugs it in here as
``Linear.fused_function`` (this file knows nothing of it; ``Linear.fused`` switches it off).
"""

import math
import numbers
from typing import Callable, Optional, Union

import numpy as np

from .. import random
from ..backends import TensorBackend
from ..tensor import Tensor, tensor
from ..tensor_data import check_storage
from .module import Module, Parameter

__all__ = ["Linear"]


class Linear(Module):
    """Applies ``x @ weight.T + bias`` to the last dimension of ``x`` (as ``torch.nn.Linear``).

    ``weight`` has shape ``(out_features, in_features)`` and ``bias`` ``(out_features,)``; both
    start uniform in ``(-1/sqrt(in_features), 1/sqrt(in_features))``, PyTorch's default.

    :param in_features: the size of the last dimension of the input.
    :param out_features: the size of the last dimension of the output.
    :param bias: give the layer a bias.
    :param backend: the backend or its name of the parameters (default: the default backend).
    :param seed: draw the initial values from a new generator seeded with it.
    :param generator: a numpy Generator to draw them from, shared by several layers (each gets
        different values); neither: torchlight's generator (``torchlight.manual_seed``).
    """

    # Module 3: on the compiled backends forward runs the fused Function (the same values and
    # gradients, half the operations; stage 3.6 writes it), which module 3 registers here as
    # ``fused_function`` (None until then: the composed version runs). Module 2 teaches on the
    # simple backend, which keeps the composed version; set ``fused`` to False for the composed
    # version everywhere.
    fused = True
    fused_function: Optional[Callable[..., Tensor]] = None

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
        check_storage((out_features, in_features))  # (PyTorch's error for a weight too large, not numpy's)
        rng = random.generator(seed, generator)
        self.in_features, self.out_features = int(in_features), int(out_features)
        bound = 1.0 / math.sqrt(in_features)
        self.weight = Parameter(tensor(rng.uniform(-bound, bound, (out_features, in_features)), backend=backend))
        if bias:
            self.bias = Parameter(tensor(rng.uniform(-bound, bound, (out_features,)), backend=backend))
        else:
            self.register_parameter("bias", None)  # an empty slot, as PyTorch: parameters() skips it

    def forward(self, x: Tensor) -> Tensor:
        """``x`` of shape ``(..., in_features)`` to ``(..., out_features)``."""
        self._check_input(x)
        weight, bias = self.weight.value, None if self.bias is None else self.bias.value
        fused = self.fused_function
        if fused is not None and self.fused and x.backend.name != "simple":  # module 3's speed-up
            return fused(x, weight, bias)
        return self.composed(x, weight, bias)

    @staticmethod
    def composed(x: Tensor, weight: Tensor, bias: Optional[Tensor]) -> Tensor:
        """``x @ weight.T + bias`` in tensor operations (no bias: ``x @ weight.T``), as module 2 writes it."""
        # BEGIN SOLUTION 2.5
        y = x @ weight.T
        return y if bias is None else y + bias
        # END SOLUTION 2.5

    def _check_input(self, x: Tensor) -> None:
        if not isinstance(x, Tensor):
            raise TypeError(
                f"Linear expects a Tensor input, got {type(x).__name__}; make one with torchlight.tensor(...)"
            )
        if x.dims == 0 or x.shape[-1] != self.in_features:
            raise RuntimeError(
                f"Linear(in_features={self.in_features}, out_features={self.out_features}) got an input of "
                f"shape {x.shape}: its last dimension must be {self.in_features}"
            )

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
