"""Module 4: torchlight.utils.data: Dataset, TensorDataset and DataLoader (batches, shuffling
that follows torchlight.manual_seed, drop_last, collation as PyTorch's default_collate), and the
fast path for array-backed data sets, which must give exactly what the example-by-example path
gives.
"""

import numpy as np
import pytest

import torchlight
from torchlight.utils.data import DataLoader, Dataset, TensorDataset, default_collate

rng = np.random.default_rng(12)
X = rng.normal(size=(10, 2, 3))
Y = np.arange(10) % 3


class Arrays(Dataset):
    """Like torchlight.datasets' image sets: ``.data``, ``.targets``, items (tensor (1, ...), int)."""

    def __init__(self, data, targets, transform=None):
        self.data, self.targets, self.transform = data, targets, transform
        self.calls = 0

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        self.calls += 1
        x = torchlight.tensor(self.data[i][None], backend="simple")
        return (x if self.transform is None else self.transform(x)), int(self.targets[i])


def tensor_dataset():
    return TensorDataset(torchlight.tensor(X, backend="simple"), torchlight.tensor(Y, backend="simple"))


def epoch(loader):
    return [[t.to_numpy() for t in batch] for batch in loader]


def test_tensor_dataset_items_and_length():
    ds = tensor_dataset()
    assert len(ds) == 10
    x, y = ds[3]
    np.testing.assert_array_equal(x.to_numpy(), X[3])
    assert y.item() == Y[3]
    with pytest.raises(IndexError):
        ds[10]


@pytest.mark.parametrize(
    "tensors, error, message",
    [
        ((), ValueError, "at least one tensor"),
        ((np.zeros(3),), TypeError, r"tensors\[0\] is a ndarray, expected a Tensor"),
        (((),), ValueError, "0-d"),
        (((3, 2), (4,)), ValueError, r"Size mismatch.*\[\(3, 2\), \(4,\)\]"),
    ],
)
def test_tensor_dataset_errors(tensors, error, message):
    # shapes stand for tensors, made in the test: importing this file builds no tensor (a student
    # edition collects it whatever stage the student is at)
    tensors = [torchlight.zeros(*t) if isinstance(t, tuple) else t for t in tensors]
    with pytest.raises(error, match=message):
        TensorDataset(*tensors)


def test_dataset_base_asks_for_its_methods():
    with pytest.raises(NotImplementedError, match="__getitem__"):
        Dataset()[0]
    with pytest.raises(NotImplementedError, match="__len__"):
        len(Dataset())


@pytest.mark.parametrize("batch_size, drop_last, sizes", [(4, False, [4, 4, 2]), (4, True, [4, 4]), (10, False, [10])])
def test_batches_in_order(batch_size, drop_last, sizes):
    loader = DataLoader(tensor_dataset(), batch_size=batch_size, drop_last=drop_last)
    assert len(loader) == len(sizes)
    batches = list(loader)
    assert [len(b[0]) for b in batches] == sizes
    np.testing.assert_array_equal(np.concatenate([b[0].to_numpy() for b in batches]), X[: sum(sizes)])
    np.testing.assert_array_equal(np.concatenate([b[1].to_numpy() for b in batches]), Y[: sum(sizes)])


def test_labels_are_int64_tensors_of_the_class_indices():
    x, y = next(iter(DataLoader(Arrays(X, Y), batch_size=4)))
    assert x.shape == (4, 1, 2, 3) and x.dtype == torchlight.float64
    assert y.dtype == torchlight.int64 and y.tolist() == Y[:4].tolist()


def test_shuffle_follows_manual_seed_with_a_new_order_each_epoch():
    loader = DataLoader(tensor_dataset(), batch_size=3, shuffle=True)
    torchlight.manual_seed(5)
    first, second = epoch(loader), epoch(loader)
    torchlight.manual_seed(5)
    assert all(np.array_equal(a, b) for a, b in zip(_flat(first), _flat(epoch(loader)), strict=True))
    orders = [np.concatenate([b[1] for b in e]) for e in (first, second)]
    assert not np.array_equal(orders[0], orders[1])
    for e in (first, second):  # each epoch is a permutation: every example once, with its own label
        xs, ys = np.concatenate([b[0] for b in e]), np.concatenate([b[1] for b in e])
        positions = [int(np.flatnonzero((X == x).all(axis=(1, 2)))[0]) for x in xs]
        assert sorted(positions) == list(range(10)) and ys.tolist() == Y[positions].tolist()


def _flat(e):
    return [t for batch in e for t in batch]


def test_order_is_drawn_when_iteration_starts():
    loader = DataLoader(tensor_dataset(), batch_size=10, shuffle=True)
    torchlight.manual_seed(3)
    it = iter(loader)
    torchlight.manual_seed(99)  # too late to change this epoch's order
    a = next(it)[1].to_numpy()
    torchlight.manual_seed(3)
    np.testing.assert_array_equal(next(iter(loader))[1].to_numpy(), a)


