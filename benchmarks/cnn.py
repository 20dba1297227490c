"""CNN training throughput: module 4's LeNet on Digits, torchlight's fast backend against PyTorch.

    python benchmarks/cnn.py [--quick] [--threads N] [--rounds N]

The network is ``torchlight/examples/train_cnn.py``'s LeNet for Digits' 8x8 images (conv 3x3 to 16 channels,
ReLU, 2x2 max pool, conv 3x3 to 32, ReLU, 2x2 max pool, Linear 128 -> 64, ReLU, Linear 64 -> 10),
trained with Adam (lr 0.005) on the cross-entropy in batches of 64: one step is forward,
backward and the optimizer's update (``train_cnn.train_step``). PyTorch trains the same network in
float64, from the same initial weights, on the same batches, with ``torch.optim.Adam``, on as many
threads as numba has. The figure is images per second over a fixed run of batches; each time is
the best of several runs, the contenders taking turns (timing.py). Issue 23 asks for at least 70%
of PyTorch's throughput.

Then the step's parts, each timed alone (forward+backward of one layer on its own input, the loss,
the optimizer's update) on both, so that what limits the step is visible.
"""

import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

from torchlight.utils.cli import ArgumentParser, positive_int


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="python benchmarks/cnn.py", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer rounds")
    p.add_argument("--threads", type=positive_int, help="threads for numba and PyTorch alike (default: numba's)")
    p.add_argument("--rounds", type=positive_int, help="rounds of turns (default 4, --quick 2); more on a busy machine")
    return p


if __name__ == "__main__":  # --help and mistakes answer before the imports below (numpy, numba, torch)
    parser().parse_args()

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import torchlight  # noqa: E402
from conv import table  # noqa: E402  (the same markdown table as the conv benchmark)
from timing import compare, format_time  # noqa: E402
from torchlight.examples.train_cnn import LeNet, load_data, train_step  # noqa: E402
from torchlight.nn import functional as F  # noqa: E402
from torchlight.optim import Adam  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

BATCH, BATCHES, LR = 64, 8, 0.005  # a run: 8 batches of 64 (512 images), as in an epoch of train_cnn


def data() -> Tuple[np.ndarray, np.ndarray]:
    """The first BATCH * BATCHES Digits training images (normalized, N x 1 x 8 x 8) and labels."""
    train, _, _ = load_data("digits")
    inputs = (train.inputs - train.inputs.mean()) / train.inputs.std()
    n = BATCH * BATCHES
    return inputs[:n], train.labels[:n]


def torch_lenet(like: LeNet):
    """The same LeNet in PyTorch (float64), with ``like``'s initial weights."""
    c1, c2 = like.conv1.out_channels, like.conv2.out_channels
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, c1, 3, padding=1, dtype=torch.float64),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(c1, c2, 3, padding=1, dtype=torch.float64),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(like.fc1.in_features, like.fc1.out_features, dtype=torch.float64),
        torch.nn.ReLU(),
        torch.nn.Linear(like.fc2.in_features, like.fc2.out_features, dtype=torch.float64),
    )
    with torch.no_grad():
        for (_, mine), (_, theirs) in zip(like.named_parameters(), model.named_parameters(), strict=True):
            theirs.copy_(torch.from_numpy(mine.value.to_numpy() if hasattr(mine, "value") else mine.to_numpy()))
    return model


def runs(inputs: np.ndarray, labels: np.ndarray) -> Tuple[Callable, Optional[Callable], List[float], List[float]]:
    """A function that trains torchlight's LeNet (fast backend) over the run's batches, PyTorch's
    (None without PyTorch), and both's losses over the first steps (they must agree)."""
    model = LeNet((8, 8), backend="fast", seed=0)
    optimizer = Adam(model.parameters(), lr=LR)
    batches = [
        (
            torchlight.tensor(inputs[i : i + BATCH], backend="fast"),
            torchlight.tensor(labels[i : i + BATCH], dtype=torchlight.int64, backend="fast"),
        )
        for i in range(0, len(labels), BATCH)
    ]

    def fast_run() -> float:
        for x, y in batches:
            loss, _ = train_step(model, optimizer, x, y)
        return loss.item()

    if torch is None:
        return fast_run, None, [], []
    tmodel = torch_lenet(model)
    toptimizer = torch.optim.Adam(tmodel.parameters(), lr=LR)
    tbatches = [
        (torch.from_numpy(inputs[i : i + BATCH]), torch.from_numpy(labels[i : i + BATCH]))
        for i in range(0, len(labels), BATCH)
    ]

    def torch_run() -> float:
        for x, y in tbatches:
            loss = torch.nn.functional.cross_entropy(tmodel(x), y)
            toptimizer.zero_grad()
            loss.backward()
            toptimizer.step()
        return loss.item()

    # Same network, same start, same batches: the losses of the first steps agree (up to rounding,
    # which Adam's division by the root of small second moments amplifies in later steps).
    fast_losses = [train_step(model, optimizer, *batches[i])[0].item() for i in range(3)]
    torch_losses = []
    for x, y in tbatches[:3]:
        loss = torch.nn.functional.cross_entropy(tmodel(x), y)
        toptimizer.zero_grad()
        loss.backward()
        toptimizer.step()
        torch_losses.append(loss.item())
    return fast_run, torch_run, fast_losses, torch_losses


