"""Convolution and pooling: torchlight's fast backend against numpy and PyTorch (float64), same run.

    python benchmarks/conv.py [--quick] [--threads N] [--rounds N]

Rows: conv2d at the issue's two sizes (batch 64x1x28x28 with 8 filters of 3x3, and 64x8x14x14
with 16, padding 1), forward alone, forward+backward (the gradients of input, weight and bias:
the issue's target), and forward+backward without the input's gradient (a network's first layer,
whose input is data); a conv1d; max and avg pooling. Then where the time of one conv2d
forward+backward goes (unfold, the three matrix products, fold, the bias), and the targets.

torchlight computes a convolution as unfold (the windows as columns) and one matrix product
(``torchlight/ops/conv.py``); numpy here does the same with ``sliding_window_view`` and
``matmul``, its backward adding the columns back one kernel offset at a time; PyTorch calls its
own float64 convolution (im2col and BLAS on the CPU). Each time is the best of several runs, the
contenders taking turns (timing.py); "fast / torch" is a ratio of times (below 1: fast is faster)
and "share" is PyTorch's time over fast's: issue 23 asks for at least 60%.
"""

import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

from torchlight.utils.cli import ArgumentParser, positive_int


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="python benchmarks/conv.py", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer rounds")
    p.add_argument("--threads", type=positive_int, help="threads for numba and PyTorch alike (default: numba's)")
    p.add_argument("--rounds", type=positive_int, help="rounds of turns (default 4, --quick 2); more on a busy machine")
    return p


if __name__ == "__main__":  # --help and mistakes answer before the imports below (numpy, numba, torch)
    parser().parse_args()

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import torchlight  # noqa: E402
from timing import compare, format_ratio, format_time  # noqa: E402
from torchlight.ops import pooling  # noqa: E402
from torchlight.ops.conv import conv1d, conv2d  # noqa: E402
from torchlight.ops.fused_nn import max_pool2d  # noqa: E402  (F.max_pool2d: one kernel for side-by-side windows)

try:
    import torch
except ImportError:
    torch = None

# (name, input shape, weight shape, padding): the two conv2d sizes, and a conv1d.
CONV2D = [("conv2d", (64, 1, 28, 28), (8, 1, 3, 3), 1), ("conv2d", (64, 8, 14, 14), (16, 8, 3, 3), 1)]
CONV1D = [("conv1d", (64, 4, 256), (8, 4, 5), 2)]
# max_pool2d is the library's (F.max_pool2d, fused on fast); "taught" is stage 4.3's composition
POOLS = [
    ("max_pool2d", (64, 8, 28, 28), 2, max_pool2d),
    ("max_pool2d, taught", (64, 8, 28, 28), 2, pooling.max_pool2d),
    ("avg_pool2d", (64, 8, 28, 28), 2, pooling.avg_pool2d),
]


def _shape(shape: tuple) -> str:
    return "x".join(map(str, shape))


def numpy_conv(x: np.ndarray, w: np.ndarray, b: np.ndarray, padding: int, g: Optional[np.ndarray] = None):
    """conv (1-D or 2-D, stride 1) by im2col in numpy; with g, also the gradients (dx, dw, db)."""
    spatial = x.ndim - 2
    pad = [(0, 0), (0, 0)] + [(padding, padding)] * spatial
    xp = np.pad(x, pad)
    kernel = w.shape[2:]
    windows = np.lib.stride_tricks.sliding_window_view(xp, kernel, axis=tuple(range(2, 2 + spatial)))
    # windows: (N, C, *out, *kernel) -> columns (N, *out, C * K)
    n, c = x.shape[:2]
    out_sizes = windows.shape[2 : 2 + spatial]
    order = (0,) + tuple(range(2, 2 + spatial)) + (1,) + tuple(range(2 + spatial, 2 + 2 * spatial))
    cols = windows.transpose(order).reshape(n, -1, c * int(np.prod(kernel)))
    w2 = w.reshape(w.shape[0], -1)
    out = (cols @ w2.T).transpose(0, 2, 1).reshape((n, w.shape[0]) + out_sizes) + b.reshape((-1,) + (1,) * spatial)
    if g is None:
        return out
    g2 = g.reshape(n, w.shape[0], -1)  # (N, O, L)
    dw = np.einsum("nol,nlk->ok", g2, cols).reshape(w.shape)
    db = g2.sum((0, 2))
    dcols = (w2.T @ g2).reshape((n, c) + tuple(kernel) + out_sizes)  # (N, C, *K, *out)
    dxp = np.zeros_like(xp)
    for offset in np.ndindex(*kernel):  # add each kernel offset's columns back, shifted
        target = (slice(None), slice(None)) + tuple(slice(o, o + s) for o, s in zip(offset, out_sizes, strict=True))
        dxp[target] += dcols[(slice(None), slice(None)) + offset]
    dx = dxp[(slice(None), slice(None)) + tuple(slice(padding, padding + s) for s in x.shape[2:])]
    return out, dx, dw, db


