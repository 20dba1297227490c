"""Module 4's data: Digits (shipped), read_idx, MNIST and FashionMNIST (read and downloaded), Waveforms.

These check data the course gives the student, not code a stage asks for, so they carry no task
marker. Every IDX file here is written by the test itself, byte by byte from the format's
definition, and downloads come from a local HTTP server: no test needs the internet.
"""

import contextlib
import csv
import fnmatch
import functools
import gzip
import hashlib
import http.server
import io
import os
import socket
import struct
import threading
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from torchlight import Tensor, datasets
from torchlight.datasets import MNIST, Digits, FashionMNIST, Waveforms, read_idx

ROOT = Path(__file__).resolve().parents[2]

# ---------------------------------------------------------------------------------------------
# Digits


def _digits_file():
    """The shipped file's images (1797, 8, 8) as 0..16 counts and labels, read independently of torchlight."""
    raw = (resources.files("torchlight.datasets") / "data" / "digits.csv.gz").read_bytes()
    rows = [[int(v) for v in row] for row in csv.reader(io.StringIO(gzip.decompress(raw).decode()))]
    table = np.array(rows)
    return table[:, :64].reshape(-1, 8, 8), table[:, 64]


def test_digits_file_is_the_uci_set():
    images, labels = _digits_file()
    assert images.shape == (1797, 8, 8)
    assert images.min() == 0 and images.max() == 16
    assert sorted(set(labels.tolist())) == list(range(10))


@pytest.mark.parametrize("train, n", [(True, 1442), (False, 355)])
def test_digits_shapes_types_and_range(train, n):
    d = Digits(train=train)
    assert len(d) == n
    assert d.data.shape == (n, 8, 8) and d.data.dtype == np.float64
    assert d.targets.shape == (n,) and d.targets.dtype == np.int64
    assert d.data.min() == 0.0 and d.data.max() == 1.0
    assert np.array_equal(d.data * 16, np.round(d.data * 16))  # counts 0..16 divided by 16
    assert set(d.targets.tolist()) == set(range(10))
    assert d.classes == [str(k) for k in range(10)]


def test_digits_split_is_every_fifth_image_of_each_digit():
    images, labels = _digits_file()
    test = np.zeros(len(labels), dtype=bool)
    for digit in range(10):
        positions = np.flatnonzero(labels == digit)
        test[positions[4::5]] = True
    for train, rows in ((True, ~test), (False, test)):
        d = Digits(train=train)
        np.testing.assert_array_equal(d.data, images[rows] / 16.0)
        np.testing.assert_array_equal(d.targets, labels[rows])
    # disjoint and together the whole set: every image is in exactly one split, 20% of each class in test
    assert test.sum() + (~test).sum() == 1797
    for digit in range(10):
        assert (labels[test] == digit).sum() == (labels == digit).sum() // 5


def test_digits_split_is_fixed():
    a, b = Digits(train=False), Digits(train=False)
    np.testing.assert_array_equal(a.data, b.data)
    np.testing.assert_array_equal(a.targets, b.targets)
    a.data += 1.0  # each instance's data is its own: changing one changes no other
    np.testing.assert_array_equal(Digits(train=False).data, b.data)


def test_digits_items():
    d = Digits(train=False)
    x, y = d[3]
    assert isinstance(x, Tensor) and x.shape == (1, 8, 8)
    assert type(y) is int and y == d.targets[3]
    np.testing.assert_array_equal(x.to_numpy()[0], d.data[3])
    x_last, y_last = d[-1]
    np.testing.assert_array_equal(x_last.to_numpy()[0], d.data[len(d) - 1])
    assert not np.shares_memory(x._data.storage, d.data)  # changing an item cannot change the set


def test_digits_transforms():
    d = Digits(train=False, transform=lambda t: ("image", t), target_transform=lambda y: y + 100)
    (tag, x), y = d[0]
    assert tag == "image" and x.shape == (1, 8, 8)
    np.testing.assert_array_equal(x.to_numpy()[0], d.data[0])
    assert y == int(d.targets[0]) + 100


def test_item_errors():
    d = Digits(train=False)
    with pytest.raises(IndexError, match="index 355 is out of range for Digits of length 355"):
        d[355]
    with pytest.raises(IndexError, match="index -356"):
        d[-356]
    with pytest.raises(TypeError, match="indices must be integers, got float 1.5"):
        d[1.5]
    with pytest.raises(TypeError, match=r"Digits\(train=\.\.\.\): expected True .* got 'test'"):
        Digits(train="test")
    with pytest.raises(TypeError, match=r"Digits\(transform=\.\.\.\): expected a callable or None"):
        Digits(transform=3)


