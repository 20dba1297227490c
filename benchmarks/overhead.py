"""Per-operation overhead of the autograd engine, torchlight against PyTorch, in the same run.

A chain of 1,000 small operations (tensors of a few elements, so that the arithmetic is
negligible and what is timed is the bookkeeping: building Functions, Contexts, History, the
graph walk) is run forward with recording on, then backward. Two chains:

- built-in: ``x = x * w``, ``x = x + w``, ``x = x.sigmoid()``, repeated;
- custom: the same chain made of one custom ``Function`` (legacy style), written once and run
  through ``torchlight.autograd.Function`` and ``torch.autograd.Function``.

A third row times the engine alone: a custom Function whose forward and backward do no
arithmetic, so what remains is ``apply`` and the backward pass's own bookkeeping.

Both of torchlight's paths are timed in the same run, taking turns with PyTorch: the native layer
(``torchlight.autograd.native``, where it is built: the fused apply, the backward walk's helpers
and the fast backend's kernel launch) and the Python it stands for, which is what runs with
``TORCHLIGHT_NATIVE=0``. Between turns the benchmark puts one or the other in place
(``native.switch``).

Run it from the repository root:  ``python benchmarks/overhead.py [--ops 1000] [--size 4]
[--rounds 5] [--backend simple] [--paths native,python]``. It prints microseconds per operation and the ratio
torchlight / PyTorch (higher is slower). torch is optional: without it only torchlight's columns
are shown.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from torchlight import backends
from torchlight.utils.cli import ArgumentParser, positive_int

PATHS = ("native", "python")  # torchlight's two applies


def apply_paths(text: str) -> list:
    """--paths: a comma-separated list of native and python."""
    chosen = [p for p in text.split(",") if p]
    wrong = [p for p in chosen if p not in PATHS]
    if wrong or not chosen:
        raise argparse.ArgumentTypeError(f"expected native, python or native,python, got {text!r}")
    return chosen


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="python benchmarks/overhead.py", description=__doc__.splitlines()[0])
    p.add_argument("--ops", type=positive_int, default=1000, help="length of the chain (default: 1000)")
    p.add_argument("--size", type=positive_int, default=4, help="elements per tensor (default: 4)")
    p.add_argument("--rounds", type=positive_int, default=5, help="best of this many rounds of turns (default: 5)")
    p.add_argument("--backend", choices=backends.names(), help="torchlight backend (default: the default one)")
    p.add_argument(
        "--paths",
        type=apply_paths,
        default=list(PATHS),
        help="torchlight's applies to time, of native,python (default: both)",
    )
    return p


if __name__ == "__main__":  # --help and mistakes answer before the imports below (numpy, numba, torch)
    parser().parse_args()

import numpy as np  # noqa: E402

import torchlight  # noqa: E402
from torchlight.autograd import Function as TLFunction  # noqa: E402
from torchlight.autograd import native  # noqa: E402
from torchlight.backends import fast_launch  # noqa: E402

try:
    import torch
except ImportError:  # the benchmark still runs, without the comparison
    torch = None


def make_custom(base):
    """The same custom Function for either library, written once: y = x * w + w."""

    class MulAdd(base):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x * w + w

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g * w, g * x + g

    return MulAdd


def make_bare(base):
    """A custom Function that does no arithmetic: only the engine's work is left to time."""

    class Bare(base):
        @staticmethod
        def forward(ctx, x, w):
            return x.detach()  # a new tensor sharing x's data, as PyTorch's view_as without history

        @staticmethod
        def backward(ctx, g):
            return g, None

    return Bare


def builtin_chain(x, w, n):
    for i in range(n):
        k = i % 3
        if k == 0:
            x = x * w
        elif k == 1:
            x = x + w
        else:
            x = x.sigmoid()
    return x


def custom_chain(fn, x, w, n):
    for _ in range(n):
        x = fn.apply(x, w)
    return x


# The two applies: what torchlight registered (the native one, where built) and function.py's own.
_NATIVE = native.path() == "native"


