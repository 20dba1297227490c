"""Example: ``torchvision.datasets`` for the tutorials: MNIST, FashionMNIST and CIFAR10.

Each reads the real files where ``root`` holds them (MNIST's and FashionMNIST's IDX files, as
``torchlight.datasets`` reads them; CIFAR-10's ``cifar-10-batches-py``) and otherwise serves
stand-ins made from torchlight's Digits with the data set's shapes (``torchlight.compat.standins``),
saying so once with a warning. Nothing is downloaded: ``download=True`` is accepted and only
looks for the files.

Items are ``(transform(image), target_transform(label))`` as torchvision's, except that an image
is a numpy uint8 array (H, W) or (H, W, 3) where torchvision gives a PIL image: ``ToTensor``
turns either into a float tensor (C, H, W) in [0, 1]. ``.data`` and ``.targets`` are as
torchvision's: a uint8-valued tensor (N, 28, 28) and an int64 tensor for MNIST and FashionMNIST,
a uint8 numpy array (N, 32, 32, 3) and a list of ints for CIFAR10.
"""

import os
import pickle
import warnings
from pathlib import Path
from typing import Any, Callable, List, Optional, Set, Tuple

import numpy as np

import torchlight
from torchlight import datasets as _datasets
from torchlight.compat import standins
from torchlight.utils.data import Dataset

__all__ = ["MNIST", "FashionMNIST", "CIFAR10"]

_warned: Set[str] = set()


def _stand_in(name: str) -> None:
    if name not in _warned:
        _warned.add(name)
        warnings.warn(
            f"{name}: no {name} files under root, and nothing is downloaded here: serving torchlight's "
            f"Digits scaled to {name}'s shape as a stand-in (torchlight.compat.standins)",
            stacklevel=4,
        )


class _ImageFolder(Dataset):
    """What the three share: images, targets, transforms, len and items."""

    classes: List[str] = []

    def __init__(
        self,
        root: Any,
        train: bool = True,
        transform: Optional[Callable] = None,
        target_transform: Optional[Callable] = None,
        download: bool = False,
    ):
        self.root = os.path.expanduser(str(root))
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        images, labels = self._load()
        n = standins.limit()
        self._images, self._labels = images[:n], labels[:n]

    def _load(self) -> Tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    @property
    def class_to_idx(self):
        return {name: i for i, name in enumerate(self.classes)}

    def __len__(self) -> int:
        return len(self._labels)

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        image: Any = self._images[index]
        label: Any = int(self._labels[index])
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return image, label

    def __repr__(self) -> str:
        lines = [f"Dataset {type(self).__name__}", f"    Number of datapoints: {len(self)}"]
        lines += [f"    Root location: {self.root}", f"    Split: {'Train' if self.train else 'Test'}"]
        if self.transform is not None:
            lines.append(f"    StandardTransform\n    Transform: {self.transform!r}")
        return "\n".join(lines)


class MNIST(_ImageFolder):
    """``torchvision.datasets.MNIST``: the real IDX files under ``root``, else the stand-in."""

    _reader = _datasets.MNIST
    classes = list(_datasets.MNIST.classes)

    def _load(self) -> Tuple[np.ndarray, np.ndarray]:
        try:
            real = self._reader(self.root, train=self.train)
        except FileNotFoundError:
            _stand_in(type(self).__name__)
            return standins.digits_as(self.train, 28)
        return np.rint(real.data * 255).astype(np.uint8), real.targets

    @property
    def data(self):
        return torchlight.tensor(self._images, dtype=torchlight.float64)

    @property
    def targets(self):
        return torchlight.tensor(self._labels, dtype=torchlight.int64)


class FashionMNIST(MNIST):
    """``torchvision.datasets.FashionMNIST``: the real IDX files under ``root``, else the stand-in."""

    _reader = _datasets.FashionMNIST
    classes = list(_datasets.FashionMNIST.classes)


class CIFAR10(_ImageFolder):
    """``torchvision.datasets.CIFAR10``: ``root/cifar-10-batches-py`` where it is there (the
    pickled batches torchvision downloads), else the stand-in."""

    classes = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]

    def _load(self) -> Tuple[np.ndarray, np.ndarray]:
        folder = Path(self.root) / "cifar-10-batches-py"
        names = [f"data_batch_{i}" for i in range(1, 6)] if self.train else ["test_batch"]
        if not all((folder / name).is_file() for name in names):
            _stand_in(type(self).__name__)
            return standins.digits_as(self.train, 32, channels=3)
        images, labels = [], []
        for name in names:
            with open(folder / name, "rb") as f:
                batch = pickle.load(f, encoding="latin1")
            images.append(np.asarray(batch["data"], dtype=np.uint8).reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
            labels.extend(batch["labels"])
        return np.ascontiguousarray(np.concatenate(images)), np.asarray(labels, dtype=np.int64)

    @property
    def data(self):
        return self._images

    @property
    def targets(self):
        return [int(label) for label in self._labels]
