"""Where threads start to pay: each fast kernel timed serially and in parallel, size by size.

``fast.PARALLEL_THRESHOLD`` (elements) and ``fast_matmul.MATMUL_PARALLEL_THRESHOLD`` (multiply-
adds) send smaller work to the serial kernel. This script measures both paths at a range of
sizes, in the same run, so the thresholds can be set where the parallel path starts to win. The
best of many runs is what an idle machine gives; the median shows what a loaded one does (a
parallel region waits for a core that another process holds).

Run:  python benchmarks/threshold.py
"""

import statistics
import time
from functools import partial

from torchlight.utils.cli import ArgumentParser


def parser() -> ArgumentParser:
    return ArgumentParser(prog="python benchmarks/threshold.py", description=__doc__.split("\n")[0])


if __name__ == "__main__":  # --help and mistakes answer before the imports below (numpy, numba, torch)
    parser().parse_args()

import numpy as np  # noqa: E402

from torchlight import Tensor, backends, scalar  # noqa: E402
from torchlight.backends import fast, fast_matmul  # noqa: E402


def times(fn, runs: int = 30):
    fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return min(samples), statistics.median(samples)


def both_paths(fn, module, attribute):
    """(best, median) serial and (best, median) parallel for fn, forcing the path with a threshold."""
    saved = getattr(module, attribute)
    try:
        setattr(module, attribute, 1 << 62)
        serial = times(fn)
        setattr(module, attribute, 0)
        parallel = times(fn)
    finally:
        setattr(module, attribute, saved)
    return serial, parallel


def main(argv=None) -> None:
    parser().parse_args(argv)
    backend = backends.get("fast")
    rng = np.random.default_rng(0)
    print("elements  op        serial best/median     parallel best/median   parallel/serial (best)")
    for size in [2**k for k in range(12, 23, 2)]:
        x = Tensor.from_numpy(rng.standard_normal(size), backend)
        for name, fn in (
            ("zip add", lambda t: backend.zip(scalar.add)(t, t)),
            ("map exp", lambda t: backend.map(scalar.exp)(t)),
        ):
            (sb, sm), (pb, pm) = both_paths(partial(fn, x), fast, "PARALLEL_THRESHOLD")
            print(
                f"{size:>8}  {name:8}  {sb * 1e6:9.1f} / {sm * 1e6:9.1f} us  "
                f"{pb * 1e6:9.1f} / {pm * 1e6:9.1f} us  {pb / sb:6.2f}"
            )
    print("\nmatmul n   multiply-adds   serial best/median     parallel best/median   parallel/serial (best)")
    for n in (16, 32, 64, 96, 128, 192, 256):
        a = Tensor.from_numpy(rng.standard_normal((n, n)), backend)
        (sb, sm), (pb, pm) = both_paths(
            partial(backend.matrix_multiply, a, a), fast_matmul, "MATMUL_PARALLEL_THRESHOLD"
        )
        print(
            f"{n:>8}   {n**3:>13}   {sb * 1e6:9.1f} / {sm * 1e6:9.1f} us  "
            f"{pb * 1e6:9.1f} / {pm * 1e6:9.1f} us  {pb / sb:6.2f}"
        )


if __name__ == "__main__":
    main()
