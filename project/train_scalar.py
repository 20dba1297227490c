"""Module 1 project: a two-layer network made of Scalars, trained on a toy data set.

    python -m project.train_scalar --dataset xor --hidden 10 --epochs 300 --lr 0.5 --seed 0 --out out/

Every weight is one Scalar and every multiplication one node of the graph, so this is slow
(a few thousand nodes per point) but every step of autodiff is visible.
"""

import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from tqdm import tqdm

import torchlight
from torchlight import Scalar, datasets
from torchlight.examples import plots
from torchlight.nn import Module
from torchlight.optim import SGD
from torchlight.utils.cli import ArgumentParser, fraction, positive_float, positive_int


class ScalarLinear(Module):
    """out[j] = bias[j] + sum_i inputs[i] * weights[i][j], one Scalar parameter per weight."""

    def __init__(self, in_size: int, out_size: int, rng: random.Random):
        super().__init__()
        self.in_size, self.out_size = in_size, out_size
        # PyTorch's nn.Linear default: uniform in +-1/sqrt(in_size), for weights and biases.
        bound = 1.0 / math.sqrt(in_size)
        self.weights = [
            [self.add_parameter(f"weight_{i}_{j}", Scalar(rng.uniform(-bound, bound))) for j in range(out_size)]
            for i in range(in_size)
        ]
        self.bias = [self.add_parameter(f"bias_{j}", Scalar(rng.uniform(-bound, bound))) for j in range(out_size)]

    def forward(self, inputs: Sequence[Scalar]) -> List[Scalar]:
        if len(inputs) != self.in_size:
            raise ValueError(f"ScalarLinear expects {self.in_size} inputs, got {len(inputs)}")
        # BEGIN SOLUTION 1.5: one output per column j: bias[j] plus the inputs times column j's weights
        # HINT: a parameter's Scalar is its .value (self.bias[j].value, self.weights[i][j].value).
        outs = []
        for j in range(self.out_size):
            total = self.bias[j].value
            for i, x in enumerate(inputs):
                total = total + x * self.weights[i][j].value
            outs.append(total)
        return outs
        # END SOLUTION 1.5

    def extra_repr(self) -> str:
        return f"in_size={self.in_size}, out_size={self.out_size}"


class ScalarNetwork(Module):
    """2 inputs -> ``hidden`` ReLUs -> 1 logit (the log-odds of class 1)."""

    def __init__(self, hidden: int, seed: int = 0):
        super().__init__()
        if hidden < 1:
            raise ValueError(f"ScalarNetwork needs hidden >= 1, got {hidden}")
        rng = random.Random(seed)  # seeded, and independent of global random state
        self.layer1 = ScalarLinear(2, hidden, rng)
        self.layer2 = ScalarLinear(hidden, 1, rng)

    def forward(self, x: Sequence[Scalar]) -> Scalar:
        # BEGIN SOLUTION 1.5
        # HINT: centre the unit square on 0 (2x - 1 maps it to [-1, 1]): the first layer's lines then
        # start out cutting through the data, which speeds up training a lot. Then layer1, ReLU, layer2.
        x = [2.0 * xi - 1.0 for xi in x]
        hidden = [h.relu() for h in self.layer1(x)]
        return self.layer2(hidden)[0]
        # END SOLUTION 1.5

    def predict(self, x1: float, x2: float) -> float:
        """P(class 1) at the point (x1, x2), without recording a graph."""
        with torchlight.no_grad():
            return self.forward([Scalar(x1, history=None), Scalar(x2, history=None)]).sigmoid().data


def loss_and_correct(model: ScalarNetwork, data: datasets.Graph) -> Tuple[Scalar, int]:
    """Mean binary cross-entropy over the data set, and how many points are classified right."""
    # BEGIN SOLUTION 1.5
    # HINT: the points are constants (Scalar(x, history=None)); the loss of one point is
    # HINT: -log P(its true label), where P(class 1) = sigmoid(logit) and 1 - sigmoid(z) = sigmoid(-z).
    total, correct = Scalar(0.0, history=None), 0
    for (x1, x2), label in zip(data.X, data.y, strict=True):
        logit = model([Scalar(x1, history=None), Scalar(x2, history=None)])
        p_true = (logit if label == 1 else -logit).sigmoid()
        total = total - p_true.log()
        correct += int(p_true.data > 0.5)
    return total / data.n, correct
    # END SOLUTION 1.5


