"""The fast backend's benchmark: one table of simple, fast, numpy and PyTorch, with ratios.

    make bench                      (the same as the line below, with numpy's best BLAS kernel)
    python benchmarks/run.py [--quick] [--no-simple] [--no-startup]

Rows: map, zip (contiguous, broadcast, permuted) and reduce at two sizes; matrix multiply at
several sizes and batched; one training epoch of a 2 -> 100 -> 100 -> 1 network; module 4's
convolutions and pools (benchmarks/conv.py, which also runs alone); CNN training throughput on
Digits (benchmarks/cnn.py, which also runs alone); and the compile
cost (first use of every kernel with empty caches, then with warm ones). Each contender's time is
its best of several runs, the contenders taking turns (see timing.py). "fast / numpy" is a ratio
of times: below 1 means fast is faster. The last lines check the targets of the issue that asked
for the backend (docs/performance.md keeps a copy of the output, with the machine it ran on).

``make bench`` unsets OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for this command alone: some set-ups
set them, and they make numpy choose a slower kernel (the output names the kernel numpy used).
"""

import sys
import time
from pathlib import Path
from typing import List, Optional

from torchlight.utils.cli import ArgumentParser


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="python benchmarks/run.py", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="one size per operation, fewer rounds")
    p.add_argument("--no-simple", action="store_true", help="do not time the (slow) simple backend")
    p.add_argument("--no-startup", action="store_true", help="skip the compile-cost runs (two fresh processes)")
    return p


if __name__ == "__main__":  # --help and mistakes answer before the imports below (numpy, numba, torch)
    parser().parse_args()

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cnn  # noqa: E402
import conv  # noqa: E402
import machine  # noqa: E402
import mlp  # noqa: E402
import ops  # noqa: E402
import startup  # noqa: E402
from timing import format_ratio, format_time  # noqa: E402