def test_digits_data_is_package_data():
    # A non-editable install ships only what pyproject.toml's package-data names: the data and
    # its CC BY 4.0 notice, beside it.
    tomllib = pytest.importorskip("tomllib")  # (Python 3.11+)
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["torchlight.datasets"]
    assert any(fnmatch.fnmatch("data/digits.csv.gz", p) for p in patterns)
    assert any(fnmatch.fnmatch("data/DIGITS-NOTICE.txt", p) for p in patterns)
    assert (ROOT / "torchlight" / "datasets" / "data" / "DIGITS-NOTICE.txt").is_file()


# ---------------------------------------------------------------------------------------------
# read_idx, on files written from the format's definition

TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def idx_bytes(array, code=0x08):
    """The IDX encoding of ``array`` with type code ``code``."""
    array = np.asarray(array)
    header = bytes([0, 0, code, array.ndim]) + b"".join(struct.pack(">I", n) for n in array.shape)
    return header + array.astype(TYPES[code]).tobytes()


def write(path, data, compress=False):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


rng = np.random.default_rng(4)


@pytest.mark.parametrize("code", sorted(TYPES))
def test_read_idx_every_type(tmp_path, code):
    values = rng.integers(0, 100, size=(3, 2, 4)) if code == 0x08 else rng.integers(-100, 100, size=(3, 2, 4))
    if code in (0x0D, 0x0E):
        values = values / 8.0  # exact in float32
    path = write(tmp_path / "a.idx", idx_bytes(values, code))
    got = read_idx(path)
    assert got.shape == (3, 2, 4)
    assert got.dtype == np.dtype(TYPES[code]).newbyteorder("=")
    np.testing.assert_array_equal(got, values)


def test_read_idx_images_and_labels_plain_and_gz(tmp_path):
    images = rng.integers(0, 256, size=(5, 28, 28))
    labels = np.array([3, 0, 9, 1, 7])
    for compress in (False, True):
        suffix = ".gz" if compress else ""
        im = write(tmp_path / f"images-idx3-ubyte{suffix}", idx_bytes(images), compress)
        lb = write(tmp_path / f"labels-idx1-ubyte{suffix}", idx_bytes(labels), compress)
        got_images, got_labels = read_idx(str(im)), read_idx(lb)
        assert got_images.dtype == np.uint8 and got_images.shape == (5, 28, 28)
        np.testing.assert_array_equal(got_images, images)
        np.testing.assert_array_equal(got_labels, labels)
    # compression is recognised by content, not by name
    renamed = write(tmp_path / "plain-name", idx_bytes(labels), compress=True)
    np.testing.assert_array_equal(read_idx(renamed), labels)


def test_read_idx_wrong_magic(tmp_path):
    good = idx_bytes(np.arange(6).reshape(2, 3))
    for bad in (b"\x00\x01" + good[2:], good[:2] + b"\x07" + good[3:], b"\x89PNG" + good[4:]):
        path = write(tmp_path / "bad-magic", bad)
        with pytest.raises(ValueError, match=r"bad-magic: not an IDX file: magic number 0x[0-9a-f]{8}"):
            read_idx(path)


def test_read_idx_truncated(tmp_path):
    data = idx_bytes(np.arange(24).reshape(2, 3, 4))
    path = write(tmp_path / "short", data[:-1])
    with pytest.raises(ValueError, match=r"short: truncated IDX file: shape \(2, 3, 4\) of uint8 needs 24 bytes.* 23"):
        read_idx(path)
    path = write(tmp_path / "short-header", data[:10])
    with pytest.raises(ValueError, match="short-header: truncated IDX file: its header needs 16 bytes"):
        read_idx(path)
    path = write(tmp_path / "empty", b"")
    with pytest.raises(ValueError, match="empty: truncated IDX file: 0 bytes"):
        read_idx(path)
    path = write(tmp_path / "long", data + b"\x00")
    with pytest.raises(ValueError, match="long: IDX file longer than its header says"):
        read_idx(path)
    path = write(tmp_path / "cut.gz", gzip.compress(data)[:-6])
    with pytest.raises(ValueError, match="cut.gz: damaged gzip file"):
        read_idx(path)
    with pytest.raises(FileNotFoundError, match="missing"):
        read_idx(tmp_path / "missing")


