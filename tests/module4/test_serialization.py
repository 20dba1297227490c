"""Module 4: torchlight.save and torchlight.load (torchlight/serialization.py).

State dicts go to numpy's .npz format without pickle; a file is replaced atomically; a truncated,
corrupted or foreign file raises an error naming it, never returns part of what was saved.
"""

import math
import os
import pickle
import zipfile

import numpy as np
import pytest

import torchlight
from torchlight import Scalar
from torchlight.nn import Linear, Module
from torchlight.serialization import load, save

rng = np.random.default_rng(7)


def sample():
    """Something with every kind of value a model's or an optimizer's state dict holds."""
    return {
        "fc.weight": torchlight.tensor(rng.normal(size=(3, 2)), backend="simple"),
        "fc.bias": torchlight.tensor(rng.normal(size=(3,)), backend="simple"),
        "zero_d": torchlight.tensor(2.5, backend="simple"),
        "scalar": Scalar(-1.25),
        "labels": np.array([3, 1, 4], dtype=np.int64),
        "optimizer": {
            "state": {0: {"step": 3, "exp_avg": torchlight.tensor([0.1, 1e-300], backend="simple")}},
            "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "nesterov": False, "params": [0, 1], "name": None}],
        },
        "specials": [math.inf, -math.inf, math.nan, 0.1 + 0.2, 2**70],
    }


def assert_same(a, b):
    assert type(a) is type(b), (a, b)
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    elif isinstance(a, torchlight.Tensor):
        assert a.shape == b.shape
        np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, Scalar):
        assert a.data == b.data
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b


def test_round_trip_keeps_structure_and_exact_values(tmp_path):
    obj = sample()
    save(obj, str(tmp_path / "state.npz"))  # str or Path
    back = load(tmp_path / "state.npz", backend="simple")
    assert_same(back, obj)
    assert back["fc.weight"].backend.name == "simple"
    assert back["fc.weight"] is not obj["fc.weight"] and back["fc.weight"].history is None


def test_load_puts_tensors_on_the_backend_asked_for(tmp_path):
    save({"w": torchlight.tensor([1.0, 2.0], backend="simple")}, tmp_path / "w.npz")
    assert load(tmp_path / "w.npz", backend="fast")["w"].backend.name == "fast"
    assert load(tmp_path / "w.npz")["w"].backend is torchlight.backends.default()


def test_the_file_is_an_npz_that_numpy_reads_without_pickle(tmp_path):
    save({"w": torchlight.tensor([[1.0, 2.0]], backend="simple")}, tmp_path / "w.npz")
    with np.load(tmp_path / "w.npz", allow_pickle=False) as npz:
        arrays = [npz[name] for name in npz.files]
    assert any(a.shape == (1, 2) and a.tolist() == [[1.0, 2.0]] for a in arrays)


def test_saved_tensor_is_a_snapshot(tmp_path):
    w = torchlight.tensor([1.0, 2.0], backend="simple")
    save({"w": w}, tmp_path / "w.npz")
    w.add_(10.0)
    np.testing.assert_array_equal(load(tmp_path / "w.npz")["w"].to_numpy(), [1.0, 2.0])


@pytest.mark.parametrize(
    "obj, message",
    [
        ({"f": lambda x: x}, r"got function at obj\['f'\]"),
        ({"a": [1, {"b": object()}]}, r"got object at obj\['a'\]\[1\]\['b'\]"),
        ({(1, 2): 3}, "str or int dict keys"),
        ({"a": np.array(["x"])}, "dtype <U1"),
    ],
)
def test_unsupported_values_are_named_and_nothing_is_written(tmp_path, obj, message):
    with pytest.raises(TypeError, match=message):
        save(obj, tmp_path / "x.npz")
    assert os.listdir(tmp_path) == []


def test_a_failed_save_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "model.npz"
    save({"w": torchlight.tensor([1.0], backend="simple")}, path)
    calls = []

    def crash(*args, **kwargs):  # the disk fills up while the second array is written
        calls.append(1)
        if len(calls) == 2:
            raise OSError("No space left on device")
        return write_array(*args, **kwargs)

    write_array = np.lib.format.write_array
    monkeypatch.setattr(np.lib.format, "write_array", crash)
    with pytest.raises(OSError, match="No space"):
        save({"w": torchlight.tensor([2.0], backend="simple"), "b": torchlight.tensor([3.0])}, path)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["model.npz"]
    assert load(path)["w"].item() == 1.0


