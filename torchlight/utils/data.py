"""Module 4: data sets and the loader that cuts them into shuffled mini-batches.

As ``torch.utils.data``: a ``Dataset`` gives one example per index (``dataset[i]``) and has a
length; a ``DataLoader`` walks through it in batches of ``batch_size`` examples, in order or
shuffled anew each epoch, stacking the examples of a batch into tensors whose first dimension is
the batch. Numbers become tensors with PyTorch's dtype for them: int labels an int64 tensor
(stored, like every torchlight tensor, as float64 holding whole numbers), floats a float64 one.

Stacking example by example costs a Python call per example; for data held in arrays there is a
fast path that indexes the arrays once per batch instead: for a ``TensorDataset``, and for a data
set with numpy ``.data`` and ``.targets`` whose items are exactly ``(tensor of data[i], targets[i])``
(as ``torchlight.datasets``' are without transforms; the loader checks this on the first and last
items before taking the fast path).
"""

import math
import numbers
import operator
from collections.abc import Mapping
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from .. import dtypes, random
from ..tensor import Tensor

__all__ = ["Dataset", "TensorDataset", "Subset", "random_split", "DataLoader", "default_collate"]


class Dataset:
    """Base class of data sets: subclasses define ``__getitem__(index)`` and ``__len__()``."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(index)")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__()")


class TensorDataset(Dataset):
    """Examples cut from tensors along their first dimension: item i is ``(t[i] for t in tensors)``."""

    def __init__(self, *tensors: Tensor):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor, e.g. TensorDataset(inputs, labels)")
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(
                    f"TensorDataset: tensors[{i}] is a {type(t).__name__}, expected a Tensor "
                    "(make one with torchlight.tensor(...))"
                )
            if t.dims == 0:
                raise ValueError(f"TensorDataset: tensors[{i}] is 0-d; each tensor needs a first dimension to index")
        if len({t.shape[0] for t in tensors}) > 1:
            raise ValueError(
                "Size mismatch between tensors: TensorDataset needs the same first dimension in every "
                f"tensor, got shapes {[tuple(t.shape) for t in tensors]}"
            )
        self.tensors: Tuple[Tensor, ...] = tensors

    def __getitem__(self, index: int) -> Tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The examples of ``dataset`` at ``indices``, in that order: item i is ``dataset[indices[i]]``.

    :param dataset: a data set (``__getitem__`` and ``__len__``).
    :param indices: the positions of its examples to keep, in order.
    """

    def __init__(self, dataset: Any, indices: Sequence[int]):
        if not (hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")):
            raise TypeError(f"Subset needs a data set with __getitem__ and __len__, got {type(dataset).__name__}")
        try:
            self.indices: List[int] = [operator.index(i) for i in indices]
        except TypeError as err:
            raise TypeError(f"Subset(indices): expected a sequence of ints, got {indices!r}") from err
        self.dataset = dataset

    def __getitem__(self, index: int) -> Any:
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(
    dataset: Any, lengths: Sequence[float], generator: Optional[np.random.Generator] = None
) -> List[Subset]:
    """``dataset`` cut at random into non-overlapping Subsets of the given lengths (as PyTorch's
    ``random_split``).

    :param dataset: a data set (``__getitem__`` and ``__len__``).
    :param lengths: whole numbers adding up to ``len(dataset)``, or fractions adding up to 1 (each
        part gets floor(fraction * len), the rest one by one to the first parts).
    :param generator: a numpy Generator to draw from (default: torchlight's, ``torchlight.manual_seed``).
    :raises ValueError: when the lengths do not add up.
    """
    n = len(dataset)
    if not lengths or any(isinstance(x, bool) or not isinstance(x, numbers.Real) or x < 0 for x in lengths):
        raise ValueError(f"random_split(lengths): expected non-negative numbers, got {list(lengths)!r}")
    sizes: List[int]
    if math.isclose(sum(lengths), 1.0) and sum(lengths) <= 1.0:
        sizes = [math.floor(n * fraction) for fraction in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
    elif all(isinstance(x, numbers.Integral) for x in lengths):
        sizes = [int(x) for x in lengths]
    else:
        raise ValueError(f"random_split(lengths): expected ints or fractions adding up to 1, got {list(lengths)!r}")
    if sum(sizes) != n:
        raise ValueError(
            f"Sum of input lengths does not equal the length of the input dataset! (lengths {sizes} add "
            f"up to {sum(sizes)}, the data set has {n} examples)"
        )
    if generator is not None and not isinstance(generator, np.random.Generator):
        raise TypeError(
            f"generator should be a numpy Generator (np.random.default_rng(seed)), got {type(generator).__name__}"
        )
    order = random.generator(generator=generator).permutation(n).tolist()
    ends = np.cumsum(sizes).tolist()
    return [Subset(dataset, order[end - size : end]) for end, size in zip(ends, sizes, strict=True)]


def default_collate(batch: Sequence[Any]) -> Any:
    """The examples of ``batch`` stacked, as PyTorch's ``default_collate``: tensors and arrays into
    one tensor with a new first dimension, numbers into a tensor (int64 for ints, float64 for
    floats, bool for bools), tuples and lists position by position (into a list), dicts key by
    key; strings stay a list.

    :param batch: the examples, a list.
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack([t.to_numpy() if isinstance(t, Tensor) else t for t in batch], elem.backend)
    if isinstance(elem, np.ndarray):
        return _stack(list(batch), None)
    if isinstance(elem, numbers.Real):
        if not all(isinstance(x, numbers.Real) for x in batch):
            raise TypeError(f"default_collate: a batch mixes numbers and {_kinds(batch)}")
        return _tensor(np.array(batch), None)
    if isinstance(elem, str):
        return list(batch)
    if isinstance(elem, Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, (tuple, list)):
        if any(len(x) != len(elem) for x in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(column)) for column in zip(*batch, strict=True)]
    raise TypeError(
        "default_collate: batch must contain tensors, numpy arrays, numbers, strings, dicts or "
        f"lists; found {type(elem).__name__}"
    )


def _kinds(batch: Sequence[Any]) -> str:
    return ", ".join(sorted({type(x).__name__ for x in batch}))


def _stack(arrays: List[Any], backend: Any) -> Tensor:
    """One tensor of shape (len(arrays), *shape) from arrays of one shape."""
    shapes = [np.shape(a) for a in arrays]
    for i, shape in enumerate(shapes):
        if shape != shapes[0]:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shapes[0])} at entry 0 and "
                f"{list(shape)} at entry {i}"
            )
    return _tensor(np.stack(arrays), backend)


def _tensor(values: np.ndarray, backend: Any) -> Tensor:
    """A tensor of ``values`` on ``backend`` (None: the default) with PyTorch's dtype for them."""
    t = Tensor.from_numpy(values, backend)
    dtype = dtypes.of_array(values)
    return t if dtype is dtypes.float64 else t.to(dtype)


class DataLoader:
    """Batches of ``batch_size`` examples of ``dataset``, as ``torch.utils.data.DataLoader``.

    Batches are always made in this process (the same batches PyTorch's worker processes would
    make).

    :param dataset: a data set (``__getitem__`` and ``__len__``).
    :param batch_size: the examples in each batch.
    :param shuffle: draw a new order at the start of each epoch (each ``iter(loader)``).
    :param drop_last: leave out a last, smaller batch.
    :param generator: a numpy Generator to draw the orders from.
    :param seed: without generator, the seed of a generator made once (neither: torchlight's,
        ``torchlight.manual_seed``).
    :param collate_fn: turns a list of examples into a batch (default: ``default_collate``).
    :param num_workers: accepted for PyTorch's programs (batches are made in this process).
    :param pin_memory: accepted for PyTorch's programs.
    """

    dataset: Any
    batch_size: int
    shuffle: bool
    drop_last: bool
    generator: Optional[np.random.Generator]
    collate_fn: Optional[Callable[[List[Any]], Any]]

    def __init__(
        self,
        dataset: Any,
        batch_size: int = 1,
        shuffle: bool = False,
        *,
        drop_last: bool = False,
        generator: Optional[np.random.Generator] = None,
        seed: Optional[int] = None,
        collate_fn: Optional[Callable[[List[Any]], Any]] = None,
        num_workers: int = 0,
        pin_memory: bool = False,
    ):
        if not (hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")):
            raise TypeError(f"DataLoader needs a data set with __getitem__ and __len__, got {type(dataset).__name__}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or batch_size < 1:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size!r}")
        for name, flag in (("shuffle", shuffle), ("drop_last", drop_last)):
            if not isinstance(flag, bool):
                raise ValueError(f"{name} should be a boolean value, but got {name}={flag!r}")
        if generator is not None and not isinstance(generator, np.random.Generator):
            raise TypeError(
                f"generator should be a numpy Generator (np.random.default_rng(seed)), got {type(generator).__name__}"
            )
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
            raise TypeError(f"seed should be an int, got {type(seed).__name__} {seed!r}")
        if isinstance(num_workers, bool) or not isinstance(num_workers, numbers.Integral) or num_workers < 0:
            raise ValueError(
                f"num_workers option should be non-negative; use num_workers=0 to disable multiprocessing "
                f"(got num_workers={num_workers!r})"
            )
        if not isinstance(pin_memory, bool):
            raise ValueError(f"pin_memory should be a boolean value, but got pin_memory={pin_memory!r}")
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError(f"collate_fn should be callable, got {type(collate_fn).__name__}")
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self.shuffle, self.drop_last = shuffle, drop_last
        self.collate_fn = collate_fn
        self.num_workers, self.pin_memory = int(num_workers), pin_memory  # (attributes, as PyTorch's loader has)
        # A seed makes one generator for the loader's life, so each epoch still gets a new order.
        self.generator = random.generator(seed=seed, generator=generator) if (seed, generator) != (None, None) else None

    def __len__(self) -> int:
        """The number of batches in an epoch."""
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self) -> Iterator[Any]:
        n = len(self.dataset)
        if self.shuffle:
            order = (self.generator or random.generator()).permutation(n)
        else:
            order = np.arange(n)
        fetch = self._fast_fetch() if self.collate_fn is None else None
        if fetch is None:
            collate = self.collate_fn or default_collate

            def fetch(indices: np.ndarray) -> Any:
                return collate([self.dataset[int(i)] for i in indices])

        return self._batches(order, fetch)

    def _batches(self, order: np.ndarray, fetch: Callable[[np.ndarray], Any]) -> Iterator[Any]:
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            yield fetch(order[start : start + self.batch_size])

    def _fast_fetch(self) -> Optional[Callable[[np.ndarray], Any]]:
        """A function making a batch from indices by indexing arrays once, or None when the data
        set is not one whose items it knows how to make."""
        dataset = self.dataset
        if isinstance(dataset, TensorDataset):
            columns = [(_array(t), t.backend, t.dtype) for t in dataset.tensors]
            return lambda idx: [_cast(Tensor.from_numpy(a[idx], backend), dtype) for a, backend, dtype in columns]
        data, targets = getattr(dataset, "data", None), getattr(dataset, "targets", None)
        if not (isinstance(data, np.ndarray) and isinstance(targets, np.ndarray)):
            return None
        n = len(dataset)
        if n == 0 or len(data) != n or len(targets) != n or data.dtype.kind not in "biuf":
            return None
        if getattr(dataset, "transform", None) is not None or getattr(dataset, "target_transform", None) is not None:
            return None
        first = dataset[0]
        if not _is_item(first, data, targets, 0) or not _is_item(dataset[n - 1], data, targets, n - 1):
            return None
        shape, backend, dtype = tuple(first[0].shape), first[0].backend, first[0].dtype
        label_type = np.int64 if isinstance(first[1], numbers.Integral) else np.float64  # as default_collate
        return lambda idx: [
            _cast(Tensor.from_numpy(data[idx].reshape((len(idx),) + shape), backend), dtype),
            _tensor(targets[idx].astype(label_type), None),
        ]


def _cast(t: Tensor, dtype: Any) -> Tensor:
    return t if dtype is dtypes.float64 else t.to(dtype)


def _array(t: Tensor) -> np.ndarray:
    """The tensor's values as a numpy array, sharing its storage where it is one contiguous block."""
    d = t._data
    if isinstance(d.storage, np.ndarray) and d.is_contiguous():
        return d.storage[d.offset : d.offset + d.size].reshape(d.shape)
    return t.to_numpy()


def _is_item(item: Any, data: np.ndarray, targets: np.ndarray, i: int) -> bool:
    """Whether ``item`` is ``(tensor of data[i]'s values in some shape, the number targets[i])``."""
    if not (isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], Tensor)):
        return False
    x, y = item
    values = x.to_numpy()
    if values.size != data[i].size or not np.array_equal(values.reshape(-1), data[i].reshape(-1)):
        return False
    return isinstance(y, numbers.Real) and not isinstance(y, bool) and float(y) == float(targets[i])
