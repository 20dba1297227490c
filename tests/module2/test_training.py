"""Task 2.5: a tensor network learns xor and split on the simple backend, the training script
writes its pictures, and its pieces (loss, optimizer, command line) behave as documented."""

import numpy as np
import pytest

import torchlight
from project import plots, train, train_tensor
from torchlight import backends
from torchlight.autograd import gradcheck
from torchlight.nn import Parameter

pytestmark = pytest.mark.task2_5

PNG = b"\x89PNG\r\n\x1a\n"


def assert_png(path):
    assert path.is_file(), f"{path} was not written"
    assert path.read_bytes()[:8] == PNG and path.stat().st_size > 1000


def run(tmp_path, *args):
    return train_tensor.main(["--backend", "simple", "--seed", "0", "--out", str(tmp_path), "--quiet", *args])


def test_tensor_network_learns_xor(tmp_path, capsys):
    result = run(tmp_path, "--dataset", "xor", "--n", "60", "--epochs", "100")
    assert result.backend == "simple"
    setting = "xor, 60 points, 100 epochs, seed 0"
    assert result.accuracy == 1.0, (
        f"accuracy after training ({setting}): {result.accuracy} of the points classified right, not all "
        f"(the loss went from {result.losses[0]:.4f} to {result.losses[-1]:.4f})"
    )
    assert result.accuracies[-1] == 1.0, f"accuracy before the last step ({setting}): {result.accuracies[-1]}, not 1.0"
    assert len(result.losses) == 100, f"{len(result.losses)} losses recorded for 100 epochs"
    assert result.losses[-1] < result.losses[0] / 10, (
        f"the loss ({setting}) went from {result.losses[0]:.4f} to {result.losses[-1]:.4f}: "
        "not a tenth of where it began"
    )
    out = capsys.readouterr().out
    assert "backend: simple" in out
    assert "final accuracy 100.0% (60/60)" in out
    assert_png(tmp_path / "loss.png")
    assert_png(tmp_path / "boundary.png")


def test_tensor_network_learns_split(tmp_path):
    result = run(tmp_path, "--dataset", "split", "--n", "60", "--epochs", "100")
    assert result.accuracy >= 0.95, (
        f"accuracy after training (split, 60 points, 100 epochs, seed 0): {result.accuracy} of the points "
        f"classified right, below 0.95 (the loss went from {result.losses[0]:.4f} to {result.losses[-1]:.4f})"
    )
    assert_png(tmp_path / "boundary.png")


def test_network_shape_and_seeded_init():
    net = train_tensor.Network(hidden=5, backend="simple", seed=1)
    shapes = [(name, p.value.shape) for name, p in net.named_parameters()]
    assert shapes == [
        ("layer1.weight", (5, 2)),
        ("layer1.bias", (5,)),
        ("layer2.weight", (5, 5)),
        ("layer2.bias", (5,)),
        ("layer3.weight", (1, 5)),
        ("layer3.bias", (1,)),
    ]
    values = lambda n: [p.value.to_numpy() for p in n.parameters()]  # noqa: E731
    same, other = train_tensor.Network(5, "simple", seed=1), train_tensor.Network(5, "simple", seed=2)
    assert all(np.array_equal(a, b) for a, b in zip(values(net), values(same), strict=True))
    assert not np.array_equal(values(net)[0], values(other)[0])


def test_network_forward_is_two_relu_layers_and_an_output_on_centred_points():
    # as the class says: 2 -> hidden ReLUs -> hidden ReLUs -> 1 logit per point, inputs mapped to [-1, 1]
    net = train_tensor.Network(hidden=4, backend="simple", seed=0)
    points = np.random.default_rng(3).uniform(0.0, 1.0, (7, 2))
    (w1, b1), (w2, b2), (w3, b3) = (
        (layer.weight.value.to_numpy(), layer.bias.value.to_numpy()) for layer in (net.layer1, net.layer2, net.layer3)
    )
    h = np.maximum((2.0 * points - 1.0) @ w1.T + b1, 0.0)
    h = np.maximum(h @ w2.T + b2, 0.0)
    expected = (h @ w3.T + b3).reshape(-1)
    logits = net(torchlight.tensor(points, backend="simple"))
    assert logits.shape == (7,)
    np.testing.assert_allclose(logits.to_numpy(), expected, rtol=1e-12, atol=1e-12)


