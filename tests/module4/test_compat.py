"""``torchlight.compat`` (issue 22): PyTorch programs run unchanged, ``import torch`` giving
torchlight and ``torchvision`` serving the tutorials' data sets (real files where they are there,
stand-ins made of the Digits otherwise), transforms and ``make_grid``.

The shim's ``torch`` replaces ``sys.modules["torch"]``, so what imports it runs in a child
process (``python -m torchlight.compat run``); its ``torchvision`` imports only torchlight and is
tested here directly. The child runs a short program in the tutorials' style (written here, not
a copy of one), so the test takes seconds; docs/pytorch.md lists which published tutorials run.
"""

import gzip
import importlib
import os
import pickle
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import torchlight
import torchlight.nn.functional as F
from torchlight import compat
from torchlight.compat import standins
from torchlight.datasets.digits import Digits

pytestmark = pytest.mark.task4_5

datasets = importlib.import_module("torchlight.compat._shim.torchvision.datasets")
transforms = importlib.import_module("torchlight.compat._shim.torchvision.transforms")
tv_utils = importlib.import_module("torchlight.compat._shim.torchvision.utils")
tv_io = importlib.import_module("torchlight.compat._shim.torchvision.io")


@pytest.fixture
def no_limit(monkeypatch):
    monkeypatch.delenv(standins.LIMIT_VARIABLE, raising=False)


def test_stand_ins_are_the_digits_at_the_tutorials_shapes(no_limit, monkeypatch):
    digits = Digits(train=True)
    grey, labels = standins.digits_as(True, 28)
    assert grey.shape == (len(digits), 28, 28) and grey.dtype == np.uint8
    np.testing.assert_array_equal(labels, digits.targets)
    # each pixel a 3 x 3 block, framed by 2 black pixels
    assert not grey[:, :2].any() and not grey[:, -2:].any() and not grey[:, :, :2].any() and not grey[:, :, -2:].any()
    np.testing.assert_array_equal(grey[:, 2:26:3, 2:26:3], np.rint(digits.data * 255).astype(np.uint8))
    np.testing.assert_array_equal(grey[:, 4:26:3, 4:26:3], grey[:, 2:26:3, 2:26:3])
    colour, _ = standins.digits_as(False, 32, channels=3)
    assert colour.shape == (len(Digits(train=False)), 32, 32, 3)
    np.testing.assert_array_equal(colour[..., 0], colour[..., 2])
    monkeypatch.setenv(standins.LIMIT_VARIABLE, "10")
    assert standins.digits_as(True, 28)[0].shape == (10, 28, 28)
    monkeypatch.setenv(standins.LIMIT_VARIABLE, "ten")
    with pytest.raises(ValueError, match="TORCHLIGHT_COMPAT_LIMIT='ten'"):
        standins.limit()


def test_the_nn_tutorials_pickle(no_limit, tmp_path):
    path = compat.write_mnist_pickle(tmp_path / "data" / "mnist" / "mnist.pkl.gz")
    with gzip.open(path, "rb") as f:
        (x_train, y_train), (x_valid, y_valid), (x_test, y_test) = pickle.load(f, encoding="latin-1")
    assert x_train.shape == (1442, 784) and x_train.dtype == np.float32 and y_train.dtype == np.int64
    assert x_valid.shape == (355, 784) and 0.0 <= x_train.min() and x_train.max() <= 1.0
    np.testing.assert_array_equal(x_valid, x_test)
    np.testing.assert_array_equal(y_train, Digits(train=True).targets)


