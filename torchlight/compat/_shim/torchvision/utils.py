"""Example: ``torchvision.utils.make_grid`` for the tutorials: a batch of images as one picture."""

import math
from typing import Any

import numpy as np

import torchlight

__all__ = ["make_grid"]


def make_grid(tensor: Any, nrow: int = 8, padding: int = 2, normalize: bool = False, pad_value: float = 0.0) -> Any:
    """Images (N, C, H, W) laid out ``nrow`` to a row with ``padding`` between them: (C, H', W').

    As torchvision's: one-channel images become three, one image (C, H, W) is returned as it is,
    ``normalize=True`` scales the whole batch to [0, 1] by its minimum and maximum.
    """
    images = np.asarray(tensor, dtype=np.float64)
    if images.ndim == 2:  # one image (H, W)
        images = images[np.newaxis]
    if images.ndim == 3:  # one image (C, H, W)
        images = images[np.newaxis]
    if images.shape[1] == 1:
        images = np.repeat(images, 3, axis=1)
    if normalize:
        low, high = images.min(), images.max()
        images = (images - low) / max(high - low, 1e-5)
    n, c, h, w = images.shape
    if n == 1:
        return torchlight.tensor(np.ascontiguousarray(images[0]))
    columns = min(nrow, n)
    rows = int(math.ceil(n / columns))
    height, width = h + padding, w + padding
    grid = np.full((c, rows * height + padding, columns * width + padding), pad_value, dtype=np.float64)
    for k in range(n):
        r, q = divmod(k, columns)
        top, left = r * height + padding, q * width + padding
        grid[:, top : top + h, left : left + w] = images[k]
    return torchlight.tensor(grid)
