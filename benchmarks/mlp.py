"""One training epoch of a small network, torchlight against PyTorch.

The network is 2 -> 100 -> 100 -> 1 (ReLU, then a logit), trained on the ``split`` toy set of
150 points in mini-batches of 50 with binary cross-entropy and plain SGD: three steps of
forward, backward and update per epoch. The PyTorch model is the same network, float64, with the
same initial weights, the same loss and ``torch.optim.SGD``. Every operation here is small, so
the epoch measures per-operation overhead (Python, the autograd engine, kernel dispatch) at least
as much as arithmetic.
"""

from typing import Dict, List, Optional

import numpy as np

import torchlight
from timing import best_time
from torchlight import Tensor, datasets
from torchlight.nn import Linear, Module
from torchlight.optim import SGD

try:
    import torch
except ImportError:
    torch = None

HIDDEN, BATCH, POINTS, LR = 100, 50, 150, 0.1


class MLP(Module):
    """2 -> HIDDEN -> HIDDEN -> 1."""

    def __init__(self, backend: str):
        super().__init__()
        rng = np.random.default_rng(0)
        self.layer1 = Linear(2, HIDDEN, backend=backend, generator=rng)
        self.layer2 = Linear(HIDDEN, HIDDEN, backend=backend, generator=rng)
        self.layer3 = Linear(HIDDEN, 1, backend=backend, generator=rng)

    def forward(self, x: Tensor) -> Tensor:
        return self.layer3(self.layer2(self.layer1(x).relu()).relu()).view(-1)


def bce_with_logits(z: Tensor, y: Tensor) -> Tensor:
    """Mean binary cross-entropy of logits z against labels y (the overflow-free form)."""
    return (z.relu() - z * y + ((-z.abs()).exp() + 1.0).log()).mean()


def batches(backend: Optional[str] = None) -> List[tuple]:
    """The ``split`` set in 3 fixed mini-batches of 50 (x, y) as numpy arrays, or tensors on ``backend``."""
    data = datasets.get("split")(POINTS, seed=0)
    x, y = np.array(data.X, dtype=np.float64), np.array(data.y, dtype=np.float64)
    pairs = [(x[i : i + BATCH], y[i : i + BATCH]) for i in range(0, POINTS, BATCH)]
    if backend is None:
        return pairs
    return [(torchlight.tensor(a, backend=backend), torchlight.tensor(b, backend=backend)) for a, b in pairs]


def torchlight_epoch(backend: str):
    """A function that trains one epoch of a fresh torchlight MLP on ``backend`` each time it is called."""
    model, data = MLP(backend), batches(backend)
    optimizer = SGD(model.parameters(), lr=LR)  # as PyTorch's side: torch.optim.SGD

    def epoch() -> float:
        for x, y in data:
            optimizer.zero_grad()
            loss = bce_with_logits(model(x), y)
            loss.backward()
            optimizer.step()
        return loss.item()

    return epoch, model


def torch_epoch(like: MLP):
    """The same network in PyTorch (float64, same initial weights), and a one-epoch training function."""
    layers = []
    for layer in (like.layer1, like.layer2, like.layer3):
        linear = torch.nn.Linear(layer.in_features, layer.out_features, dtype=torch.float64)
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(layer.weight.value.to_numpy()))
            linear.bias.copy_(torch.from_numpy(layer.bias.value.to_numpy()))
        layers.append(linear)
    model = torch.nn.Sequential(layers[0], torch.nn.ReLU(), layers[1], torch.nn.ReLU(), layers[2], torch.nn.Flatten(0))
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    data = [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in batches()]

    def epoch() -> float:
        for x, y in data:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
        return loss.item()

    return epoch


def measure(include_simple: bool = True) -> Dict[str, Optional[float]]:
    """Seconds per epoch: fast and PyTorch best of many epochs, simple a single epoch."""
    times: Dict[str, Optional[float]] = {"simple": None, "fast": None, "torch": None}
    fast_epoch, fast_model = torchlight_epoch("fast")
    losses = {}
    if torch is not None:
        reference, _ = torchlight_epoch("fast")
        torch_run = torch_epoch(MLP("fast"))
        # The two implementations train the same: same losses, epoch after epoch.
        losses = {"fast": [reference() for _ in range(3)], "torch": [torch_run() for _ in range(3)]}
        times["torch"] = best_time(torch_run, budget=1.0, min_runs=10)
    fast_epoch()  # compile or load the kernels first
    times["fast"] = best_time(fast_epoch, budget=1.0, min_runs=10)
    if losses:
        times["fast"] = min(times["fast"], best_time(fast_epoch, budget=0.5, min_runs=5))
        np.testing.assert_allclose(losses["fast"], losses["torch"], rtol=1e-9)
    if include_simple:
        simple_epoch, _ = torchlight_epoch("simple")
        times["simple"] = best_time(simple_epoch, budget=0.0, min_runs=1)
    return times
