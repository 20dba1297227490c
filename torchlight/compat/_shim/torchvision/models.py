"""Example: ``torchvision.models`` is not in the shim, and says why when a program imports it.

The tutorials that import it ("Save and Load the Model", the blitz's autograd page) load VGG-16 or
ResNet-18 with ImageNet weights: a download, and layers (``BatchNorm2d``) that torchlight does
not have. docs/pytorch.md says what of those pages runs with a model of your own instead.
"""

raise ImportError(
    "torchvision.models is not in torchlight's torchvision shim: its networks need downloaded weights and "
    "layers torchlight lacks (BatchNorm2d); build the model from torchlight.nn instead (see docs/pytorch.md)"
)