def test_predict_is_a_probability_per_point_and_records_nothing():
    net = train_tensor.Network(hidden=4, backend="simple", seed=0)
    p = net.predict([(0.3, 0.8), (0.9, 0.1), (0.5, 0.5)])
    assert p.shape == (3,) and p.history is None
    assert np.all((0.0 < p.to_numpy()) & (p.to_numpy() < 1.0))
    assert all(param.value.grad is None for param in net.parameters())


def bce_reference(z, y):
    """-[y log s + (1 - y) log(1 - s)] with s = sigmoid(z), averaged: the textbook formula."""
    s = 1.0 / (1.0 + np.exp(-z))
    return float(np.mean(-(y * np.log(s) + (1 - y) * np.log(1 - s))))


def test_binary_cross_entropy_values_and_stability():
    bce = train_tensor.binary_cross_entropy_with_logits
    z, y = np.array([-3.0, -0.5, 0.2, 4.0]), np.array([0.0, 1.0, 1.0, 0.0])
    got = bce(torchlight.tensor(z), torchlight.tensor(y)).item()
    assert got == pytest.approx(bce_reference(z, y), rel=1e-12), f"the mean loss of logits {z} for labels {y}: {got}"
    # Huge logits: the textbook formula gives log(0) = -inf or exp overflow; this one stays exact.
    big = bce(torchlight.tensor([1000.0, -1000.0, 1000.0]), torchlight.tensor([1.0, 0.0, 0.0])).item()
    assert big == pytest.approx(1000.0 / 3, rel=1e-12), (
        f"the mean loss of logits [1000, -1000, 1000] for labels [1, 0, 0] is {big}, not 1000 / 3 (the last point's "
        "loss is 1000; the others' are 0)"
    )


def test_binary_cross_entropy_gradient():
    bce = train_tensor.binary_cross_entropy_with_logits
    z = torchlight.tensor([-2.0, -0.3, 0.7, 3.0], requires_grad=True)
    y = torchlight.tensor([1.0, 0.0, 1.0, 0.0])
    assert gradcheck(bce, (z, y))
    bce(z, y).backward()
    sig = 1.0 / (1.0 + np.exp(-z.to_numpy()))
    np.testing.assert_allclose(z.grad.to_numpy(), (sig - y.to_numpy()) / 4, rtol=1e-12)