def test_saving_replaces_the_file(tmp_path):
    path = tmp_path / "m.npz"
    save({"v": 1}, path)
    save({"v": 2}, path)
    assert load(path) == {"v": 2} and os.listdir(tmp_path) == ["m.npz"]


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "model.npz"
    save(sample(), path)
    return path


@pytest.mark.parametrize("fraction", [0.0, 0.01, 0.3, 0.5, 0.9, 0.99])
def test_truncated_file_raises_naming_it(saved, fraction):
    data = saved.read_bytes()
    saved.write_bytes(data[: int(len(data) * fraction)])
    with pytest.raises(RuntimeError, match=f"'{saved}' is not a valid torchlight file"):
        load(saved)


def test_every_flipped_byte_is_caught_or_harmless(saved):
    # zip's CRC-32 of each member is checked before anything is built: a change in the data
    # raises; a change in zip bookkeeping that does not reach the data (a timestamp) may load.
    data = saved.read_bytes()
    reference = load(saved, backend="simple")
    for offset in range(0, len(data), 13):
        damaged = bytearray(data)
        damaged[offset] ^= 0x5A
        saved.write_bytes(bytes(damaged))
        try:
            result = load(saved, backend="simple")
        except RuntimeError as err:
            assert str(saved) in str(err)
        else:
            assert_same(result, reference)


def test_garbage_raises_naming_the_file(tmp_path):
    path = tmp_path / "garbage.npz"
    path.write_bytes(bytes(rng.integers(0, 256, 500, dtype=np.uint8)))
    with pytest.raises(RuntimeError, match="garbage.npz' is not a valid torchlight file"):
        load(path)


def test_a_pickle_is_refused_without_running_it(tmp_path):
    path = tmp_path / "model.pt"
    path.write_bytes(pickle.dumps({"w": [1.0, 2.0]}))
    with pytest.raises(RuntimeError, match="model.pt' is not a valid torchlight file"):
        load(path)


def test_an_npz_holding_a_pickle_is_refused(tmp_path):
    path = tmp_path / "objects.npz"
    np.savez(path, a=np.array([{"x": 1}], dtype=object))
    with pytest.raises(RuntimeError, match="objects.npz' is not a valid torchlight file"):
        load(path)


def test_an_npz_not_written_by_torchlight_is_refused(tmp_path):
    path = tmp_path / "plain.npz"
    np.savez(path, w=np.ones(3))
    with pytest.raises(RuntimeError, match="no torchlight header"):
        load(path)


def test_a_foreign_header_is_refused(tmp_path, saved):
    path = tmp_path / "other.npz"
    with zipfile.ZipFile(saved) as src, zipfile.ZipFile(path, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name.startswith("__torchlight__"):
                data = data.replace(b'"version": 1', b'"version": 9')
            dst.writestr(name, data)
    with pytest.raises(RuntimeError, match="format version 9;"):
        load(path)


def test_missing_file_and_bad_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing.npz"):
        load(tmp_path / "nothing.npz")
    with pytest.raises(TypeError, match="file path"):
        save({}, 3)
    with pytest.raises(TypeError, match="file path"):
        load(None)


class Net(Module):
    def __init__(self):
        super().__init__()
        self.fc = Linear(2, 3, backend="simple")
        self.out = Linear(3, 1, backend="simple")

    def forward(self, x):
        return self.out(self.fc(x).relu())


def test_a_model_saved_and_loaded_computes_the_same(tmp_path):
    torchlight.manual_seed(1)
    trained = Net()
    torchlight.manual_seed(2)
    fresh = Net()
    x = torchlight.tensor(rng.normal(size=(4, 2)), backend="simple")
    save(trained.state_dict(), tmp_path / "net.npz")
    assert not np.array_equal(fresh(x).to_numpy(), trained(x).to_numpy())
    result = fresh.load_state_dict(load(tmp_path / "net.npz", backend="simple"))
    assert result.missing_keys == [] and result.unexpected_keys == []
    np.testing.assert_array_equal(fresh(x).to_numpy(), trained(x).to_numpy())
    assert all(p.value.requires_grad and p.value.is_leaf for p in fresh.parameters())


def test_a_damaged_checkpoint_leaves_the_model_as_it_was(tmp_path):
    net = Net()
    before = {k: v.to_numpy() for k, v in net.state_dict().items()}
    path = tmp_path / "net.npz"
    save(Net().state_dict(), path)
    path.write_bytes(path.read_bytes()[:-40])
    with pytest.raises(RuntimeError, match="net.npz"):
        net.load_state_dict(load(path))
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(v.to_numpy(), before[k])
