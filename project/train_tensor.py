"""Module 2 project: a tensor network (two hidden layers) trained on a toy data set.

    python -m project.train_tensor --dataset split --n 150 --hidden 10 --epochs 400 --backend simple --out out/

The same task as ``train_scalar``, but each layer is one ``Linear`` (a matrix multiplication)
and the whole data set goes through the network as one (n, 2) tensor, so the graph has a few
dozen nodes instead of tens of thousands. ``--backend`` picks where the tensor operations run.
"""

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import numpy as np
from tqdm import tqdm

import torchlight
from torchlight import Tensor, backends, datasets
from torchlight.examples import default_backend, plots
from torchlight.nn import Linear, Module
from torchlight.optim import SGD
from torchlight.utils.cli import ArgumentParser, fraction, positive_float, positive_int


class Network(Module):
    """2 inputs -> ``hidden`` ReLUs -> ``hidden`` ReLUs -> 1 output; sigmoid of it is P(class 1)."""

    def __init__(self, hidden: int, backend: "str | backends.TensorBackend | None" = None, seed: int = 0):
        super().__init__()
        if hidden < 1:
            raise ValueError(f"Network needs hidden >= 1, got {hidden}")
        rng = np.random.default_rng(seed)  # one generator: each layer draws different values
        self.layer1 = Linear(2, hidden, backend=backend, generator=rng)
        self.layer2 = Linear(hidden, hidden, backend=backend, generator=rng)
        self.layer3 = Linear(hidden, 1, backend=backend, generator=rng)

    def forward(self, x: Tensor) -> Tensor:
        """Points of shape (n, 2) to logits (log-odds of class 1) of shape (n,)."""
        # BEGIN SOLUTION 2.5
        # HINT: centre the unit square on 0 (2x - 1 maps it to [-1, 1]), so that the first layer's
        # lines start out cutting through the data; one output per point: view(-1) drops the 1.
        h = self.layer1(2.0 * x - 1.0).relu()
        h = self.layer2(h).relu()
        return self.layer3(h).view(-1)
        # END SOLUTION 2.5

    def predict(self, points: Sequence[Tuple[float, float]]) -> Tensor:
        """P(class 1) at each point, as a tensor of shape (n,), without recording a graph."""
        with torchlight.no_grad():
            x = torchlight.tensor(points, backend=self.layer1.weight.value.backend)
            return self.forward(x).sigmoid()


def binary_cross_entropy_with_logits(logits: Tensor, target: Tensor) -> Tensor:
    """Mean of -[y log sigmoid(z) + (1 - y) log(1 - sigmoid(z))], as the PyTorch function of this name.

    Written as relu(z) - z y + log(1 + exp(-|z|)): the same value, but exp never overflows
    and the log never sees 0, however large |z| grows.
    """
    # BEGIN SOLUTION 2.5
    return (logits.relu() - logits * target + ((-logits.abs()).exp() + 1.0).log()).mean()
    # END SOLUTION 2.5


@dataclass
class Result:
    """What a training run produced."""

    model: Network
    data: datasets.Graph
    backend: str
    losses: List[float] = field(default_factory=list)
    accuracies: List[float] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def accuracy(self) -> float:
        """Training accuracy (0..1) of the final model."""
        predicted = self.model.predict(self.data.X).to_numpy() > 0.5
        return float(np.mean(predicted == (np.array(self.data.y) == 1)))


def train(
    dataset: str = "xor",
    hidden: int = 10,
    epochs: int = 300,
    lr: float = 0.2,
    momentum: float = 0.9,
    n: int = 100,
    seed: int = 0,
    backend: Optional[str] = None,
    progress: bool = True,
) -> Result:
    """Train a Network with full-batch SGD on mean binary cross-entropy; one backward per epoch."""
    if epochs < 1:
        raise ValueError(f"epochs must be >= 1, got {epochs}")
    data = datasets.get(dataset)(n, seed=seed)
    backend = backends.get(backend if backend is not None else default_backend()).name
    X = torchlight.tensor(data.X, backend=backend)
    y = torchlight.tensor(data.y, backend=backend)
    model = Network(hidden, backend=backend, seed=seed)
    optimizer = SGD(model.parameters(), lr, momentum)
    result = Result(model, data, backend)
    start = time.perf_counter()
    bar = tqdm(range(epochs), desc=f"tensor {dataset} ({backend})", unit="epoch", disable=not progress)
    for _ in bar:
        # BEGIN SOLUTION 2.5: one training step: forward, loss, backward, optimizer step
        # HINT: .grad accumulates: clear last epoch's (optimizer.zero_grad()) before backward.
        logits = model(X)
        loss = binary_cross_entropy_with_logits(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        # END SOLUTION 2.5
        # Loss and accuracy are those of the parameters before this epoch's step.
        accuracy = ((logits.detach() > 0.0) == y).mean().item()
        result.losses.append(loss.item())
        result.accuracies.append(accuracy)
        bar.set_postfix(loss=f"{loss.item():.4f}", acc=f"{100 * accuracy:.0f}%")
    result.seconds = time.perf_counter() - start
    return result


def save_plots(result: Result, out: Path) -> Tuple[Path, Path]:
    """Write loss.png and boundary.png into ``out``; the boundary takes one forward pass over the grid."""
    out = Path(out)
    curves = plots.plot_history(result.losses, result.accuracies, out / "loss.png")
    boundary = plots.plot_boundary(
        lambda points: result.model.predict(points).tolist(),
        result.data.X,
        result.data.y,
        out / "boundary.png",
        title=f"tensor network ({result.backend} backend)",
        batched=True,
    )
    return curves, boundary


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="python -m project.train_tensor", description=__doc__.split("\n")[0])
    p.add_argument("--dataset", default="xor", choices=sorted(datasets.TOY), help="toy data set (default: xor)")
    p.add_argument("--hidden", type=positive_int, default=10, help="units in each hidden layer (default: 10)")
    p.add_argument("--epochs", type=positive_int, default=300, help="passes over the data (default: 300)")
    p.add_argument("--lr", type=positive_float, default=0.2, help="SGD learning rate (default: 0.2)")
    p.add_argument("--momentum", type=fraction, default=0.9, help="SGD momentum (default: 0.9)")
    p.add_argument("--n", type=positive_int, default=100, help="number of data points (default: 100)")
    p.add_argument("--seed", type=int, default=0, help="seed for data and initial weights (default: 0)")
    p.add_argument(
        "--backend",
        choices=backends.names(),
        help="where tensor operations run (default: fast if it can run here, else simple)",
    )
    p.add_argument("--out", type=Path, default=Path("out"), help="folder for loss.png and boundary.png (default: out)")
    p.add_argument("--quiet", action="store_true", help="no progress bar (the results are still printed)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> Result:
    p = parser()
    args = p.parse_args(argv)
    backend = args.backend if args.backend is not None else default_backend()
    try:
        backends.get(backend)
    except backends.BackendUnavailable as e:
        p.error(str(e))
    print(f"backend: {backend}")
    result = train(
        args.dataset,
        args.hidden,
        args.epochs,
        args.lr,
        args.momentum,
        args.n,
        args.seed,
        backend,
        progress=not args.quiet,
    )
    curves, boundary = save_plots(result, args.out)
    right = round(result.accuracy * result.data.n)
    print(
        f"final loss {result.losses[-1]:.4f}; final accuracy {100 * result.accuracy:.1f}% ({right}/{result.data.n}); "
        f"trained in {result.seconds:.1f} s"
    )
    print(f"wrote {curves} and {boundary}")
    return result


if __name__ == "__main__":
    main()