def table(header: List[str], rows: List[List[str]]) -> str:
    """A markdown table whose columns line up in a terminal too."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"  # noqa: E731
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [line(r) for r in rows])


def gflops(flops: Optional[float], seconds: Optional[float]) -> str:
    return "-" if flops is None or seconds is None else f"{flops / seconds / 1e9:.1f}"


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    rounds = 2 if args.quick else 3
    started = time.perf_counter()

    print("\n".join(machine.describe()))
    print()

    sizes = [1000] if args.quick else [100, 1000]
    elementwise = ops.elementwise(sizes, rounds)
    if args.no_simple:
        for r in elementwise:
            r.times["simple"] = None
    rows = []
    for r in elementwise:
        t = r.times
        rows.append(
            [
                r.group,
                r.operation,
                r.shape,
                format_time(t["simple"]),
                format_time(t["fast"]),
                format_time(t["numpy"]),
                format_time(t["torch"]),
                format_ratio(t["fast"], t["numpy"]),
                format_ratio(t["fast"], t["torch"]),
                format_ratio(t["simple"], t["fast"]),
            ]
        )
    print("Elementwise and reductions (time per call; ratios of times, below 1: fast is faster)\n")
    print(
        table(
            [
                "primitive",
                "operation",
                "shape",
                "simple",
                "fast",
                "numpy",
                "torch",
                "fast / numpy",
                "fast / torch",
                "simple / fast",
            ],
            rows,
        )
    )
    print()

    shapes = ops.MATMUL_SHAPES[:1] + ops.MATMUL_SHAPES[3:5] + ops.MATMUL_SHAPES[6:] if args.quick else ops.MATMUL_SHAPES
    products = ops.matmul(shapes, rounds)
    if args.no_simple:
        for r in products:
            r.times["simple"] = None
    rows = []
    for r in products:
        t = r.times
        rows.append(
            [
                r.shape,
                format_time(t["simple"]),
                format_time(t["fast"]),
                format_time(t["numpy"]),
                format_time(t["torch"]),
                gflops(r.flops, t["fast"]),
                gflops(r.flops, t["numpy"]),
                gflops(r.flops, t["torch"]),
                "-" if t["fast"] is None else f"{100 * t['numpy'] / t['fast']:.0f}%",
            ]
        )
    print("Matrix multiply (float64; throughput in GFLOP/s; last column: fast's throughput as a share of numpy's)\n")
    print(
        table(
            [
                "shape",
                "simple",
                "fast",
                "numpy",
                "torch",
                "fast GFLOP/s",
                "numpy GFLOP/s",
                "torch GFLOP/s",
                "fast / numpy",
            ],
            rows,
        )
    )
    print()

    epoch = mlp.measure(include_simple=not args.no_simple)
    print(
        f"Training: one epoch, 2 -> {mlp.HIDDEN} -> {mlp.HIDDEN} -> 1, split ({mlp.POINTS} points), "
        f"batches of {mlp.BATCH}\n"
    )
    print(
        table(
            ["simple", "fast", "torch", "fast / torch", "simple / fast"],
            [
                [
                    format_time(epoch["simple"]),
                    format_time(epoch["fast"]),
                    format_time(epoch["torch"]),
                    format_ratio(epoch["fast"], epoch["torch"]),
                    format_ratio(epoch["simple"], epoch["fast"]),
                ]
            ],
        )
    )
    print()

    conv_text, conv_targets = conv.report(2 if args.quick else 4)
    print(conv_text)
    print()

    cnn_text, cnn_targets = cnn.report(2 if args.quick else 4)
    print(cnn_text)
    print()

    compile_cost = None
    if not args.no_startup:
        compile_cost = startup.measure()
        print("Compile cost: first use of every fast kernel in a fresh process (seconds)\n")
        print(
            table(
                [
                    "caches",
                    "kernels",
                    "import torchlight + fast",
                    "import + first use of every kernel",
                    "whole process",
                ],
                [
                    [label, str(r["kernels"]), f"{r['import']:.2f}", f"{r['total']:.2f}", f"{r['process']:.2f}"]
                    for label, r in compile_cost.items()
                ],
            )
        )
        print()

    print("Targets\n")
    for line in targets(elementwise, products, epoch, compile_cost) + conv_targets + cnn_targets:
        print(line)
    print(f"\n(benchmark took {time.perf_counter() - started:.0f} s)")
    return 0


def targets(elementwise, products, epoch, compile_cost) -> List[str]:
    """One line per target of the issue: the measured figure and whether it is met."""
    out = []

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    big = [r for r in elementwise if r.shape == "1000x1000"]
    for r in big:
        t = r.times
        if r.group in ("map", "reduce") or (r.group == "zip" and "contiguous" in r.operation):
            goal, limit = "no slower than numpy", 1.0  # issue 23, items 1 and 2
        elif r.group == "zip":
            goal, limit = "within 2x of numpy", 2.0
        else:
            continue
        ratio = t["fast"] / t["numpy"]
        out.append(
            f"- {r.group} {r.operation} {r.shape}: fast / numpy = {ratio:.2f} ({goal}): {verdict(ratio <= limit)}"
        )
    for r in products:  # issue 23, item 3: 70% of numpy's throughput from 64x64 up, 90% at 512 and 1024
        n = int(r.shape.split(" @ ")[0].split("x")[-2])  # C's rows: "16x256x256 @ ..." has 256
        goal = 0.9 if r.shape in ("512x512 @ 512x512", "1024x1024 @ 1024x1024") else 0.7
        if n >= 64 and r.times["fast"] is not None:
            share = r.times["numpy"] / r.times["fast"]
            out.append(
                f"- matmul {r.shape}: fast reaches {100 * share:.0f}% of numpy's GFLOP/s (at least "
                f"{100 * goal:.0f}%): {verdict(share >= goal)}"
            )
    if epoch["torch"] is not None:  # issue 18: at most 2x PyTorch
        ratio = epoch["fast"] / epoch["torch"]
        out.append(f"- MLP epoch: fast / torch = {ratio:.2f} (within 2x): {verdict(ratio <= 2.0)}")
    if compile_cost is not None:
        cold, cached = compile_cost["cold"]["total"], compile_cost["cached"]["total"]
        out.append(f"- cold first use of every kernel: {cold:.1f} s (under 20 s): {verdict(cold < 20)}")
        out.append(f"- cached start: {cached:.2f} s (under 2 s): {verdict(cached < 2)}")
    return out


if __name__ == "__main__":
    sys.exit(main())