def conv_rows(rounds: int) -> List[list]:
    """[operation, shape, mode, fast, numpy, torch] timings for each convolution."""
    rows = []
    rng = np.random.default_rng(0)
    for name, x_shape, w_shape, padding in CONV2D + CONV1D:
        x, w, b = rng.standard_normal(x_shape), rng.standard_normal(w_shape), rng.standard_normal(w_shape[0])
        fn, tfn = (conv2d, "conv2d") if name == "conv2d" else (conv1d, "conv1d")
        out_shape = numpy_conv(x, w, b, padding).shape
        g = rng.standard_normal(out_shape)
        leaves = [torchlight.tensor(a, backend="fast", requires_grad=True) for a in (x, w, b)]
        gt = torchlight.tensor(g, backend="fast")

        def fast_forward(leaves=leaves, fn=fn, padding=padding):
            with torchlight.no_grad():
                fn(*leaves, padding=padding)

        def fast_both(leaves=leaves, fn=fn, padding=padding, gt=gt):
            for t in leaves:
                t.grad = None
            fn(*leaves, padding=padding).backward(gt)

        # a network's first layer: the input is data, only the weight and the bias get gradients
        data = torchlight.tensor(x, backend="fast")

        def fast_first(leaves=leaves, data=data, fn=fn, padding=padding, gt=gt):
            for t in leaves[1:]:
                t.grad = None
            fn(data, *leaves[1:], padding=padding).backward(gt)

        contenders_f: Dict[str, Optional[Callable]] = {
            "fast": fast_forward,
            "numpy": lambda x=x, w=w, b=b, padding=padding: numpy_conv(x, w, b, padding),
            "torch": None,
        }
        contenders_b: Dict[str, Optional[Callable]] = {
            "fast": fast_both,
            "numpy": lambda x=x, w=w, b=b, padding=padding, g=g: numpy_conv(x, w, b, padding, g),
            "torch": None,
        }
        contenders_w: Dict[str, Optional[Callable]] = {"fast": fast_first, "numpy": None, "torch": None}
        if torch is not None:
            tleaves = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
            tg, tf = torch.tensor(g), getattr(torch.nn.functional, tfn)

            def torch_forward(tleaves=tleaves, tf=tf, padding=padding):
                with torch.no_grad():
                    tf(*tleaves, padding=padding)

            def torch_both(tleaves=tleaves, tf=tf, padding=padding, tg=tg):
                for t in tleaves:
                    t.grad = None
                tf(*tleaves, padding=padding).backward(tg)

            tdata = torch.tensor(x)

            def torch_first(tleaves=tleaves, tdata=tdata, tf=tf, padding=padding, tg=tg):
                for t in tleaves[1:]:
                    t.grad = None
                tf(tdata, *tleaves[1:], padding=padding).backward(tg)

            contenders_f["torch"], contenders_b["torch"], contenders_w["torch"] = torch_forward, torch_both, torch_first
        label = f"{_shape(x_shape)}, {w_shape[0]} filters {'x'.join(map(str, w_shape[2:]))}, padding {padding}"
        passes = [("forward", contenders_f), ("forward+backward", contenders_b)]
        if name == "conv2d":
            passes.append(("fwd+bwd, no input grad", contenders_w))
        for mode, contenders in passes:
            times = compare(contenders, rounds=rounds, budget=0.3, pause=0.1)
            rows.append([name, label, mode] + [times.get(k) for k in ("fast", "numpy", "torch")])
    return rows


