"""Example: ``torchvision.transforms`` for the tutorials: ToTensor, Lambda, Compose, Normalize.

As torchvision's, for what the shim's data sets give (numpy uint8 images where torchvision has
PIL images; a PIL image works too where Pillow is installed).
"""

from typing import Any, Callable, Sequence

import numpy as np

import torchlight

__all__ = ["ToTensor", "Lambda", "Compose", "Normalize"]


class ToTensor:
    """An image (H, W) or (H, W, C), uint8 or PIL, as a float tensor (C, H, W) in [0, 1]."""

    def __call__(self, pic: Any) -> Any:
        if isinstance(pic, torchlight.Tensor):
            raise TypeError("pic should be PIL Image or ndarray. Got <class 'torchlight.Tensor'>")
        array = np.asarray(pic)
        if array.ndim == 2:
            array = array[:, :, np.newaxis]
        if array.ndim != 3:
            raise ValueError(f"pic should be 2/3 dimensional. Got {array.ndim} dimensions.")
        values = array.transpose(2, 0, 1).astype(np.float64)
        if array.dtype == np.uint8:
            values /= 255
        return torchlight.tensor(np.ascontiguousarray(values))

    def __repr__(self) -> str:
        return "ToTensor()"


class Lambda:
    """A function as a transform."""

    def __init__(self, lambd: Callable[[Any], Any]):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img: Any) -> Any:
        return self.lambd(img)

    def __repr__(self) -> str:
        return "Lambda()"


class Compose:
    """Transforms applied one after another."""

    def __init__(self, transforms: Sequence[Callable[[Any], Any]]):
        self.transforms = list(transforms)

    def __call__(self, img: Any) -> Any:
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        return "Compose(\n" + "".join(f"    {t}\n" for t in self.transforms) + ")"


class Normalize:
    """``(x - mean) / std`` channel by channel, for a tensor (C, H, W) or (N, C, H, W)."""

    def __init__(self, mean: Sequence[float], std: Sequence[float], inplace: bool = False):
        self.mean, self.std, self.inplace = list(mean), list(std), inplace

    def __call__(self, tensor: Any) -> Any:
        if not isinstance(tensor, torchlight.Tensor):
            raise TypeError(f"Input tensor should be a torch tensor. Got {type(tensor)}.")
        if any(s == 0 for s in self.std):
            raise ValueError("std evaluated to zero after conversion to float64, leading to division by zero.")
        shape = (-1, 1, 1)
        mean = torchlight.tensor(self.mean).view(*shape)
        std = torchlight.tensor(self.std).view(*shape)
        return (tensor - mean) / std

    def __repr__(self) -> str:
        return f"Normalize(mean={self.mean}, std={self.std})"
