"""Example: ``torchvision`` for PyTorch's tutorials on torchlight (``torchlight.compat``'s shim).

Only what the beginner tutorials use: ``datasets`` (MNIST, FashionMNIST, CIFAR10: the real files
where ``root`` has them, else stand-ins made from torchlight's Digits), ``transforms`` (ToTensor,
Lambda, Compose, Normalize), ``utils.make_grid`` and ``io`` (whose ``read_image`` says it is not
there). ``models`` is not here: its networks need batch normalization and downloaded weights.
"""

from . import datasets, io, transforms, utils

__version__ = "0.0+torchlight.compat"

__all__ = ["datasets", "io", "transforms", "utils"]
