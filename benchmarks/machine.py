"""What the benchmarks ran on: processor, cores, library versions, threads, and numpy's BLAS kernel."""

import ctypes
import glob
import os
import platform
from typing import List


def cpu_name() -> str:
    """The processor's model name (from /proc/cpuinfo where there is one)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def blas_kernel() -> str:
    """The kernel numpy's OpenBLAS chose for this processor (e.g. 'SkylakeX', 'Haswell'), if it can be found.

    Uses threadpoolctl when it is installed; otherwise asks the OpenBLAS library that numpy's wheel
    ships in ``numpy.libs`` (the same library numpy has loaded, so the same choice).
    """
    try:
        import threadpoolctl

        for info in threadpoolctl.threadpool_info():
            if info.get("internal_api") == "openblas":
                return (
                    f"OpenBLAS {info.get('version')}, {info.get('architecture')} kernel, "
                    f"{info.get('num_threads')} threads"
                )
    except ImportError:
        pass
    import numpy as np

    for path in glob.glob(os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs", "*openblas*")):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in (
            "scipy_openblas_get_corename64_",
            "scipy_openblas_get_corename",
            "openblas_get_corename64_",
            "openblas_get_corename",
        ):
            getter = getattr(lib, name, None)
            if getter is not None:
                getter.restype = ctypes.c_char_p
                return f"OpenBLAS, {getter().decode()} kernel"
    return "unknown (install threadpoolctl to see it)"


def describe() -> List[str]:
    """Lines describing the machine and the libraries, for the top of the benchmark's output."""
    import numba
    import numpy as np

    lines = [
        f"processor: {cpu_name()}, {os.cpu_count()} logical cores; {platform.system()} {platform.release()}",
        f"python {platform.python_version()}; numpy {np.__version__} ({blas_kernel()}); "
        f"numba {numba.__version__} ({numba.get_num_threads()} threads, threading layer {threading_layer()})",
    ]
    openblas_env = {k: v for k, v in os.environ.items() if k.startswith("OPENBLAS_")}
    if openblas_env:
        lines.append(f"environment: {openblas_env} (these change numpy's kernel: `make bench` unsets them)")
    try:
        import torch

        lines.append(f"torch {torch.__version__} ({torch.get_num_threads()} threads, float64)")
    except ImportError:
        lines.append("torch: not installed (its columns are left empty)")
    return lines


def threading_layer() -> str:
    """numba's threading layer, after a parallel region has chosen it."""
    import numba
    import numpy as np

    @numba.njit(parallel=True)
    def touch(x):
        for i in numba.prange(x.shape[0]):
            x[i] += 1.0

    touch(np.zeros(4))
    return numba.threading_layer()
