"""Example: stand-in data for PyTorch's tutorials, made from the Digits that ship with torchlight.

PyTorch's beginner tutorials download MNIST, FashionMNIST, CIFAR-10 or a pickled MNIST. Where
those files cannot be had (no network, or no wish to wait), the shim (``torchlight.compat``)
serves these instead: the UCI 8x8 digits (``torchlight.datasets.Digits``: 1,442 training and 355
test images), scaled up to the tutorial's shape, so that the tutorial's code runs as written.
They are *stand-ins*: the pictures are digits whatever the data set's name (a FashionMNIST
"Trouser" is a 1), and accuracies and losses are not the published ones.

- 28 x 28 grey (MNIST, FashionMNIST, the nn tutorial's pickle): each pixel becomes a 3 x 3 block
  (24 x 24), framed by 2 black pixels, as MNIST frames its digits;
- 32 x 32 x 3 (CIFAR-10): each pixel a 4 x 4 block, the same in the three channels.

``TORCHLIGHT_COMPAT_LIMIT=N`` keeps the first N images of each set (of the real files too), so
that a tutorial's epochs take seconds.
"""

import gzip
import os
import pickle
from pathlib import Path
from typing import Optional, Tuple, Union

import numpy as np

from torchlight.datasets.digits import Digits

__all__ = ["LIMIT_VARIABLE", "limit", "digits_as", "write_mnist_pickle"]

LIMIT_VARIABLE = "TORCHLIGHT_COMPAT_LIMIT"


def limit() -> Optional[int]:
    """How many images each data set keeps (``TORCHLIGHT_COMPAT_LIMIT``), or None for all."""
    text = os.environ.get(LIMIT_VARIABLE, "").strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{LIMIT_VARIABLE}={text!r}: expected a whole number of images, 1 or more")
    return int(text)


def digits_as(train: bool, size: int, channels: int = 0) -> Tuple[np.ndarray, np.ndarray]:
    """Digits as uint8 images of ``size`` x ``size`` (28 or 32), with ``channels`` last (0: grey,
    (N, size, size); 3: (N, size, size, 3)), and their int64 labels; cut to ``limit()``."""
    digits = Digits(train=train)
    pixels = np.rint(digits.data * 255).astype(np.uint8)  # (N, 8, 8): 0..16 counts were scaled to [0, 1]
    scale = size // 8
    images = np.kron(pixels, np.ones((scale, scale), dtype=np.uint8))  # each pixel a block
    frame = (size - 8 * scale) // 2
    images = np.pad(images, ((0, 0), (frame, size - 8 * scale - frame), (frame, size - 8 * scale - frame)))
    if channels:
        images = np.repeat(images[..., np.newaxis], channels, axis=-1)
    n = limit()
    return np.ascontiguousarray(images[:n]), digits.targets[:n].copy()


def write_mnist_pickle(path: Union[str, "os.PathLike[str]"]) -> Path:
    """Write the nn tutorial's ``mnist.pkl.gz`` from the stand-in digits: a gzipped pickle of
    ``((x_train, y_train), (x_valid, y_valid), (x_test, y_test))``, images as float32 rows of 784
    values in [0, 1] and labels int64, as the file the tutorial downloads (the training set is
    Digits' training set; validation and test are both Digits' test set).

    :param path: the file to write (its folders are made).
    :returns: the path, as a Path.
    """
    parts = []
    for train in (True, False):
        images, labels = digits_as(train, 28)
        parts.append((images.reshape(len(images), 28 * 28).astype(np.float32) / 255, labels))
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(target, "wb") as f:
        pickle.dump((parts[0], parts[1], parts[1]), f, protocol=2)
    return target