def pool_rows(rounds: int) -> List[list]:
    rows = []
    rng = np.random.default_rng(1)
    for name, shape, k, fn in POOLS:
        x = rng.standard_normal(shape)
        leaf = torchlight.tensor(x, backend="fast", requires_grad=True)
        g = torchlight.tensor(rng.standard_normal((shape[0], shape[1], shape[2] // k, shape[3] // k)), backend="fast")

        def fast_both(leaf=leaf, fn=fn, k=k, g=g):
            leaf.grad = None
            fn(leaf, k).backward(g)

        contenders: Dict[str, Optional[Callable]] = {"fast": fast_both, "numpy": None, "torch": None}
        if torch is not None:
            tleaf, tg = torch.tensor(x, requires_grad=True), torch.tensor(g.to_numpy())
            tfn = getattr(torch.nn.functional, name.split(",")[0])

            def torch_both(tleaf=tleaf, tfn=tfn, k=k, tg=tg):
                tleaf.grad = None
                tfn(tleaf, k).backward(tg)

            contenders["torch"] = torch_both
        times = compare(contenders, rounds=rounds, budget=0.3, pause=0.1)
        rows.append(
            [name, f"{_shape(shape)}, kernel {k}", "forward+backward"]
            + [times.get(c) for c in ("fast", "numpy", "torch")]
        )
    return rows


def breakdown(rounds: int) -> List[Tuple[str, float]]:
    """Where one conv2d forward+backward of the first size goes: each step alone, on the fast backend."""
    fast = torchlight.backends.get("fast")
    (_, x_shape, w_shape, padding) = CONV2D[0]
    rng = np.random.default_rng(2)
    n, o = x_shape[0], w_shape[0]
    ck = int(np.prod(w_shape[1:]))
    t = lambda a: torchlight.tensor(a, backend=fast)  # noqa: E731
    x = t(rng.standard_normal(x_shape))
    cols = fast.unfold(x, w_shape[2:], (1, 1), (padding, padding))  # (N, C*K, L)
    length = cols.shape[2]
    w2, g = t(rng.standard_normal((o, ck))), t(rng.standard_normal((n, o, length)))
    bias = t(rng.standard_normal((o, 1)))
    gcols = t(rng.standard_normal((n, ck, length)))
    from torchlight import scalar

    steps = {
        "unfold (forward)": lambda: fast.unfold(x, w_shape[2:], (1, 1), (padding, padding)),
        "weight @ columns (forward)": lambda: fast.matrix_multiply(w2, cols),
        "+ bias (forward)": lambda: fast.zip(scalar.add)(g, bias),
        "grad @ columns^T (weight's gradient)": lambda: fast.matrix_multiply(g, cols.permute(0, 2, 1)),
        "weight^T @ grad (columns' gradient)": lambda: fast.matrix_multiply(w2.permute(1, 0), g),
        "fold (input's gradient)": lambda: fast.fold(gcols, x_shape[2:], w_shape[2:], (1, 1), (padding, padding)),
        "sum over batch and positions (bias's gradient)": lambda: g.sum((0, 2)),
    }
    times = compare(steps, rounds=rounds, budget=0.2, pause=0.05)
    return [(k, times[k]) for k in steps]


def table(header: List[str], rows: List[List[str]]) -> str:
    """A markdown table whose columns line up in a terminal too (as run.py's)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"  # noqa: E731
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [line(r) for r in rows])


def share(fast: Optional[float], torch_time: Optional[float]) -> str:
    return "-" if fast is None or torch_time is None else f"{100 * torch_time / fast:.0f}%"


def report(rounds: int) -> Tuple[str, List[str]]:
    """The tables as text, and the target lines."""
    rows = conv_rows(rounds) + pool_rows(rounds)
    out = ["Convolution and pooling, float64 (time per call; share: torch's time / fast's)\n"]
    out.append(
        table(
            ["operation", "shape", "pass", "fast", "numpy", "torch", "fast / torch", "share"],
            [
                [op, shape, mode, format_time(f), format_time(npt), format_time(tt), format_ratio(f, tt), share(f, tt)]
                for op, shape, mode, f, npt, tt in rows
            ],
        )
    )
    steps = breakdown(rounds)
    total = sum(s for _, s in steps)
    out.append(
        f"\nOne conv2d forward+backward, {_shape(CONV2D[0][1])} with {CONV2D[0][2][0]} filters 3x3, "
        "step by step (fast)\n"
    )
    out.append(
        table(["step", "time", "of the steps' sum"], [[k, format_time(s), f"{100 * s / total:.0f}%"] for k, s in steps])
    )
    targets = []
    for op, shape, mode, f, _, tt in rows:
        if op == "conv2d" and mode == "forward+backward" and tt is not None:
            ok = tt / f >= 0.6
            targets.append(
                f"- conv2d forward+backward {shape}: fast reaches {share(f, tt)} of PyTorch's speed "
                f"(at least 60%): {'met' if ok else 'NOT met'}"
            )
    return "\n".join(out), targets


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    if args.threads:
        import numba

        numba.set_num_threads(args.threads)
    if torch is not None:  # the same threads for both
        import numba

        torch.set_num_threads(numba.get_num_threads())
    started = time.perf_counter()
    import machine

    print("\n".join(machine.describe()))
    print()
    text, targets = report(args.rounds or (2 if args.quick else 4))
    print(text)
    print("\nTargets\n")
    print("\n".join(targets) if targets else "(PyTorch is not installed: no ratios)")
    print(f"\n(benchmark took {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
