"""Compile cost: the first use of every fast kernel, with empty caches (cold) and with warm ones.

Two fresh Python processes run the same script, which uses every kernel the tensor operations
need: ``map`` of each one-argument ``torchlight.scalar`` function, ``zip`` of each two-argument
one, ``reduce`` with add, mul and max, the matrix multiply, and each of them once on the parallel
path. The first process gets empty cache folders (``TORCHLIGHT_CACHE_DIR`` for the generated
kernel modules, ``NUMBA_CACHE_DIR`` for numba's compiled code), so it compiles everything; the
second reuses what the first left. Each reports the time from before ``import torchlight`` to the
last kernel's result.

Run alone:  python benchmarks/startup.py
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Dict

from torchlight.utils.cli import ArgumentParser

SCRIPT = r"""
import time
start = time.perf_counter()
import inspect, math
import numpy as np
import torchlight
from torchlight import scalar
from torchlight.backends import fast, fast_matmul
backend = torchlight.backends.get("fast")
imported = time.perf_counter()
arity = {}
for name, f in vars(scalar).items():
    if inspect.isfunction(f) and f.__module__ == scalar.__name__:
        parameters = inspect.signature(f).parameters.values()
        if all(p.annotation is float for p in parameters):
            arity[name] = len(parameters)
small = torchlight.tensor(np.linspace(0.1, 0.9, 6).reshape(2, 3), backend=backend)
large = torchlight.tensor(np.linspace(0.1, 0.9, 300_000).reshape(300, 1000), backend=backend)
kernels = 0
for name, n in sorted(arity.items()):
    f = getattr(scalar, name)
    if n == 1:
        backend.map(f)(small)
    else:
        backend.zip(f)(small, small)
    kernels += 1
for f, start_value in ((scalar.add, 0.0), (scalar.mul, 1.0), (scalar.max, -math.inf)):
    backend.reduce(f, start_value)(small, 0)
    kernels += 1
backend.matrix_multiply(small, small.permute(1, 0))
kernels += 1
# The parallel path: its launchers, and the large matmul's parallel loops.
backend.map(scalar.neg)(large)
backend.zip(scalar.add)(large, large)
backend.reduce(scalar.add, 0.0)(large, 1)
backend.matrix_multiply(large, large.permute(1, 0)[:, :200])
done = time.perf_counter()
print(__import__("json").dumps({"import": imported - start, "total": done - start, "kernels": kernels}))
"""


def run_once(cache: str, numba_cache: str) -> Dict[str, float]:
    env = dict(os.environ, TORCHLIGHT_CACHE_DIR=cache, NUMBA_CACHE_DIR=numba_cache, TORCHLIGHT_BACKEND="fast")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["process"] = time.perf_counter() - start
    return result


def measure() -> Dict[str, Dict[str, float]]:
    """{'cold': ..., 'cached': ...}, each with seconds 'import', 'total' (in-process) and 'process' (wall)."""
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as numba_cache:
        cold = run_once(cache, numba_cache)
        cached = min((run_once(cache, numba_cache) for _ in range(3)), key=lambda r: r["total"])
    return {"cold": cold, "cached": cached}


def main(argv=None) -> int:
    ArgumentParser(prog="python benchmarks/startup.py", description=__doc__.split("\n")[0]).parse_args(argv)
    for label, r in measure().items():
        print(
            f"{label:>6}: every kernel ({r['kernels']}) in {r['total']:.2f} s "
            f"(import {r['import']:.2f} s; whole process {r['process']:.2f} s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