def test_fashion_mnist_is_a_stand_in_without_its_files(no_limit, tmp_path):
    with pytest.warns(UserWarning, match="stand-in"):
        raw = datasets.FashionMNIST(root=str(tmp_path), train=False, download=True)
    image, label = raw[0]
    assert isinstance(image, np.ndarray) and image.shape == (28, 28) and image.dtype == np.uint8
    assert isinstance(label, int) and len(raw) == 355
    assert raw.classes[0] == "T-shirt/top" and raw.data.shape == (355, 28, 28)
    assert raw.targets.dtype == torchlight.int64
    hot = datasets.FashionMNIST(
        root=str(tmp_path),
        transform=transforms.ToTensor(),
        target_transform=transforms.Lambda(lambda y: F.one_hot(torchlight.tensor(y), 10).float()),
    )
    x, y = hot[3]
    assert x.shape == (1, 28, 28) and 0.0 <= x.min().item() and x.max().item() <= 1.0
    assert y.tolist() == [1.0 if i == Digits(train=True).targets[3] else 0.0 for i in range(10)]


def idx(array, magic):
    return bytes([0, 0, 0x08, magic]) + b"".join(struct.pack(">I", n) for n in array.shape) + array.tobytes()


def test_mnist_and_cifar10_read_their_files_where_root_has_them(no_limit, tmp_path):
    rng = np.random.default_rng(0)
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    images = rng.integers(0, 256, size=(5, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=5, dtype=np.uint8)
    for split in ("train", "t10k"):
        (raw / f"{split}-images-idx3-ubyte").write_bytes(idx(images, 3))
        (raw / f"{split}-labels-idx1-ubyte").write_bytes(idx(labels, 1))
    mnist = datasets.MNIST(root=str(tmp_path), train=True, transform=transforms.ToTensor())
    assert len(mnist) == 5
    np.testing.assert_array_equal(mnist[2][0].numpy()[0], images[2] / 255)
    assert mnist[2][1] == labels[2]
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    pixels = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        pixels[name] = rng.integers(0, 256, size=(2, 3072), dtype=np.uint8)
        with open(folder / name, "wb") as f:
            pickle.dump({"data": pixels[name], "labels": [1, 7]}, f)
    cifar = datasets.CIFAR10(root=str(tmp_path), train=False, transform=transforms.ToTensor())
    assert len(cifar) == 2 and cifar.targets == [1, 7] and cifar.data.shape == (2, 32, 32, 3)
    np.testing.assert_array_equal(cifar[1][0].numpy(), pixels["test_batch"][1].reshape(3, 32, 32) / 255)
    assert len(datasets.CIFAR10(root=str(tmp_path), train=True)) == 10


def test_transforms_as_torchvisions():
    hwc = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    t = transforms.ToTensor()(hwc)
    assert t.shape == (3, 2, 3)
    np.testing.assert_array_equal(t.numpy(), hwc.transpose(2, 0, 1) / 255)
    normalize = transforms.Normalize((0.5, 0.25, 0.0), (0.5, 0.5, 2.0))
    expected = (hwc.transpose(2, 0, 1) / 255 - np.array([0.5, 0.25, 0.0])[:, None, None]) / np.array([0.5, 0.5, 2.0])[
        :, None, None
    ]
    np.testing.assert_allclose(transforms.Compose([transforms.ToTensor(), normalize])(hwc).numpy(), expected)
    assert transforms.Lambda(lambda v: v * 2)(3) == 6
    with pytest.raises(TypeError, match="pic should be PIL Image or ndarray"):
        transforms.ToTensor()(t)
    with pytest.raises(TypeError, match="should be callable"):
        transforms.Lambda(3)
    with pytest.raises(NotImplementedError, match="read_image"):
        tv_io.read_image("cat.png")


def test_make_grid_lays_out_a_batch_as_torchvision():
    images = np.random.default_rng(1).random(size=(5, 1, 4, 3))
    grid = tv_utils.make_grid(torchlight.tensor(images), nrow=2, padding=1, pad_value=0.5).numpy()
    assert grid.shape == (3, 3 * 5 + 1, 2 * 4 + 1)  # 3 rows of 2, one-channel images made three
    np.testing.assert_array_equal(grid[1, 1:5, 1:4], images[0, 0])
    np.testing.assert_array_equal(grid[2, 6:10, 5:8], images[3, 0])
    assert grid[0, 0, 0] == 0.5 and grid[0, 11:15, 5:8].tolist() == [[0.5] * 3] * 4  # the empty sixth place
    one = tv_utils.make_grid(torchlight.tensor(images[0]), normalize=True).numpy()
    assert one.shape == (3, 4, 3) and one.min() == 0.0 and one.max() == 1.0


def test_models_say_why_they_are_missing():
    with pytest.raises(ImportError, match="torchvision.models is not in torchlight's torchvision shim"):
        importlib.import_module("torchlight.compat._shim.torchvision.models")


def test_mps_is_never_available():
    assert torchlight.backends.mps.is_available() is False
    assert torchlight.backends.mps.is_built() is False


def test_run_refuses_where_pytorch_is_already_imported(monkeypatch, tmp_path):
    program = tmp_path / "p.py"
    program.write_text("print('hi')\n")
    monkeypatch.setitem(sys.modules, "torch", type(sys)("torch"))
    with pytest.raises(RuntimeError, match="PyTorch is already imported"):
        compat.run(str(program))


PROGRAM = """
    import sys
    import torch
    from torch import nn
    import torch.nn.functional as F
    from torch.utils.data import DataLoader
    from torchvision import datasets
    from torchvision.transforms import Lambda, ToTensor

    torchlight = sys.modules["torchlight"]
    print("torch is", torch.__name__, torch.nn.Module is torchlight.nn.Module, F.relu is torchlight.nn.functional.relu)
    device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
    accelerated = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
    print("devices", device, accelerated)

    one_hot = Lambda(lambda y: F.one_hot(torch.tensor(y), num_classes=10).float())  # (scatter_ is module 5's)
    data = datasets.FashionMNIST(root="data", train=True, download=True, transform=ToTensor(), target_transform=one_hot)
    loader = DataLoader(data, batch_size=64, shuffle=True)
    X, y = next(iter(loader))
    print("batch", tuple(X.shape), tuple(y.shape), len(data))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.stack = nn.Sequential(nn.Linear(28 * 28, 32), nn.ReLU(), nn.Linear(32, 10))

        def forward(self, x):
            return self.stack(self.flatten(x))

    model = Net().to(device)
    print(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for step in range(20):
        loss = loss_fn(model(X), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    print("loss falls", losses[-1] < losses[0])
    torch.save(model.state_dict(), "model.pth")
    again = Net()
    again.load_state_dict(torch.load("model.pth", weights_only=True))
    with torch.no_grad():
        print("same", again(X).equal(model(X)))
"""


def test_a_tutorial_style_program_runs_unchanged(tmp_path):
    (tmp_path / "program.py").write_text(textwrap.dedent(PROGRAM))
    env = dict(os.environ, TORCHLIGHT_COMPAT_LIMIT="64", MPLBACKEND="Agg")
    env.pop("NUMBA_ENABLE_CUDASIM", None)  # the CPU, as on a learner's laptop without a GPU
    done = subprocess.run(
        [sys.executable, "-m", "torchlight.compat", "run", "program.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "torch is torchlight True True" in out
    assert "devices cpu cpu" in out or "devices cuda cuda" in out  # (cuda where a GPU is)
    assert "batch (64, 1, 28, 28) (64, 10) 64" in out
    assert "(stack): Sequential(\n    (0): Linear(in_features=784, out_features=32, bias=True)" in out
    assert "loss falls True" in out and "same True" in out
    assert "stand-in" in done.stderr  # the warning that says what the data is


def test_the_command_line_prints_the_path_and_writes_the_pickle(no_limit, tmp_path, capsys):
    from torchlight.compat.__main__ import main

    assert main(["path"]) == 0
    folder = capsys.readouterr().out.strip()
    assert folder == compat.shim_path()
    assert os.path.isfile(os.path.join(folder, "torch", "__init__.py"))
    assert os.path.isfile(os.path.join(folder, "torchvision", "datasets.py"))
    assert main(["mnist-pickle", str(tmp_path / "m.pkl.gz")]) == 0
    assert (tmp_path / "m.pkl.gz").is_file() and "stand-in" in capsys.readouterr().out
