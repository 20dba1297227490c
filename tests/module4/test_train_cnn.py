"""Task 4.5: training a convolutional network (torchlight/examples/train_cnn.py).

LeNet's forward against a numpy composition of its layers, one training step (``train_step``)
against the loop written out and against torch.optim, short runs that learn on the fast backend
(Digits, Waveforms through conv1d, MNIST from IDX files the test writes) and on the simple one,
the pictures and the saved model, and the command line's errors.
"""

import gzip

import numpy as np
import pytest

import torchlight
from project import train
from torchlight.examples import plots_cnn, train_cnn
from torchlight.nn import functional as F
from torchlight.optim import Adam

from . import conv_reference as ref

pytestmark = pytest.mark.task4_5

BACKENDS = ["simple", "fast"]

PNG = b"\x89PNG\r\n\x1a\n"
rng = np.random.default_rng(45)


def assert_png(path):
    assert path.is_file(), f"{path} was not written"
    assert path.read_bytes()[:8] == PNG and path.stat().st_size > 1000


def small_lenet(backend, seed=0, classes=5):
    """A LeNet with few channels (the simple backend is pure Python)."""
    return train_cnn.LeNet((8, 8), classes, channels=(3, 4), hidden=6, backend=backend, seed=seed)


def numpy_lenet(model, x):
    """LeNet's forward written out in numpy: conv, relu, 2x2 max pool, twice; flatten; linear, relu, linear."""
    p = {name: param.value.to_numpy() for name, param in model.named_parameters()}

    def pool(h):
        n, c, hh, ww = h.shape
        return h.reshape(n, c, hh // 2, 2, ww // 2, 2).max(axis=(3, 5))

    h = pool(np.maximum(ref.conv(x, p["conv1.weight"], p["conv1.bias"], padding=1), 0.0))
    h = pool(np.maximum(ref.conv(h, p["conv2.weight"], p["conv2.bias"], padding=1), 0.0))
    h = np.maximum(h.reshape(len(x), -1) @ p["fc1.weight"].T + p["fc1.bias"], 0.0)
    return h @ p["fc2.weight"].T + p["fc2.bias"]


def cross_entropy_np(logits, labels):
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -log_probs[np.arange(len(labels)), labels].mean()


def test_lenet_parameters_are_named_and_shaped_as_in_pytorch():
    model = train_cnn.LeNet((8, 8), classes=10, backend="simple")
    assert [(name, p.value.shape) for name, p in model.named_parameters()] == [
        ("conv1.weight", (16, 1, 3, 3)), ("conv1.bias", (16,)),
        ("conv2.weight", (32, 16, 3, 3)), ("conv2.bias", (32,)),
        ("fc1.weight", (64, 32 * 2 * 2)), ("fc1.bias", (64,)),
        ("fc2.weight", (10, 64)), ("fc2.bias", (10,)),
    ]  # fmt: skip
    assert train_cnn.LeNet((28, 28), backend="simple").fc1.weight.value.shape == (64, 32 * 7 * 7)
    same, other = (train_cnn.LeNet(backend="simple", seed=s).conv1.weight.value.to_numpy() for s in (0, 1))
    assert np.array_equal(model.conv1.weight.value.to_numpy(), same)
    assert not np.array_equal(same, other)
    with pytest.raises(ValueError, match=r"multiples of 4, got \(8, 10\)"):
        train_cnn.LeNet((8, 10))


def test_lenet_forward_is_conv_relu_pool_twice_then_two_linear_layers(backend_name):
    model = small_lenet(backend_name)
    x = rng.normal(size=(3, 1, 8, 8))
    logits = model(torchlight.tensor(x, backend=backend_name))
    assert logits.shape == (3, 5)
    np.testing.assert_allclose(logits.to_numpy(), numpy_lenet(model, x), rtol=1e-10, atol=1e-12)


def test_signal_net_forward_is_conv1d_relu_pool_conv1d_relu_max_over_time():
    model = train_cnn.SignalNet(classes=4, channels=(3, 5), backend="fast", seed=2)
    x = rng.normal(size=(2, 1, 12))
    p = {name: param.value.to_numpy() for name, param in model.named_parameters()}
    h = np.maximum(ref.conv(x, p["conv1.weight"], p["conv1.bias"], padding=3), 0.0)
    h = h.reshape(2, 3, 6, 2).max(axis=3)
    h = np.maximum(ref.conv(h, p["conv2.weight"], p["conv2.bias"], padding=2), 0.0)
    expected = h.max(axis=2) @ p["fc.weight"].T + p["fc.bias"]
    np.testing.assert_allclose(model(torchlight.tensor(x, backend="fast")).to_numpy(), expected, rtol=1e-10)


BATCHES = [(rng.uniform(0.0, 1.0, (4, 1, 8, 8)), rng.integers(0, 5, 4)) for _ in range(3)]


def test_train_step_is_forward_loss_backward_step(backend_name):
    # train_step against the same loop written out: zero_grad, forward, cross-entropy, backward, step
    model, reference = small_lenet(backend_name), small_lenet(backend_name)
    opt, ref_opt = Adam(model.parameters(), lr=0.05), Adam(reference.parameters(), lr=0.05)
    for x, y in BATCHES:
        tx = torchlight.tensor(x, backend=backend_name)
        ty = torchlight.tensor(y, dtype=torchlight.int64, backend=backend_name)
        expected_logits = numpy_lenet(model, x)  # before the step
        loss, logits = train_cnn.train_step(model, opt, tx, ty)
        np.testing.assert_allclose(logits.detach().to_numpy(), expected_logits, rtol=1e-10, atol=1e-12)
        assert loss.item() == pytest.approx(cross_entropy_np(expected_logits, y), rel=1e-10)
        ref_opt.zero_grad()
        F.cross_entropy(reference(tx), ty).backward()
        ref_opt.step()
        for (name, p), q in zip(model.named_parameters(), reference.parameters(), strict=True):
            np.testing.assert_allclose(p.value.to_numpy(), q.value.to_numpy(), rtol=1e-10, atol=1e-13, err_msg=name)
            assert p.value.grad is not None, f"{name} has no gradient after train_step"


def test_train_step_matches_torch():
    torch = pytest.importorskip("torch")
    model = small_lenet("fast", seed=3)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(1, 3, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(16, 6), torch.nn.ReLU(), torch.nn.Linear(6, 5),
    ).double()  # fmt: skip
    names = {"conv1": "0", "conv2": "3", "fc1": "7", "fc2": "9"}
    state = {
        f"{names[k.split('.')[0]]}.{k.split('.')[1]}": torch.tensor(v.to_numpy()) for k, v in model.state_dict().items()
    }
    net.load_state_dict(state)
    opt, torch_opt = Adam(model.parameters(), lr=0.05), torch.optim.Adam(net.parameters(), lr=0.05)
    for x, y in BATCHES:
        loss, logits = train_cnn.train_step(
            model,
            opt,
            torchlight.tensor(x, backend="fast"),
            torchlight.tensor(y, dtype=torchlight.int64, backend="fast"),
        )
        torch_opt.zero_grad()
        torch_logits = net(torch.tensor(x))
        torch_loss = torch.nn.functional.cross_entropy(torch_logits, torch.tensor(y))
        torch_loss.backward()
        torch_opt.step()
        np.testing.assert_allclose(logits.detach().to_numpy(), torch_logits.detach().numpy(), rtol=1e-9, atol=1e-12)
        assert loss.item() == pytest.approx(torch_loss.item(), rel=1e-9)
    for key, value in model.state_dict().items():
        expected = net.state_dict()[f"{names[key.split('.')[0]]}.{key.split('.')[1]}"].numpy()
        np.testing.assert_allclose(value.to_numpy(), expected, rtol=1e-8, atol=1e-11, err_msg=key)


def run(tmp_path, *args):
    return train_cnn.main(["--out", str(tmp_path), "--quiet", *args])


def test_make_demo_path_learns_on_digits_and_writes_its_pictures_and_model(tmp_path, capsys):
    # `make demo` runs `python -m project.train --model cnn`; here on a subset, for 3 epochs
    argv = ["--model", "cnn", "--backend", "fast", "--epochs", "3", "--limit", "320", "--batch-size", "32"]
    result = train.main(argv + ["--out", str(tmp_path)])
    assert isinstance(result, train_cnn.Result) and result.dataset == "digits" and result.backend == "fast"
    assert len(result.test_accuracies) == 3 and len(result.predictions) == 320
    setting = "LeNet on 320 digits, 3 epochs, batches of 32, fast"
    losses, accuracies = result.train_losses, result.train_accuracies
    assert losses[-1] < 0.6 * losses[0], f"the training loss ({setting}) went from {losses[0]:.4f} to {losses[-1]:.4f}"
    assert accuracies[-1] > accuracies[0], (
        f"the training accuracy ({setting}) went from {accuracies[0]} to {accuracies[-1]}"
    )
    assert result.accuracy >= 0.6, (
        f"test accuracy ({setting}): {result.accuracy}, below 0.6 (10 classes: chance is 0.1)"
    )
    out = capsys.readouterr().out
    assert "backend: fast; data set: digits" in out and "epoch 3/3: train loss" in out
    assert f"digits: test accuracy {100 * result.accuracy:.1f}%" in out and "after 3 epochs" in out
    for kind in ("curves", "confusion", "misclassified"):
        assert_png(tmp_path / f"digits_{kind}.png")
    assert f"wrote {tmp_path / 'digits_curves.png'}" in out
    # the saved state_dict loads into a new LeNet, which then predicts as the trained one
    state = torchlight.load(tmp_path / "digits_model.npz", backend="fast")
    assert sorted(state) == sorted(result.model.state_dict())
    model = train_cnn.LeNet(backend="fast", seed=7)
    model.load_state_dict(state)
    _, accuracy, predicted = train_cnn.evaluate(
        model, (result.test.inputs - result.mean) / result.std, result.test.labels, "fast"
    )
    assert accuracy == result.accuracy and np.array_equal(predicted, result.predictions)


def test_training_is_repeatable_for_a_seed():
    a, b, c = (train_cnn.train(epochs=1, limit=128, seed=s, backend="fast", progress=False) for s in (4, 4, 5))
    assert a.train_losses == b.train_losses and np.array_equal(a.predictions, b.predictions)
    assert a.train_losses != c.train_losses


def test_waveforms_train_a_conv1d_network():
    result = train_cnn.train("waveforms", backend="fast", epochs=4, limit=400, progress=False)
    assert isinstance(result.model, train_cnn.SignalNet) and result.classes == [
        "sine",
        "square",
        "triangle",
        "sawtooth",
    ]
    assert result.model.conv1.weight.value.shape == (16, 1, 7)
    losses, setting = result.train_losses, "SignalNet on 400 waveforms, 4 epochs, fast"
    assert losses[-1] < 0.7 * losses[0], f"the training loss ({setting}) went from {losses[0]:.4f} to {losses[-1]:.4f}"
    assert result.accuracy >= 0.6, (
        f"test accuracy ({setting}): {result.accuracy}, below 0.6 (4 classes: chance is 0.25)"
    )


def write_idx(path, array, magic_type=0x08):
    header = bytes([0, 0, magic_type, array.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


def test_mnist_files_train_the_28x28_lenet(tmp_path):
    # Two classes of fake 28x28 digits: a bright square in the top left or the bottom right.
    def images(n, seed):
        r = np.random.default_rng(seed)
        labels = r.integers(0, 2, n)
        x = r.integers(0, 60, (n, 28, 28))
        for i, label in enumerate(labels):
            x[i, 3 + 14 * label : 11 + 14 * label, 3 + 14 * label : 11 + 14 * label] = 255
        return x, labels

    for prefix, n, seed in (("train", 64, 0), ("t10k", 32, 1)):
        x, y = images(n, seed)
        write_idx(tmp_path / f"{prefix}-images-idx3-ubyte.gz", x)
        write_idx(tmp_path / f"{prefix}-labels-idx1-ubyte.gz", y)
    result = train_cnn.train("mnist", backend="fast", data_dir=tmp_path, epochs=2, batch_size=8, progress=False)
    assert result.model.fc1.weight.value.shape == (64, 32 * 7 * 7) and len(result.predictions) == 32
    assert result.accuracy >= 0.9, f"test accuracy (LeNet on the 28 x 28 files, 2 epochs): {result.accuracy}, below 0.9"


def test_a_few_steps_on_the_simple_backend(monkeypatch):
    # the whole run on the pure-Python backend, with a LeNet of few channels to keep it quick
    monkeypatch.setattr(
        train_cnn, "make_model", lambda dataset, shape, classes, backend, seed: small_lenet(backend, seed, classes)
    )
    result = train_cnn.train(epochs=3, limit=16, batch_size=4, backend="simple", progress=False, lr=0.05)
    assert result.backend == "simple"
    assert all(p.value.backend.name == "simple" for p in result.model.parameters())
    assert result.train_losses[2] < result.train_losses[1] < result.train_losses[0], (
        f"the training loss (simple, 16 digits, batches of 4) did not fall at each epoch: {result.train_losses}"
    )
    assert len(result.predictions) == 16
    # the same run on the fast backend: the same numbers, up to the order of float sums
    fast = train_cnn.train(epochs=3, limit=16, batch_size=4, backend="fast", progress=False, lr=0.05)
    np.testing.assert_allclose(fast.train_losses, result.train_losses, rtol=1e-9)
    np.testing.assert_allclose(fast.test_losses, result.test_losses, rtol=1e-9)


def test_plots_check_their_inputs(tmp_path):
    counts = plots_cnn.confusion_matrix([0, 1, 1, 2, 2, 2], [0, 2, 1, 2, 2, 0], 3)
    assert counts.tolist() == [[1, 0, 0], [0, 1, 1], [1, 0, 2]]
    with pytest.raises(ValueError, match=r"predictions must lie in 0..2, got 0..3"):
        plots_cnn.confusion_matrix([0, 1], [0, 3], 3)
    with pytest.raises(ValueError, match="one prediction per label"):
        plots_cnn.confusion_matrix([0, 1], [0], 3)
    with pytest.raises(ValueError, match=r"one value per epoch in each series, got \[2, 1, 2, 2\]"):
        plots_cnn.plot_curves([1.0, 0.5], [1.0], [0.1, 0.2], [0.1, 0.2], tmp_path / "c.png")
    # nothing misclassified: still a picture, saying so; signals are drawn as curves
    assert_png(plots_cnn.plot_misclassified(np.zeros((2, 1, 8, 8)), [1, 2], [1, 2], list("0123"), tmp_path / "m.png"))
    signals = np.sin(np.linspace(0.0, 6.0, 3 * 16)).reshape(3, 1, 16)
    assert_png(plots_cnn.plot_misclassified(signals, [0, 1, 2], [1, 1, 0], ["a", "b", "c"], tmp_path / "s.png"))
    with pytest.raises(ValueError, match="one label and one prediction per input, got 3 inputs, 2 labels"):
        plots_cnn.plot_misclassified(signals, [0, 1], [1, 1], ["a", "b", "c"], tmp_path / "bad.png")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--dataset", "cifar"], "argument --dataset: invalid choice: 'cifar'"),
        (["--backend", "nope"], "argument --backend: invalid choice: 'nope'"),
        (["--epochs", "0"], "argument --epochs: must be at least 1, got 0"),
        (["--batch-size", "0"], "argument --batch-size: must be at least 1, got 0"),
        (["--limit", "-3"], "argument --limit: must be at least 1, got -3"),
        (["--lr", "-0.1"], "argument --lr: must be positive, got -0.1"),
        (["--epochs", "two"], "argument --epochs: invalid int value: 'two'"),
        (["--dataset", "mnist"], "--dataset mnist needs --data-dir DIR"),
        (["--data-dir", "data"], "--data-dir and --download are for --dataset mnist or fashion-mnist"),
    ],
)
def test_command_line_errors(tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as exit_info:
        run(tmp_path, *args)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err  # one line, no usage block
    assert not (tmp_path / "digits_model.npz").exists()


def test_missing_mnist_files_are_a_one_line_error_naming_the_folder(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run(tmp_path, "--dataset", "fashion-mnist", "--data-dir", str(tmp_path))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert str(tmp_path) in err and "train-images-idx3-ubyte not found" in err and err.count("\n") == 1, err


def test_train_rejects_bad_settings():
    for kwargs, message in [
        (dict(epochs=0), "epochs must be a positive int, got 0"),
        (dict(batch_size=2.5), "batch_size must be a positive int, got 2.5"),
        (dict(limit=0), "limit must be a positive int, got 0"),
        (dict(lr=0.0), "learning rate lr must be positive, got 0.0"),
        (dict(dataset="cifar"), "unknown data set 'cifar'; expected one of digits, mnist, fashion-mnist, waveforms"),
        (dict(dataset="mnist"), "--dataset mnist needs --data-dir DIR"),
    ]:
        with pytest.raises(ValueError, match=message):
            train_cnn.train(backend="simple", progress=False, **kwargs)