# ---------------------------------------------------------------------------------------------
# MNIST and FashionMNIST

STEMS = ["train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"]


def fake_mnist(n_train=6, n_test=4, seed=0):
    """{stem: IDX bytes} of a small MNIST-shaped set, and its arrays."""
    r = np.random.default_rng(seed)
    arrays = {
        "train-images-idx3-ubyte": r.integers(0, 256, size=(n_train, 28, 28)),
        "train-labels-idx1-ubyte": r.integers(0, 10, size=n_train),
        "t10k-images-idx3-ubyte": r.integers(0, 256, size=(n_test, 28, 28)),
        "t10k-labels-idx1-ubyte": r.integers(0, 10, size=n_test),
    }
    return {stem: idx_bytes(a) for stem, a in arrays.items()}, arrays


def write_set(folder, files, compress=False):
    for stem, data in files.items():
        write(Path(folder) / (stem + (".gz" if compress else "")), data, compress)


def check_set(ds, arrays, split):
    images, labels = arrays[f"{split}-images-idx3-ubyte"], arrays[f"{split}-labels-idx1-ubyte"]
    assert len(ds) == len(labels)
    assert ds.data.shape == (len(labels), 28, 28) and ds.data.dtype == np.float64
    np.testing.assert_array_equal(ds.data, images / 255.0)
    assert ds.targets.dtype == np.int64
    np.testing.assert_array_equal(ds.targets, labels)
    x, y = ds[1]
    assert isinstance(x, Tensor) and x.shape == (1, 28, 28) and type(y) is int and y == labels[1]
    np.testing.assert_array_equal(x.to_numpy()[0], images[1] / 255.0)


def test_mnist_from_root(tmp_path):
    files, arrays = fake_mnist()
    write_set(tmp_path, files)
    check_set(MNIST(tmp_path), arrays, "train")
    check_set(MNIST(str(tmp_path), train=False), arrays, "t10k")


def test_mnist_from_raw_folder_gz(tmp_path):
    files, arrays = fake_mnist(seed=1)
    write_set(tmp_path / "MNIST" / "raw", files, compress=True)
    ds = MNIST(tmp_path, train=False)
    check_set(ds, arrays, "t10k")
    assert "Split: Test" in repr(ds) and str(tmp_path) in repr(ds)


def test_fashion_mnist(tmp_path):
    files, arrays = fake_mnist(seed=2)
    write_set(tmp_path / "FashionMNIST" / "raw", files)
    ds = FashionMNIST(tmp_path)
    check_set(ds, arrays, "train")
    assert ds.classes[0] == "T-shirt/top" and ds.classes[9] == "Ankle boot"
    # each set has its own folder: MNIST does not pick up FashionMNIST's files
    with pytest.raises(FileNotFoundError, match="MNIST: train-images-idx3-ubyte not found.*download=True"):
        MNIST(tmp_path)


def test_mnist_bad_files(tmp_path):
    files, _ = fake_mnist()
    files["train-labels-idx1-ubyte"] = idx_bytes(np.zeros(5))  # 6 images, 5 labels
    write_set(tmp_path / "a", files)
    with pytest.raises(ValueError, match="train-images-idx3-ubyte has 6 images but .*train-labels-idx1-ubyte has 5"):
        MNIST(tmp_path / "a")

    files, _ = fake_mnist()
    files["t10k-labels-idx1-ubyte"] = idx_bytes([1, 2, 10, 3])
    write_set(tmp_path / "b", files)
    with pytest.raises(ValueError, match=r"t10k-labels-idx1-ubyte: labels must lie in 0..9, found 1..10"):
        MNIST(tmp_path / "b", train=False)

    files, _ = fake_mnist()
    files["train-images-idx3-ubyte"] = files["train-labels-idx1-ubyte"]  # labels where images belong
    write_set(tmp_path / "c", files)
    with pytest.raises(ValueError, match="train-images-idx3-ubyte: expected images, a 3-D IDX array"):
        MNIST(tmp_path / "c")

    files, _ = fake_mnist()
    files["train-images-idx3-ubyte"] = files["train-images-idx3-ubyte"][:-1]
    write_set(tmp_path / "d", files)
    with pytest.raises(ValueError, match="train-images-idx3-ubyte: truncated IDX file"):
        MNIST(tmp_path / "d")

    with pytest.raises(TypeError, match=r"MNIST\(root\): expected a folder path"):
        MNIST(None)
    with pytest.raises(TypeError, match=r"MNIST\(train=\.\.\.\): expected True"):
        MNIST(tmp_path / "a", train=1)


