"""A state dict moves between torchlight and PyTorch (issue 14): the same architecture, the same
keys, the same outputs, in both directions (the recipe of docs/pytorch.md, through numpy)."""

import numpy as np
import pytest

import torchlight


def _models(torch):
    ours = torchlight.nn.Sequential(torchlight.nn.Linear(3, 4), torchlight.nn.ReLU(), torchlight.nn.Linear(4, 2))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2)).double()
    return ours, theirs


X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


def test_torchlight_weights_load_into_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = _models(torch)
    state = ours.state_dict()
    assert sorted(state) == sorted(theirs.state_dict()) == ["0.bias", "0.weight", "2.bias", "2.weight"]
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in state.items()})
    with torch.no_grad():
        expected = theirs(torch.tensor(X)).numpy()
    np.testing.assert_allclose(ours(torchlight.tensor(X)).to_numpy(), expected, rtol=1e-12, atol=1e-14)


def test_pytorch_weights_load_into_torchlight():
    torch = pytest.importorskip("torch")
    ours, theirs = _models(torch)
    ours.load_state_dict({k: torchlight.from_numpy(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})
    with torch.no_grad():
        expected = theirs(torch.tensor(X)).numpy()
    np.testing.assert_allclose(ours(torchlight.tensor(X)).to_numpy(), expected, rtol=1e-12, atol=1e-14)
