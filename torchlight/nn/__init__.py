"""torchlight.nn: modules, parameters and (from module 4) layers, and ``torchlight.nn.functional``."""

from . import functional
from .linear import Linear
from .module import Module, Parameter

__all__ = ["Linear", "Module", "Parameter", "functional"]