def test_seed_and_generator():
    a = DataLoader(tensor_dataset(), batch_size=10, shuffle=True, seed=1)
    b = DataLoader(tensor_dataset(), batch_size=10, shuffle=True, seed=1)
    ea, eb = [next(iter(a))[1].to_numpy() for _ in range(2)], [next(iter(b))[1].to_numpy() for _ in range(2)]
    np.testing.assert_array_equal(ea, eb)
    assert not np.array_equal(ea[0], ea[1])  # one generator for the loader's life: a new order each epoch
    g = np.random.default_rng(1)
    c = DataLoader(tensor_dataset(), batch_size=10, shuffle=True, generator=g)
    order = np.random.default_rng(1).permutation(10)
    np.testing.assert_array_equal(next(iter(c))[1].to_numpy(), Y[order])
    with pytest.raises(ValueError, match="seed or generator, not both"):
        DataLoader(tensor_dataset(), shuffle=True, seed=1, generator=g)


def _same(e1, e2):
    assert len(e1) == len(e2)
    for b1, b2 in zip(e1, e2, strict=True):
        assert len(b1) == len(b2)
        for t1, t2 in zip(b1, b2, strict=True):
            assert t1.shape == t2.shape and t1.dtype == t2.dtype and t1.backend is t2.backend
            np.testing.assert_array_equal(t1.to_numpy(), t2.to_numpy())


@pytest.mark.parametrize("make", [tensor_dataset, lambda: Arrays(X, Y)], ids=["TensorDataset", "arrays"])
def test_fast_path_gives_what_collating_items_gives(make):
    fast = DataLoader(make(), batch_size=4, shuffle=True, seed=0)
    slow = DataLoader(make(), batch_size=4, shuffle=True, seed=0, collate_fn=default_collate)
    assert fast._fast_fetch() is not None
    _same([list(b) for b in fast], [list(b) for b in slow])


def test_fast_path_indexes_arrays_instead_of_items():
    ds = Arrays(X, Y)
    for _ in DataLoader(ds, batch_size=2, shuffle=True):
        pass
    assert ds.calls <= 2  # the first and last items, to check that they are the arrays' rows


@pytest.mark.parametrize(
    "make",
    [
        lambda: Arrays(X, Y, transform=lambda x: x * 2.0),  # a transform: items are not the rows
        lambda: Arrays(X.reshape(10, -1), Y),  # rows of 6 values, items (1, 6): still exact
        lambda: Arrays(X, Y.astype(np.float64) + 0.5),  # float targets: items' int() differs
    ],
    ids=["transform", "reshaped", "targets-differ"],
)
def test_items_decide_what_a_batch_holds(make):
    ds = make()
    got = [list(b) for b in DataLoader(ds, batch_size=4)]
    want = [default_collate([ds[i] for i in range(j, min(j + 4, 10))]) for j in range(0, 10, 4)]
    _same(got, want)


def test_default_collate_kinds():
    batch = default_collate([(np.ones(2), 1, 0.5, "a", {"k": True}), (np.zeros(2), 2, 1.5, "b", {"k": False})])
    assert isinstance(batch, list) and len(batch) == 5  # a list, as PyTorch's
    assert batch[0].tolist() == [[1.0, 1.0], [0.0, 0.0]]
    assert batch[1].dtype == torchlight.int64 and batch[1].tolist() == [1, 2]
    assert batch[2].dtype == torchlight.float64 and batch[2].tolist() == [0.5, 1.5]
    assert batch[3] == ["a", "b"]
    assert batch[4]["k"].dtype == torchlight.bool and batch[4]["k"].tolist() == [True, False]
    assert default_collate([1, 2.5]).dtype == torchlight.float64


@pytest.mark.parametrize(
    "batch, error, message",
    [
        ("two tensors", RuntimeError, r"equal size, but got \[1, 2\] at entry 0"),
        ([(1, 2), (1,)], RuntimeError, "each element in list of batch should be of equal size"),
        ([1, "a"], TypeError, "mixes numbers"),
        ([None, None], TypeError, "found NoneType"),
    ],
)
def test_default_collate_errors(batch, error, message):
    if batch == "two tensors":  # made here, not at import (see test_tensor_dataset_errors)
        batch = [torchlight.zeros(1, 2), torchlight.zeros(1, 3)]
    with pytest.raises(error, match=message):
        default_collate(batch)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(batch_size=0), ValueError, "batch_size should be a positive integer value, but got batch_size=0"),
        (dict(batch_size=-2), ValueError, "batch_size=-2"),
        (dict(batch_size=1.5), ValueError, "batch_size=1.5"),
        (dict(batch_size=True), ValueError, "batch_size=True"),
        (dict(batch_size=None), ValueError, "batch_size=None"),
        (dict(shuffle=1), ValueError, "shuffle should be a boolean value, but got shuffle=1"),
        (dict(drop_last="yes"), ValueError, "drop_last should be a boolean value"),
        (dict(generator=3), TypeError, "numpy Generator"),
        (dict(seed=1.5), TypeError, "seed should be an int"),
        (dict(collate_fn=3), TypeError, "collate_fn should be callable"),
    ],
)
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        DataLoader(tensor_dataset(), **kwargs)


def test_a_data_set_needs_items_and_a_length():
    with pytest.raises(TypeError, match="__getitem__ and __len__, got generator"):
        DataLoader(x for x in range(3))


def test_empty_data_set():
    loader = DataLoader(Arrays(X[:0], Y[:0]), batch_size=3, shuffle=True)
    assert len(loader) == 0 and list(loader) == []
