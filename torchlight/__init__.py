"""torchlight: a deep-learning framework built in stages, for teaching."""

from . import autograd, scalar
from .autograd import enable_grad, no_grad, set_grad_enabled
from .scalar_variable import Scalar
from . import backends
from .backends import set_default_backend
from .tensor import Tensor, ones, rand, tensor, zeros
from . import datasets, nn

__version__ = "0.1.0"
