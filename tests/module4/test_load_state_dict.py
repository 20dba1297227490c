"""Module 4: Module.load_state_dict on tensor models: every problem named in one error, as
PyTorch's, nothing loaded when there is any, PyTorch's result for strict=False, and checkpoints
from other backends, from numpy and from PyTorch models with the same parameter names.
"""

import numpy as np
import pytest

import torchlight
from torchlight.nn import Linear, Module

rng = np.random.default_rng(11)


class Net(Module):
    def __init__(self, backend="simple"):
        super().__init__()
        self.fc = Linear(2, 3, backend=backend)
        self.out = Linear(3, 1, backend=backend)

    def forward(self, x):
        return self.out(self.fc(x).relu())


def values(net):
    return {k: v.to_numpy() for k, v in net.state_dict().items()}


def test_round_trip_between_models_and_backends():
    src, dst = Net("fast"), Net("simple")
    result = dst.load_state_dict(src.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    assert result == ([], [])
    for k, v in values(dst).items():
        np.testing.assert_array_equal(v, values(src)[k])
    assert all(p.value.backend.name == "simple" and p.value.requires_grad for p in dst.parameters())
    x = torchlight.tensor(rng.normal(size=(4, 2)), backend="simple")
    dst(x).sum().backward()  # the loaded values are leaves that get gradients
    assert dst.fc.weight.value.grad is not None


def test_every_problem_in_one_error_and_nothing_loaded():
    net = Net()
    before = values(net)
    sd = Net().state_dict()
    del sd["out.bias"]
    sd["fc.running_mean"] = torchlight.zeros(3, backend="simple")
    sd["fc.weight"] = torchlight.zeros(3, 3, backend="simple")
    sd["out.weight"] = torchlight.zeros(2, 3, backend="simple")
    with pytest.raises(RuntimeError) as err:
        net.load_state_dict(sd)
    assert str(err.value) == (
        "Error(s) in loading state_dict for Net:\n"
        '\tMissing key(s) in state_dict: "out.bias".\n'
        '\tUnexpected key(s) in state_dict: "fc.running_mean".\n'
        "\tsize mismatch for fc.weight: copying a param with shape (3, 3) from checkpoint, the shape in "
        "current model is (3, 2).\n"
        "\tsize mismatch for out.weight: copying a param with shape (2, 3) from checkpoint, the shape in "
        "current model is (1, 3)."
    )
    for k, v in values(net).items():  # fc.bias was fine, and still not loaded
        np.testing.assert_array_equal(v, before[k])


def test_non_strict_returns_the_keys_and_loads_the_rest():
    net, src = Net(), Net()
    sd = src.state_dict()
    del sd["fc.bias"]
    sd["extra"] = torchlight.zeros(1, backend="simple")
    result = net.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["fc.bias"] and result.unexpected_keys == ["extra"]
    assert "missing_keys=['fc.bias']" in repr(result)
    np.testing.assert_array_equal(net.out.weight.value.to_numpy(), src.out.weight.value.to_numpy())
    assert not np.array_equal(net.fc.bias.value.to_numpy(), src.fc.bias.value.to_numpy())


def test_non_strict_still_refuses_wrong_shapes():
    net = Net()
    before = values(net)
    sd = Net().state_dict()
    sd["fc.bias"] = torchlight.zeros(4, backend="simple")
    with pytest.raises(RuntimeError, match="size mismatch for fc.bias"):
        net.load_state_dict(sd, strict=False)
    np.testing.assert_array_equal(values(net)["out.weight"], before["out.weight"])


def test_numpy_arrays_and_nested_lists_load():
    net = Net()
    sd = {k: rng.normal(size=v.shape) for k, v in net.state_dict().items()}
    sd["out.bias"] = [0.5]
    net.load_state_dict(sd)
    np.testing.assert_array_equal(net.fc.weight.value.to_numpy(), sd["fc.weight"])
    assert net.out.bias.value.tolist() == [0.5]
    sd["fc.bias"] = np.array(["a", "b", "c"])
    with pytest.raises(RuntimeError, match="type mismatch for fc.bias"):
        net.load_state_dict(sd)


def test_later_changes_to_the_checkpoint_do_not_reach_the_model():
    net = Net()
    sd = Net().state_dict()
    net.load_state_dict(sd)
    with torchlight.no_grad():
        sd["fc.weight"].add_(1.0)
    assert not np.array_equal(net.fc.weight.value.to_numpy(), sd["fc.weight"].to_numpy())


def test_a_pytorch_checkpoint_with_the_same_names_loads():
    torch = pytest.importorskip("torch")
    tnet = torch.nn.Sequential()
    tnet.fc = torch.nn.Linear(2, 3).double()
    tnet.relu = torch.nn.ReLU()
    tnet.out = torch.nn.Linear(3, 1).double()
    net = Net()
    assert list(net.state_dict()) == list(tnet.state_dict())  # PyTorch's names
    net.load_state_dict({k: v.numpy() for k, v in tnet.state_dict().items()})
    x = rng.normal(size=(5, 2))
    got = net(torchlight.tensor(x, backend="simple")).to_numpy()
    np.testing.assert_allclose(got, tnet(torch.tensor(x)).detach().numpy(), rtol=1e-12, atol=1e-14)
