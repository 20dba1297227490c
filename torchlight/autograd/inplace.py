"""Module 5: the in-place tensor operations, by their former name: they live in ``torchlight/ops/inplace.py``."""

from ..ops.inplace import *  # noqa: F403
from ..ops.inplace import __all__  # noqa: F401
