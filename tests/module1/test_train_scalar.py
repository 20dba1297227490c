"""Task 1.5: a network of Scalars learns xor, and the training script writes its pictures."""

import pytest

from project import plots, train, train_scalar
from torchlight import Scalar
from torchlight.autograd import central_difference
from torchlight.nn import Parameter

pytestmark = pytest.mark.task1_5

PNG = b"\x89PNG\r\n\x1a\n"


def assert_png(path):
    assert path.is_file(), f"{path} was not written"
    assert path.read_bytes()[:8] == PNG and path.stat().st_size > 1000


def test_scalar_network_learns_xor(tmp_path, capsys):
    result = train_scalar.main(
        [
            "--dataset",
            "xor",
            "--hidden",
            "10",
            "--n",
            "20",
            "--epochs",
            "100",
            "--seed",
            "0",
            "--out",
            str(tmp_path),
            "--quiet",
        ]
    )
    setting = "xor, 20 points, 10 hidden units, 100 epochs, seed 0"
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
    assert "final accuracy 100.0% (20/20)" in out
    assert_png(tmp_path / "loss.png")
    assert_png(tmp_path / "boundary.png")


def test_network_shape_and_seeded_init():
    net = train_scalar.ScalarNetwork(hidden=3, seed=1)
    names = [name for name, _ in net.named_parameters()]
    assert len(names) == 2 * 3 + 3 + 3 * 1 + 1
    assert "layer1.weight_1_2" in names and "layer2.bias_0" in names
    assert all(isinstance(p.value, Scalar) and p.value.is_leaf() for p in net.parameters())
    same = train_scalar.ScalarNetwork(hidden=3, seed=1)
    other = train_scalar.ScalarNetwork(hidden=3, seed=2)
    values = [p.value.data for p in net.parameters()]
    assert values == [p.value.data for p in same.parameters()]
    assert values != [p.value.data for p in other.parameters()]


def test_predict_is_a_probability_and_records_nothing():
    net = train_scalar.ScalarNetwork(hidden=4, seed=0)
    p = net.predict(0.3, 0.8)
    assert type(p) is float and 0.0 < p < 1.0
    assert all(param.value.grad is None for param in net.parameters())


def test_loss_gradient_matches_central_difference():
    data = train_scalar.datasets.xor(6, seed=3)
    net = train_scalar.ScalarNetwork(hidden=3, seed=0)
    loss, _ = train_scalar.loss_and_correct(net, data)
    loss.backward()
    param = net.layer1.weights[0][1]

    def loss_at(v):
        param.update(Scalar(v))
        return train_scalar.loss_and_correct(net, data)[0]

    grad, value = param.value.grad, param.value.data
    expected = central_difference(loss_at, value)
    assert grad == pytest.approx(expected, rel=1e-5, abs=1e-8), (
        f"d loss / d layer1.weights[0][1]: backward gives {grad!r}, the central difference {expected!r}"
    )


def test_sgd_with_momentum_follows_torch_formula():
    p = Parameter(Scalar(1.0))
    opt = train_scalar.SGD([p], lr=0.1, momentum=0.5)
    for expected in [0.8, 0.5]:  # velocity 2, then 0.5 * 2 + 2 = 3
        opt.zero_grad()
        (p.value * p.value * 0.0 + 2.0 * p.value).backward()
        opt.step()
        assert p.value.data == pytest.approx(expected)
        assert p.value.grad == 2.0 and p.value.is_leaf()


@pytest.mark.parametrize(
    "kwargs, message", [({"lr": 0.0}, "learning rate"), ({"lr": 0.1, "momentum": 1.0}, "momentum")], ids=repr
)
def test_sgd_rejects_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        train_scalar.SGD([], **kwargs)


def test_training_is_deterministic():
    a = train_scalar.train(n=8, epochs=3, seed=5, progress=False)
    b = train_scalar.train(n=8, epochs=3, seed=5, progress=False)
    assert a.losses == b.losses


def test_bad_settings_are_errors():
    with pytest.raises(ValueError, match="hidden"):
        train_scalar.ScalarNetwork(hidden=0)
    with pytest.raises(ValueError, match="epochs"):
        train_scalar.train(epochs=0, progress=False)
    with pytest.raises(ValueError, match="unknown data set"):
        train_scalar.train(dataset="nope", progress=False)


def test_plots_accept_any_model_function(tmp_path):
    X, y = [(0.2, 0.3), (0.7, 0.9)], [0, 1]
    assert_png(plots.plot_boundary(lambda x1, x2: x1, X, y, tmp_path / "sub" / "b.png", resolution=5))
    assert_png(plots.plot_boundary(lambda x1, x2: 0.25, X, y, tmp_path / "flat.png", resolution=5))
    assert_png(plots.plot_history([1.0, 0.5, 0.2], [0.5, 0.75, 1.0], tmp_path / "h.png"))
    with pytest.raises(ValueError, match="one loss and one accuracy per epoch"):
        plots.plot_history([1.0], [], tmp_path / "bad.png")


def test_demo_entry_point_runs_the_scalar_model(tmp_path, capsys):
    train.main(["--model", "scalar", "--n", "6", "--epochs", "2", "--out", str(tmp_path), "--quiet"])
    assert "final accuracy" in capsys.readouterr().out
    assert_png(tmp_path / "boundary.png")
    with pytest.raises(SystemExit):
        train.main(["--model", "nonsense"])