def test_binary_cross_entropy_matches_torch():
    torch = pytest.importorskip("torch")
    z_np, y_np = np.array([-40.0, -1.5, 0.1, 2.0, 35.0]), np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    z = torchlight.tensor(z_np, requires_grad=True)
    loss = train_tensor.binary_cross_entropy_with_logits(z, torchlight.tensor(y_np))
    loss.backward()
    tz = torch.tensor(z_np, requires_grad=True)
    expected = torch.nn.functional.binary_cross_entropy_with_logits(tz, torch.tensor(y_np))
    expected.backward()
    assert loss.item() == pytest.approx(expected.item(), rel=1e-12)
    np.testing.assert_allclose(z.grad.to_numpy(), tz.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_sgd_with_momentum_follows_torch_formula():
    p = Parameter(torchlight.tensor([1.0, -2.0]))
    opt = train_tensor.SGD([p], lr=0.1, momentum=0.5)
    # loss = 2 * sum(p): gradient 2 everywhere; velocity 2, then 0.5 * 2 + 2 = 3
    for expected in [[0.8, -2.2], [0.5, -2.5]]:
        opt.zero_grad()
        (2.0 * p.value).sum().backward()
        opt.step()
        np.testing.assert_allclose(p.value.to_numpy(), expected)
        assert p.value.grad is not None and p.value.is_leaf and p.value.requires_grad


@pytest.mark.parametrize(
    "kwargs, message", [({"lr": 0.0}, "learning rate"), ({"lr": 0.1, "momentum": 1.0}, "momentum")], ids=repr
)
def test_sgd_rejects_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        train_tensor.SGD([], **kwargs)


def test_training_is_deterministic():
    a = train_tensor.train(n=8, epochs=3, seed=5, backend="simple", progress=False)
    b = train_tensor.train(n=8, epochs=3, seed=5, backend="simple", progress=False)
    assert a.losses == b.losses and a.accuracies == b.accuracies


def test_boundary_takes_one_forward_pass(tmp_path, monkeypatch):
    result = train_tensor.train(n=8, epochs=1, seed=0, backend="simple", progress=False)
    calls = []
    forward = train_tensor.Network.forward

    def counting(self, x):
        calls.append(x.shape)
        return forward(self, x)

    monkeypatch.setattr(train_tensor.Network, "forward", counting)
    train_tensor.save_plots(result, tmp_path)
    assert calls == [(40 * 40, 2)]  # the whole grid of plot_boundary's default resolution at once
    assert_png(tmp_path / "boundary.png")


def test_batched_boundary_checks_the_number_of_probabilities(tmp_path):
    X, y = [(0.2, 0.3), (0.7, 0.9)], [0, 1]
    grid = plots.plot_boundary(lambda pts: [x1 for x1, _ in pts], X, y, tmp_path / "b.png", resolution=5, batched=True)
    assert_png(grid)
    with pytest.raises(ValueError, match="predict gave 3 probabilities for 25 grid points"):
        plots.plot_boundary(lambda pts: [0.5] * 3, X, y, tmp_path / "bad.png", resolution=5, batched=True)


def test_unknown_backend_or_data_set_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run(tmp_path, "--backend", "nope")
    assert exit_info.value.code == 2
    assert "argument --backend: invalid choice: 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run(tmp_path, "--dataset", "moons")
    assert "argument --dataset: invalid choice: 'moons'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        train_tensor.train(backend="nope", progress=False)
    with pytest.raises(ValueError, match="unknown data set 'moons'"):
        train_tensor.train(dataset="moons", backend="simple", progress=False)


def test_bad_settings_are_errors():
    with pytest.raises(ValueError, match="hidden"):
        train_tensor.Network(hidden=0)
    with pytest.raises(ValueError, match="epochs"):
        train_tensor.train(epochs=0, backend="simple", progress=False)


@pytest.fixture
def no_fast(monkeypatch):
    """Make the 'fast' backend unavailable, as on a machine without numba."""
    get = backends.get

    def fake_get(name):
        if name == "fast":
            raise backends.BackendUnavailable("the 'fast' backend needs numba, which is not installed")
        return get(name)

    monkeypatch.setattr(backends, "get", fake_get)


def test_default_backend_falls_back_to_simple(no_fast, tmp_path, capsys):
    assert train_tensor.default_backend() == "simple"
    result = train_tensor.main(["--n", "4", "--epochs", "1", "--out", str(tmp_path), "--quiet"])
    assert result.backend == "simple"
    assert "backend: simple" in capsys.readouterr().out


def test_unavailable_backend_says_why(no_fast, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run(tmp_path, "--backend", "fast")
    assert exit_info.value.code == 2
    assert "the 'fast' backend needs numba" in capsys.readouterr().err


def test_demo_runs_the_tensor_model_by_default(tmp_path, capsys):
    result = train.main(["--backend", "simple", "--n", "6", "--epochs", "2", "--out", str(tmp_path), "--quiet"])
    assert isinstance(result, train_tensor.Result)
    out = capsys.readouterr().out
    assert "backend: simple" in out and "final accuracy" in out
    assert_png(tmp_path / "boundary.png")
