"""torchlight: a deep-learning framework built in stages, for teaching."""

from . import autograd, backends, datasets, nn, ops, optim, scalar
from .autograd import enable_grad, no_grad, set_grad_enabled
from .autograd import functions as _functions  # noqa: F401  (the ops by the contract's name)
from .backends import set_default_backend
from .draw import draw_graph
from .random import manual_seed
from .scalar_variable import Scalar
from .tensor import Tensor, ones, rand, tensor, zeros

__version__ = "0.1.0"

__all__ = [
    "Scalar",
    "Tensor",
    "autograd",
    "backends",
    "datasets",
    "draw_graph",
    "enable_grad",
    "manual_seed",
    "nn",
    "no_grad",
    "ones",
    "ops",
    "optim",
    "rand",
    "scalar",
    "set_default_backend",
    "set_grad_enabled",
    "tensor",
    "zeros",
]
