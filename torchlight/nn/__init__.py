"""torchlight.nn: modules and parameters (module 0), Linear (module 2), and module 4's layers,
losses and ``torchlight.nn.functional`` (``import torchlight.nn.functional as F``).

Assembling the package also plugs module 3's fused Linear (``ops/fused.py``, stage 3.6) into the
layer (``nn/linear.py``, module 2), which does not import a later module's file.
"""

from ..ops import fused as _fused
from . import functional
from .activation import LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .adaptive_pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
)
from .container import Sequential
from .conv import Conv1d, Conv2d
from .dropout import Dropout
from .flatten import Flatten
from .linear import Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, MSELoss, NLLLoss
from .module import Module, Parameter
from .pooling import AvgPool2d, MaxPool2d

# Module 3's speed-up: on the compiled backends Linear runs the fused Function (Linear.fused).
Linear.fused_function = staticmethod(_fused.Linear.apply)

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "AvgPool2d",
    "BCELoss",
    "BCEWithLogitsLoss",
    "Conv1d",
    "Conv2d",
    "CrossEntropyLoss",
    "Dropout",
    "Flatten",
    "Linear",
    "LogSoftmax",
    "MSELoss",
    "MaxPool2d",
    "Module",
    "NLLLoss",
    "Parameter",
    "ReLU",
    "Sequential",
    "Sigmoid",
    "Softmax",
    "Tanh",
    "functional",
]