def parts() -> Dict[str, Dict[str, Optional[Callable]]]:
    """Each part of a training step, forward+backward on its own input: {part: {"fast": fn, "torch": fn}}."""
    rng = np.random.default_rng(3)
    shapes = {  # the activations of a batch of 64 through LeNet((8, 8))
        "conv1 (64x1x8x8 -> 16 channels, no input grad)": ((64, 1, 8, 8), (16, 1, 3, 3), False),
        "conv2 (64x16x4x4 -> 32 channels)": ((64, 16, 4, 4), (32, 16, 3, 3), True),
    }
    out: Dict[str, Dict[str, Optional[Callable]]] = {}

    def both(fast_fn, torch_fn):
        return {"fast": fast_fn, "torch": torch_fn if torch is not None else None}

    def leaf(a, grad=True):
        return torchlight.tensor(a, backend="fast", requires_grad=grad)

    def tleaf(a, grad=True):
        return torch.tensor(a, requires_grad=grad)

    for name, (x_shape, w_shape, input_grad) in shapes.items():
        x, w, b = rng.standard_normal(x_shape), rng.standard_normal(w_shape), rng.standard_normal(w_shape[0])
        g = rng.standard_normal((x_shape[0], w_shape[0]) + x_shape[2:])
        fl, fg = [leaf(x, input_grad), leaf(w), leaf(b)], torchlight.tensor(g, backend="fast")

        def fast_conv(fl=fl, fg=fg):
            F.conv2d(*fl, padding=1).backward(fg)

        tfn = None
        if torch is not None:
            tl, tg = [tleaf(x, input_grad), tleaf(w), tleaf(b)], torch.tensor(g)

            def tfn(tl=tl, tg=tg):
                torch.nn.functional.conv2d(*tl, padding=1).backward(tg)

        out[name] = both(fast_conv, tfn)
    # ReLU then pool, as the network applies them, at both sizes
    for name, shape in (
        ("relu + max pool 1 (64x16x8x8)", (64, 16, 8, 8)),
        ("relu + max pool 2 (64x32x4x4)", (64, 32, 4, 4)),
    ):
        x = rng.standard_normal(shape)
        g = rng.standard_normal(shape[:2] + (shape[2] // 2, shape[3] // 2))
        fx, fg = leaf(x), torchlight.tensor(g, backend="fast")
        tfn = None
        if torch is not None:
            tx, tg = tleaf(x), torch.tensor(g)

            def tfn(tx=tx, tg=tg):
                torch.nn.functional.max_pool2d(tx.relu(), 2).backward(tg)

        out[name] = both(lambda fx=fx, fg=fg: F.max_pool2d(fx.relu(), 2).backward(fg), tfn)
    # flatten, fc1, relu, fc2 and the loss
    x = rng.standard_normal((64, 32, 2, 2))
    w1, b1, w2, b2 = (rng.standard_normal(s) for s in ((64, 128), (64,), (10, 64), (10,)))
    y = rng.integers(0, 10, 64)
    fl = [leaf(a) for a in (x, w1, b1, w2, b2)]
    fy = torchlight.tensor(y, dtype=torchlight.int64, backend="fast")
    logits = rng.standard_normal((64, 10))
    flog, tfn_lin, tfn_loss = leaf(logits), None, None
    glog = rng.standard_normal((64, 10))
    fglog = torchlight.tensor(glog, backend="fast")

    def fast_linear(fl=fl):
        x, w1, b1, w2, b2 = fl
        F.linear(F.linear(x.flatten(1), w1, b1).relu(), w2, b2).backward(fglog)

    if torch is not None:
        tl, ty, tlog, tglog = (
            [tleaf(a) for a in (x, w1, b1, w2, b2)],
            torch.from_numpy(y),
            tleaf(logits),
            torch.tensor(glog),
        )

        def tfn_lin(tl=tl):
            x, w1, b1, w2, b2 = tl
            tnf = torch.nn.functional
            tnf.linear(tnf.linear(x.flatten(1), w1, b1).relu(), w2, b2).backward(tglog)

        def tfn_loss():
            torch.nn.functional.cross_entropy(tlog, ty).backward()

    out["flatten, fc1, relu, fc2 (128 -> 64 -> 10)"] = both(fast_linear, tfn_lin)
    out["cross-entropy (64x10)"] = both(lambda: F.cross_entropy(flog, fy).backward(), tfn_loss)
    # the optimizer: zero_grad and Adam's step over LeNet's parameters, gradients in place
    model = LeNet((8, 8), backend="fast", seed=0)
    for p in model.parameters():
        p.value.grad = torchlight.tensor(rng.standard_normal(p.value.shape), backend="fast")
    optimizer = Adam(model.parameters(), lr=LR)
    tstep = None
    if torch is not None:
        tmodel = torch_lenet(model)
        for p in tmodel.parameters():
            p.grad = torch.tensor(rng.standard_normal(tuple(p.shape)))
        toptimizer = torch.optim.Adam(tmodel.parameters(), lr=LR)
        tstep = toptimizer.step
    out["Adam step (10 parameters)"] = both(optimizer.step, tstep)
    return out


def report(rounds: int) -> Tuple[str, List[str]]:
    """The tables as text, and the target line."""
    inputs, labels = data()
    fast_run, torch_run, fast_losses, torch_losses = runs(inputs, labels)
    if torch_run is not None:
        np.testing.assert_allclose(fast_losses[0], torch_losses[0], rtol=1e-10)
        np.testing.assert_allclose(fast_losses, torch_losses, rtol=1e-6)
    times = compare({"fast": fast_run, "torch": torch_run}, rounds=rounds, budget=0.5, pause=0.1)
    images = BATCH * BATCHES
    rate = {k: images / t for k, t in times.items()}
    out = [
        f"CNN training on Digits: LeNet (8x8 -> conv 16 -> pool -> conv 32 -> pool -> 64 -> 10), Adam, "
        f"batches of {BATCH}, float64 ({numba_threads()} threads)\n"
    ]
    header = ["", "fast", "torch", "share (fast / torch throughput)"]
    step = lambda k: format_time(times[k] / BATCHES) if k in times else "-"  # noqa: E731
    img = lambda k: f"{rate[k]:,.0f}" if k in rate else "-"  # noqa: E731
    share = f"{100 * rate['fast'] / rate['torch']:.0f}%" if "torch" in rate else "-"
    out.append(
        table(
            header, [["images/s", img("fast"), img("torch"), share], ["time per step", step("fast"), step("torch"), ""]]
        )
    )

    part_fns = parts()
    part_times = {name: compare(fns, rounds=rounds, budget=0.2, pause=0.05) for name, fns in part_fns.items()}
    fast_sum = sum(t["fast"] for t in part_times.values())
    rows = []
    for name, t in part_times.items():
        ft, tt = t["fast"], t.get("torch")
        rows.append(
            [
                name,
                format_time(ft),
                f"{100 * ft / fast_sum:.0f}%",
                format_time(tt),
                "-" if tt is None else f"{100 * tt / ft:.0f}%",
            ]
        )
    out.append("\nThe step's parts, each forward+backward alone (share: torch's time / fast's)\n")
    out.append(table(["part", "fast", "of fast's sum", "torch", "share"], rows))
    out.append(f"\n(the parts' sum: fast {format_time(fast_sum)}, one whole step {step('fast')})")
    targets = []
    if "torch" in rate:
        ok = rate["fast"] >= 0.7 * rate["torch"]  # issue 23, item 4
        targets.append(
            f"- CNN training on Digits: fast reaches {share} of PyTorch's images/s (at least 70%): "
            + ("met" if ok else "NOT met")
        )
    return "\n".join(out), targets


def numba_threads() -> int:
    import numba

    return numba.get_num_threads()


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    import numba

    if args.threads:
        numba.set_num_threads(args.threads)
    if torch is not None:  # the same threads for both
        torch.set_num_threads(numba.get_num_threads())
    started = time.perf_counter()
    import machine

    print("\n".join(machine.describe()))
    print()
    text, targets = report(args.rounds or (2 if args.quick else 4))
    print(text)
    print("\nTargets\n")
    print("\n".join(targets) if targets else "(PyTorch is not installed: no ratio)")
    print(f"\n(benchmark took {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
