"""torchlight.autograd: the autodiff engine shared by Scalar and Tensor (reverse and forward mode)."""

from . import forward_ad, functional, graph_nodes, inplace_tracking  # noqa: F401  (module 5: they register themselves)
from .engine import grad
from .function import Context, Function, History
from .function_api import InplaceFunction, NestedIOFunction
from .functional import gradgradcheck
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck
from .graph import backpropagate, topological_sort
from .numeric import central_difference
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
