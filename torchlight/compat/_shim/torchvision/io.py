"""Example: ``torchvision.io`` for the tutorials: ``read_image`` is named, and says it is not there.

The "Datasets & DataLoaders" tutorial imports it for a custom data set over image files, which it
defines but never makes; decoding images is beyond the shim.
"""

from typing import Any

__all__ = ["read_image"]


def read_image(path: Any, mode: Any = None) -> Any:
    """Not available on torchlight: decode the file yourself (e.g. ``matplotlib.image.imread``)."""
    raise NotImplementedError(
        f"torchvision.io.read_image({str(path)!r}): torchlight's torchvision shim decodes no image files; read "
        "the file with matplotlib.image.imread (or Pillow) and make a tensor of its pixels"
    )
