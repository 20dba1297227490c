"""Module 4: what every array-backed data set shares: items, length, transforms.

A data set here holds all of its examples in memory as numpy arrays, the way torchvision's MNIST
does: ``.data`` (one example per row, float64) and ``.targets`` (int64 class labels). Item ``i``
is ``(example as a tensor with a channel dimension in front, int label)``, so a batch stacks to
the ``(N, C, ...)`` layout that ``conv1d`` and ``conv2d`` take.
"""

import numbers
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from ..tensor import Tensor

Transform = Optional[Callable[[Any], Any]]


class ArrayDataset:
    """Examples ``data[i]`` with class labels ``targets[i]``; items ``(tensor (1, *data[i].shape), int)``.

    ``transform`` (applied to the example tensor) and ``target_transform`` (applied to the int
    label) are optional callables, as in torchvision.
    """

    #: the class names, label i is ``classes[i]``
    classes: Sequence[str] = ()

    def __init__(
        self, data: np.ndarray, targets: np.ndarray, transform: Transform = None, target_transform: Transform = None
    ):
        if len(data) != len(targets):
            raise ValueError(f"{type(self).__name__}: {len(data)} examples but {len(targets)} labels")
        for name, fn in (("transform", transform), ("target_transform", target_transform)):
            if fn is not None and not callable(fn):
                raise TypeError(f"{type(self).__name__}({name}=...): expected a callable or None, got {fn!r}")
        self.data = np.ascontiguousarray(data, dtype=np.float64)
        self.targets = np.asarray(targets, dtype=np.int64)
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self) -> int:
        return len(self.targets)

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        if not isinstance(index, numbers.Integral) or isinstance(index, bool):
            raise TypeError(f"{type(self).__name__} indices must be integers, got {type(index).__name__} {index!r}")
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of range for {type(self).__name__} of length {n}")
        # A copy, so that changing an item's tensor in place cannot change the data set.
        example: Any = Tensor.from_numpy(self.data[index][np.newaxis].copy())
        label: Any = int(self.targets[index])
        if self.transform is not None:
            example = self.transform(example)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return example, label

    def _describe(self) -> List[str]:
        """Lines for ``repr`` after the name and the size (subclasses add theirs)."""
        return []

    def __repr__(self) -> str:
        lines = [f"Dataset {type(self).__name__}", f"    Number of datapoints: {len(self)}"]
        lines += ["    " + line for line in self._describe()]
        return "\n".join(lines)
