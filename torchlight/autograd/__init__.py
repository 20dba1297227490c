"""torchlight.autograd: the autodiff engine shared by Scalar and Tensor (reverse and forward mode)."""

from . import forward_ad, functional  # noqa: E402  (torchlight.autograd.forward_ad, .functional)
from .engine import grad
from .function_api import Context, Function, History, InplaceFunction, NestedIOFunction
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .graph import backpropagate, topological_sort
from .numeric import GradcheckError, central_difference, gradcheck, gradgradcheck
from .once_differentiable import once_differentiable
from .variable import Variable

__all__ = [
    "Context",
    "Function",
    "GradcheckError",
    "History",
    "InplaceFunction",
    "NestedIOFunction",
    "Variable",
    "backpropagate",
    "central_difference",
    "enable_grad",
    "forward_ad",
    "functional",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "is_grad_enabled",
    "no_grad",
    "once_differentiable",
    "set_grad_enabled",
    "topological_sort",
]
