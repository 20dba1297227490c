"""torchlight.nn: modules and parameters (module 0), Linear (module 2), and module 4's layers,
losses and ``torchlight.nn.functional`` (``import torchlight.nn.functional as F``)."""

from . import functional
from .activation import LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .container import Sequential
from .dropout import Dropout
from .flatten import Flatten
from .linear import Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, MSELoss, NLLLoss
from .module import Module, Parameter

__all__ = [
    "BCELoss",
    "BCEWithLogitsLoss",
    "CrossEntropyLoss",
    "Dropout",
    "Flatten",
    "Linear",
    "LogSoftmax",
    "MSELoss",
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