def test_canonical_resources_are_well_formed():
    for cls in (MNIST, FashionMNIST):
        assert [f for f, _ in cls.resources] == [s + ".gz" for s in STEMS]
        assert all(len(h) == 64 and int(h, 16) >= 0 for _, h in cls.resources)
        assert all(m.endswith("/") for m in cls.mirrors)
    assert MNIST.mirrors[0] == "https://ossci-datasets.s3.amazonaws.com/mnist/"
    assert len({h for cls in (MNIST, FashionMNIST) for _, h in cls.resources}) == 8


# ---------------------------------------------------------------------------------------------
# download=True, from a local server


@contextlib.contextmanager
def serving(folder):
    """An HTTP server on 127.0.0.1 serving ``folder``; yields (base URL, list of requested paths)."""
    requested = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            requested.append(self.path)
            super().do_GET()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", requested
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def closed_port_url():
    """A URL on 127.0.0.1 where nothing listens (the connection is refused at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/"


def publish(folder, files):
    """Write ``files`` gzipped into ``folder``; the (name, SHA-256) resources list for them."""
    out = []
    for stem, data in files.items():
        blob = gzip.compress(data)
        (Path(folder) / (stem + ".gz")).write_bytes(blob)
        out.append((stem + ".gz", hashlib.sha256(blob).hexdigest()))
    return out


@pytest.mark.parametrize("cls", [MNIST, FashionMNIST])
def test_download(tmp_path, monkeypatch, capsys, cls):
    files, arrays = fake_mnist(seed=3)
    served = tmp_path / "server"
    served.mkdir()
    resources_ = publish(served, files)
    root = tmp_path / "data"
    with serving(served) as (url, requested):
        # the first mirror is down: the second one serves
        monkeypatch.setattr(cls, "mirrors", [closed_port_url(), url])
        monkeypatch.setattr(cls, "resources", resources_)
        ds = cls(root, train=False, download=True)
        check_set(ds, arrays, "t10k")
        raw = root / cls.__name__ / "raw"
        assert sorted(os.listdir(raw)) == sorted(f for f, _ in resources_)  # all four, no leftovers
        assert sorted(requested) == sorted("/" + f for f, _ in resources_)
        assert "t10k-images-idx3-ubyte.gz" in capsys.readouterr().err  # the progress bar
        # files already there are not fetched again
        check_set(cls(root, train=True, download=True), arrays, "train")
        assert len(requested) == 4


def test_download_refuses_a_wrong_hash(tmp_path, monkeypatch):
    files, _ = fake_mnist(seed=5)
    served = tmp_path / "server"
    served.mkdir()
    resources_ = publish(served, files)
    resources_[2] = (resources_[2][0], "0" * 64)  # t10k-images: not the file expected
    root = tmp_path / "data"
    with serving(served) as (url, _):
        monkeypatch.setattr(MNIST, "mirrors", [url])
        monkeypatch.setattr(MNIST, "resources", resources_)
        with pytest.raises(RuntimeError, match=r"could not download t10k-images-idx3-ubyte.gz(.|\n)*SHA-256 mismatch"):
            MNIST(root, download=True)
    raw = root / "MNIST" / "raw"
    # the bad file was deleted (no partial file either); the two before it were kept
    assert sorted(os.listdir(raw)) == ["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"]


def test_download_reports_every_mirror(tmp_path, monkeypatch):
    served = tmp_path / "server"
    served.mkdir()  # serves nothing: 404
    dead = closed_port_url()
    with serving(served) as (url, _):
        monkeypatch.setattr(MNIST, "mirrors", [dead, url])
        with pytest.raises(RuntimeError, match=r"(?s)train-images-idx3-ubyte.gz.*" + dead + ".*" + url + ".*404"):
            MNIST(tmp_path / "data", download=True)
    assert os.listdir(tmp_path / "data" / "MNIST" / "raw") == []


# ---------------------------------------------------------------------------------------------
# Waveforms


def test_waveforms_shapes_and_items():
    w = Waveforms(n=10, length=32)
    assert len(w) == 10 and w.data.shape == (10, 32) and w.data.dtype == np.float64
    assert w.targets.dtype == np.int64
    x, y = w[2]
    assert isinstance(x, Tensor) and x.shape == (1, 32) and type(y) is int and y == w.targets[2]
    np.testing.assert_array_equal(x.to_numpy()[0], w.data[2])
    assert w.classes == ["sine", "square", "triangle", "sawtooth"]


def test_waveforms_seeded():
    a, b = Waveforms(n=12, seed=3), Waveforms(n=12, seed=3)
    np.testing.assert_array_equal(a.data, b.data)
    np.testing.assert_array_equal(a.targets, b.targets)
    assert not np.allclose(a.data, Waveforms(n=12, seed=4).data)
    assert not np.allclose(a.data, Waveforms(n=12, seed=3, train=False).data)


@pytest.mark.parametrize("n", [40, 42])
def test_waveforms_balanced(n):
    counts = np.bincount(Waveforms(n=n).targets, minlength=4)
    assert len(counts) == 4 and counts.max() - counts.min() <= (n % 4 != 0)


def test_waveforms_shapes_match_their_labels():
    """Without noise each signal is exactly its class's wave: check each class's defining property."""
    w = Waveforms(n=40, length=64, noise=0.0, seed=1)
    for signal, label in zip(w.data, w.targets, strict=True):
        amplitude = np.abs(signal).max()
        assert 0.5 - 1e-12 <= amplitude <= 1.0 + 1e-12
        step = np.diff(signal)
        if label == 0:  # sine: s[t-1] + s[t+1] = 2 cos(w) s[t] for one w
            c = np.linalg.lstsq(signal[1:-1, None], signal[:-2] + signal[2:], rcond=None)[0]
            np.testing.assert_allclose(signal[:-2] + signal[2:], c * signal[1:-1], atol=1e-9)
            # w = 2 pi f / 64 for f from 1 to 4 cycles per window
            assert 2 * np.cos(2 * np.pi * 4 / 64) - 1e-9 <= c[0] <= 2 * np.cos(2 * np.pi / 64) + 1e-9
        elif label == 1:  # square: only +a and -a, each for half a period
            np.testing.assert_allclose(np.abs(signal), amplitude, rtol=1e-12)
            edges = np.flatnonzero(np.diff(np.sign(signal))) + 1
            runs = np.diff(edges)  # the lengths of the runs between two jumps
            if len(runs):
                assert runs.max() - runs.min() <= 1
        elif label == 2:  # triangle: rises and falls at one slope, never jumps
            assert np.abs(step).max() <= 4 * amplitude * 4 / 64 + 1e-12
            assert np.isclose(np.abs(step), np.abs(step).max()).mean() > 0.8
        else:  # sawtooth: rises at one slope, or drops by more than the amplitude
            slope = step.max()
            assert slope > 0 and np.all(np.isclose(step, slope, rtol=1e-9) | (step < -amplitude))


def test_waveforms_noise():
    clean, noisy = Waveforms(n=40, noise=0.0), Waveforms(n=40, noise=0.1)
    np.testing.assert_array_equal(clean.targets, noisy.targets)
    residual = noisy.data - clean.data
    assert abs(residual.std() - 0.1) < 0.005 and abs(residual.mean()) < 0.005


def test_waveforms_bad_arguments():
    with pytest.raises(ValueError, match=r"Waveforms\(n=...\): expected at least 1, got 0"):
        Waveforms(n=0)
    with pytest.raises(TypeError, match=r"Waveforms\(n=...\): expected an int, got float 2.5"):
        Waveforms(n=2.5)
    with pytest.raises(ValueError, match=r"Waveforms\(length=...\): expected at least 2, got 1"):
        Waveforms(length=1)
    with pytest.raises(ValueError, match=r"Waveforms\(noise=...\): expected a standard deviation >= 0, got -0.1"):
        Waveforms(noise=-0.1)
    with pytest.raises(ValueError, match=r"Waveforms\(seed=...\): expected 0 <= seed < 2\*\*32, got -1"):
        Waveforms(seed=-1)
    with pytest.raises(TypeError, match=r"Waveforms\(train=...\)"):
        Waveforms(train=None)


def test_public_names():
    for name in ("Digits", "MNIST", "FashionMNIST", "Waveforms", "read_idx", "xor", "get", "TOY", "Graph"):
        assert name in datasets.__all__ and getattr(datasets, name).__doc__
