"""torchlight.autograd: the reverse-mode engine shared by Scalar and Tensor."""

from .function import Context, Function, History, InplaceFunction, NestedIOFunction, once_differentiable
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .graph import backpropagate, grad, topological_sort
from .numeric import GradcheckError, central_difference, gradcheck, gradgradcheck
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
    "grad",
    "gradcheck",
    "gradgradcheck",
    "is_grad_enabled",
    "no_grad",
    "once_differentiable",
    "set_grad_enabled",
    "topological_sort",
]
