"""Module 4: the UCI handwritten digits, 8x8, shipped inside the package.

Source: "Optical Recognition of Handwritten Digits", E. Alpaydin and C. Kaynak (1998), UCI
Machine Learning Repository, https://doi.org/10.24432/C50P49, licensed CC BY 4.0. The file
``data/digits.csv.gz`` is the copy scikit-learn ships (``sklearn/datasets/data/digits.csv.gz``,
the repository's test part: 1,797 images by 13 writers): one image a row, 64 pixel counts in
0..16 (row by row) and then the digit.
"""

import functools
import gzip
import io
from importlib import resources
from typing import List, Tuple

import numpy as np

from .base import ArrayDataset, Transform

_FILE = "digits.csv.gz"
_ROWS, _PIXELS = 1797, 64


@functools.lru_cache(maxsize=1)
def _load() -> Tuple[np.ndarray, np.ndarray]:
    """All 1,797 images (uint8 counts 0..16, shape (1797, 8, 8)) and labels, in file order; read-only."""
    source = resources.files(__package__) / "data" / _FILE
    text = gzip.decompress(source.read_bytes()).decode("ascii")
    table = np.loadtxt(io.StringIO(text), delimiter=",", dtype=np.int64, ndmin=2)
    if table.shape != (_ROWS, _PIXELS + 1):
        raise RuntimeError(f"{source}: expected {_ROWS} rows of {_PIXELS + 1} numbers, got shape {table.shape}")
    images = table[:, :_PIXELS].reshape(_ROWS, 8, 8).astype(np.uint8)
    labels = table[:, _PIXELS].copy()
    # Shared by every Digits made in this process: nobody may change them in place.
    images.flags.writeable = False
    labels.flags.writeable = False
    return images, labels


def _is_test(labels: np.ndarray) -> np.ndarray:
    """The fixed split: every fifth image of each digit, in file order (the 5th, 10th, ...), is a test image."""
    test = np.zeros(len(labels), dtype=bool)
    for digit in range(10):
        test[np.flatnonzero(labels == digit)[4::5]] = True
    return test


class Digits(ArrayDataset):
    """The UCI handwritten digits: 1,797 grey 8x8 images of the digits 0-9 (CC BY 4.0).

    ``.data`` (N, 8, 8) float64 in [0, 1] (the 0..16 pixel counts divided by 16), ``.targets``
    (N,) int64, and items ``(image tensor (1, 8, 8), int label)``. The split is fixed, so it is the
    same everywhere and involves no random numbers: every fifth image of each digit in file order
    (the 5th, 10th, ...) is in the test set (355 images, 20% of each class rounded down), the other
    1,442 in the training set.

    Data: E. Alpaydin and C. Kaynak, "Optical Recognition of Handwritten Digits", UCI Machine
    Learning Repository (1998), https://doi.org/10.24432/C50P49, CC BY 4.0; the copy that
    scikit-learn ships. See docs/datasets.md.

    :param train: the training set (True) or the test set (False).
    :param transform: a function applied to each image tensor as it is read (None: none).
    :param target_transform: a function applied to each int label (None: none).
    """

    classes = [str(digit) for digit in range(10)]

    def __init__(self, train: bool = True, transform: Transform = None, target_transform: Transform = None):
        if not isinstance(train, bool):
            raise TypeError(f"Digits(train=...): expected True (training set) or False (test set), got {train!r}")
        self.train: bool = train
        images, labels = _load()
        keep = ~_is_test(labels) if train else _is_test(labels)
        super().__init__(images[keep] / 16.0, labels[keep], transform, target_transform)

    def _describe(self) -> List[str]:
        return [f"Split: {'Train' if self.train else 'Test'}"]