def use_path(path):
    """Put the native layer or the Python one in place (the benchmark's switch between turns);
    with None, what torchlight set up."""
    native.switch(_NATIVE and path != "python")


def time_once(run, make_inputs):
    """Seconds for one forward chain and for its backward."""
    x, w = make_inputs()
    t0 = time.perf_counter()
    y = run(x, w)
    t1 = time.perf_counter()
    y.sum().backward()
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1


def time_contenders(contenders, repeats):
    """Best-of-``repeats`` (forward, backward) seconds per contender, the contenders taking turns
    (so that a slow moment of a shared machine falls on all of them)."""
    best = {name: [float("inf"), float("inf")] for name in contenders}
    for _ in range(repeats):
        for name, (path, run, make_inputs) in contenders.items():
            use_path(path)
            try:
                f, b = time_once(run, make_inputs)
            finally:
                use_path(None)  # what torchlight registered
            best[name][0] = min(best[name][0], f)
            best[name][1] = min(best[name][1], b)
    return best


def main(argv=None):
    args = parser().parse_args(argv)
    if args.backend is not None:
        torchlight.set_default_backend(args.backend)
    paths = [p for p in args.paths if p == "python" or native.path() == "native"]
    n, size = args.ops, args.size
    rng = np.random.default_rng(0)
    x0, w0 = rng.random(size) * 0.5, rng.random(size) * 0.5 + 0.5

    def tl_inputs():
        return torchlight.tensor(x0, requires_grad=True), torchlight.tensor(w0)

    def torch_inputs():
        return torch.tensor(x0, requires_grad=True), torch.tensor(w0)

    tl_custom, tl_bare = make_custom(TLFunction), make_bare(TLFunction)
    cases = [
        ("built-in ops", lambda x, w: builtin_chain(x, w, n), lambda x, w: builtin_chain(x, w, n)),
        ("custom Function", lambda x, w: custom_chain(tl_custom, x, w, n), None),
        ("engine only", lambda x, w: custom_chain(tl_bare, x, w, n), None),
    ]
    if torch is not None:
        torch_custom, torch_bare = make_custom(torch.autograd.Function), make_bare(torch.autograd.Function)
        cases[1] = (cases[1][0], cases[1][1], lambda x, w: custom_chain(torch_custom, x, w, n))
        cases[2] = (cases[2][0], cases[2][1], lambda x, w: custom_chain(torch_bare, x, w, n))

    print(
        f"chain of {n} ops on tensors of {size} elements, backend '{torchlight.backends.default().name}', "
        f"best of {args.rounds}, contenders taking turns; microseconds per op"
    )
    print(
        f"torchlight's apply: {native.path()} ({native.reason()}); kernel launch: {native.launches()} "
        f"({fast_launch.reason()}); timed: {', '.join(paths)}"
    )
    header = f"{'case':<18}{'pass':<10}" + "".join(f"{p:>10}" for p in paths)
    header += f"{'PyTorch':>10}" + "".join(f"{p + ' ratio':>14}" for p in paths) if torch is not None else ""
    print(header)
    print("-" * len(header))
    ratios = {p: [] for p in paths}
    for name, tl_run, torch_run in cases:
        contenders = {p: (p, tl_run, tl_inputs) for p in paths}
        if torch is not None:
            contenders["PyTorch"] = (None, torch_run, torch_inputs)
        best = time_contenders(contenders, args.rounds)
        for i, label in enumerate(("forward", "backward")):
            us = {c: best[c][i] / n * 1e6 for c in contenders}
            line = f"{name:<18}{label:<10}" + "".join(f"{us[p]:>10.1f}" for p in paths)
            if torch is not None:
                line += f"{us['PyTorch']:>10.1f}"
                for p in paths:
                    ratios[p].append(us[p] / us["PyTorch"])
                    line += f"{us[p] / us['PyTorch']:>13.2f}x"
            print(line)
    for p in paths:
        if ratios[p]:
            print(f"geometric mean ratio, {p}: {statistics.geometric_mean(ratios[p]):.2f}x")


if __name__ == "__main__":
    main()