@dataclass
class Result:
    """What a training run produced."""

    model: ScalarNetwork
    data: datasets.Graph
    losses: List[float] = field(default_factory=list)
    accuracies: List[float] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        """Training accuracy (0..1) of the final model."""
        return (
            sum(
                int((self.model.predict(*x) > 0.5) == (label == 1))
                for x, label in zip(self.data.X, self.data.y, strict=True)
            )
            / self.data.n
        )


def train(
    dataset: str = "xor",
    hidden: int = 10,
    epochs: int = 300,
    lr: float = 0.5,
    momentum: float = 0.9,
    n: int = 50,
    seed: int = 0,
    progress: bool = True,
) -> Result:
    """Train a ScalarNetwork with full-batch SGD on mean binary cross-entropy; one backward per epoch."""
    if epochs < 1:
        raise ValueError(f"epochs must be >= 1, got {epochs}")
    data = datasets.get(dataset)(n, seed=seed)
    model = ScalarNetwork(hidden, seed=seed)
    optimizer = SGD(model.parameters(), lr, momentum)
    result = Result(model, data)
    bar = tqdm(range(epochs), desc=f"scalar {dataset}", unit="epoch", disable=not progress)
    for _ in bar:
        # BEGIN SOLUTION 1.5: one training step: the loss, its gradients, the optimizer's step
        # HINT: .grad accumulates: clear last epoch's (optimizer.zero_grad()) before backward.
        loss, correct = loss_and_correct(model, data)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        # END SOLUTION 1.5
        # Loss and accuracy are those of the parameters before this epoch's step.
        result.losses.append(loss.data)
        result.accuracies.append(correct / data.n)
        bar.set_postfix(loss=f"{loss.data:.4f}", acc=f"{100 * correct / data.n:.0f}%")
    return result


def save_plots(result: Result, out: Path) -> Tuple[Path, Path]:
    """Write loss.png and boundary.png into ``out``."""
    out = Path(out)
    curves = plots.plot_history(result.losses, result.accuracies, out / "loss.png")
    boundary = plots.plot_boundary(
        result.model.predict, result.data.X, result.data.y, out / "boundary.png", title="scalar network"
    )
    return curves, boundary


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="python -m project.train_scalar", description=__doc__.split("\n")[0])
    p.add_argument("--dataset", default="xor", choices=sorted(datasets.TOY), help="toy data set (default: xor)")
    p.add_argument("--hidden", type=positive_int, default=10, help="hidden units (default: 10)")
    p.add_argument("--epochs", type=positive_int, default=300, help="passes over the data (default: 300)")
    p.add_argument("--lr", type=positive_float, default=0.5, help="SGD learning rate (default: 0.5)")
    p.add_argument("--momentum", type=fraction, default=0.9, help="SGD momentum (default: 0.9)")
    p.add_argument("--n", type=positive_int, default=50, help="number of data points (default: 50)")
    p.add_argument("--seed", type=int, default=0, help="seed for data and initial weights (default: 0)")
    p.add_argument("--out", type=Path, default=Path("out"), help="folder for loss.png and boundary.png (default: out)")
    p.add_argument("--quiet", action="store_true", help="no progress bar (the results are still printed)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> Result:
    args = parser().parse_args(argv)
    result = train(
        args.dataset, args.hidden, args.epochs, args.lr, args.momentum, args.n, args.seed, progress=not args.quiet
    )
    curves, boundary = save_plots(result, args.out)
    right = round(result.accuracy * result.data.n)
    print(f"final loss {result.losses[-1]:.4f}; final accuracy {100 * result.accuracy:.1f}% ({right}/{result.data.n})")
    print(f"wrote {curves} and {boundary}")
    return result


if __name__ == "__main__":
    main()
