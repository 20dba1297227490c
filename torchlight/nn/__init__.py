"""torchlight.nn: modules, parameters and (from module 4) layers."""

from .module import Module, Parameter
from .linear import Linear
