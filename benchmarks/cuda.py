"""The cuda backend on a GPU, beside PyTorch on the same GPU (float64), in one run.

    python benchmarks/cuda.py            # on a machine with an NVIDIA GPU and the cuda extra (pip install -e ".[cuda]")
    python benchmarks/cuda.py --smoke    # tiny sizes in numba's simulator: checks that it all runs
    python benchmarks/cuda.py --ptx 9.0  # only compile every kernel for a GPU (numba-cuda, no GPU needed),
                                         # and with ptxas a table of their registers and shared memory

Rows (the targets are issue 12's):

- matmul at 1024, 2048 and 4096: GFLOP/s (2 n^3 / time); target at least 15% of cuBLAS float64.
  Two rows per size, one per kernel: the library's register tiles (what products this large
  take) and stage 3.5's shared-memory tiles (what a student writes), with a line saying whether
  their products agree to the bit (they should: the same sums in the same order).
  torchlight's tensors hold float64 only, so there is no float32 row for it (PyTorch's float32
  is shown for scale).
- zip (a + b into a given out) at 1e7 and 1e8 elements: GB/s, counting 3 x 8 bytes per element
  (two reads and a write); target at least 70% of PyTorch's bandwidth.
- sum of all elements at 1e7 and 1e8: GB/s, counting 8 bytes per element.
- one training epoch of a small CNN (two convolutions with max pooling, two linear layers, Adam,
  batches of 64) on the UCI digits, torchlight against the same network in PyTorch.

Each time is the best of several runs after a first, untimed one (which compiles the kernels:
its time is shown as "first call"), with the GPU synchronized before the clock stops. Without a
GPU (or with numba's simulator switched on and no --smoke), it says so and exits with 0.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from torchlight.utils.cli import ArgumentParser


def parser() -> ArgumentParser:
    p = ArgumentParser(prog="python benchmarks/cuda.py", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--smoke", action="store_true", help="tiny sizes in numba's CUDA simulator (a check, not a measurement)"
    )
    p.add_argument(
        "--ptx", metavar="CC", help="only compile every kernel to PTX for this compute capability (no GPU needed)"
    )
    return p


if __name__ == "__main__":  # --help and mistakes answer before the imports below (numpy, numba, torch)
    if parser().parse_args().smoke:  # (numba.cuda chooses between GPU and simulator when it is imported)
        os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numpy as np  # noqa: E402

import torchlight  # noqa: E402
from torchlight import backends, scalar  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

# "widths": the CNN's channels and hidden units; "batches": None for a whole epoch of the digits
FULL = {"matmul": [1024, 2048, 4096], "zip": [10**7, 10**8], "sum": [10**7, 10**8], "batch": 64, "batches": None}
FULL["widths"] = (8, 16, 32)
# (in the simulator every thread is a Python thread: a narrow network on two images)
SMOKE = {"matmul": [8, 12], "zip": [1000], "sum": [1000], "batch": 2, "batches": 1, "widths": (2, 2, 4)}


def torch_gpu() -> bool:
    return torch is not None and torch.cuda.is_available()


def gpu_time(
    fn: Callable[[], object], sync: Callable[[], None], budget: float = 0.5, runs: int = 3
) -> Tuple[float, float]:
    """(first call, best of the rest) of ``fn`` in seconds, the GPU synchronized around each run."""
    sync()
    start = time.perf_counter()
    fn()
    sync()
    first = time.perf_counter() - start
    best, spent, done = float("inf"), 0.0, 0
    while done < runs or (spent < budget and done < 50):
        start = time.perf_counter()
        fn()
        sync()
        elapsed = time.perf_counter() - start
        best, spent, done = min(best, elapsed), spent + elapsed, done + 1
    return first, best


def _numba_sync() -> None:
    from numba import cuda

    cuda.synchronize()


def _torch_sync() -> None:
    torch.cuda.synchronize()


def fmt(value: Optional[float], digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def share(ours: Optional[float], theirs: Optional[float]) -> str:
    """ours as a percentage of theirs (rates: higher is better)."""
    return "-" if ours is None or not theirs else f"{100 * ours / theirs:.0f}%"


# The matrix multiply's two kernels (torchlight/backends/cuda.py), each row forcing its own:
# REGISTER_TILES_FROM, the smallest side that takes the register tiles, set for the row's products.
MATMUL_KERNELS = {"register tiles": 1, "stage 3.5's tiles": 1 << 62}


def matmul_rows(sizes: List[int], cuda: backends.TensorBackend) -> Tuple[List[list], List[str]]:
    """The rows, and a line per size saying whether the two kernels' products agree to the bit."""
    from torchlight.backends import cuda as kernels

    rows, notes = [], []
    rng = np.random.default_rng(0)
    for n in sizes:
        a_np, b_np = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        a, b = torchlight.tensor(a_np, backend=cuda), torchlight.tensor(b_np, backend=cuda)
        flops = 2.0 * n**3
        theirs = theirs32 = None
        if torch_gpu():
            ta, tb = torch.from_numpy(a_np).cuda(), torch.from_numpy(b_np).cuda()
            theirs = flops / gpu_time(lambda ta=ta, tb=tb: ta @ tb, _torch_sync)[1] / 1e9
            ta32, tb32 = ta.float(), tb.float()
            theirs32 = flops / gpu_time(lambda ta=ta32, tb=tb32: ta @ tb, _torch_sync)[1] / 1e9
            del ta, tb, ta32, tb32
        products = []
        default = kernels.REGISTER_TILES_FROM
        for label, smallest in MATMUL_KERNELS.items():
            kernels.REGISTER_TILES_FROM = smallest
            try:
                first, best = gpu_time(lambda a=a, b=b: cuda.matrix_multiply(a, b), _numba_sync)
                products.append(cuda.matrix_multiply(a, b).to_numpy())
            finally:
                kernels.REGISTER_TILES_FROM = default
            error = float(np.max(np.abs(products[-1] - a_np @ b_np)) / np.max(np.abs(a_np) @ np.abs(b_np)))
            ours = flops / best / 1e9
            row = [f"matmul {n}, {label}", "GFLOP/s", fmt(ours), fmt(theirs), share(ours, theirs), "15%", fmt(first)]
            rows.append(row + [f"{error:.1e}"])
        if theirs32 is not None:
            rows.append([f"matmul {n} float32", "GFLOP/s", "(float64 only)", fmt(theirs32), "-", "-", "-", "-"])
        same = np.array_equal(products[0].view(np.int64), products[1].view(np.int64))
        notes.append(f"matmul {n}: the two kernels' products {'agree' if same else 'DIFFER'} to the bit")
    return rows, notes


def zip_rows(sizes: List[int], cuda: backends.TensorBackend) -> List[list]:
    rows = []
    rng = np.random.default_rng(1)
    add = cuda.zip(scalar.add)
    for n in sizes:
        a_np, b_np = rng.standard_normal(n), rng.standard_normal(n)
        a, b, out = (torchlight.tensor(v, backend=cuda) for v in (a_np, b_np, np.zeros(n)))
        first, best = gpu_time(lambda a=a, b=b, out=out: add(a, b, out=out), _numba_sync)
        error = float(np.max(np.abs(out.to_numpy() - (a_np + b_np))))
        moved = 3 * 8 * n
        ours = moved / best / 1e9
        theirs = None
        if torch_gpu():
            ta, tb, tout = (torch.from_numpy(v).cuda() for v in (a_np, b_np, np.zeros(n)))
            theirs = moved / gpu_time(lambda ta=ta, tb=tb, tout=tout: torch.add(ta, tb, out=tout), _torch_sync)[1] / 1e9
            del ta, tb, tout
        rows.append(
            [f"zip add {n:.0e}", "GB/s", fmt(ours), fmt(theirs), share(ours, theirs), "70%", fmt(first), f"{error:.1e}"]
        )
        del a, b, out
    return rows


def sum_rows(sizes: List[int], cuda: backends.TensorBackend) -> List[list]:
    rows = []
    rng = np.random.default_rng(2)
    for n in sizes:
        a_np = rng.standard_normal(n)
        a = torchlight.tensor(a_np, backend=cuda)
        first, best = gpu_time(lambda a=a: a.sum(), _numba_sync)
        error = abs(a.sum().item() - float(a_np.sum())) / float(np.abs(a_np).sum())
        moved = 8 * n
        ours = moved / best / 1e9
        theirs = None
        if torch_gpu():
            ta = torch.from_numpy(a_np).cuda()
            theirs = moved / gpu_time(lambda ta=ta: ta.sum(), _torch_sync)[1] / 1e9
            del ta
        rows.append(
            [f"sum {n:.0e}", "GB/s", fmt(ours), fmt(theirs), share(ours, theirs), "-", fmt(first), f"{error:.1e}"]
        )
        del a
    return rows


def _torchlight_cnn(backend: str, widths: Tuple[int, int, int]):
    from torchlight import nn
    from torchlight.nn.conv import Conv2d
    from torchlight.nn.pooling import MaxPool2d

    c1, c2, hidden = widths
    return nn.Sequential(
        Conv2d(1, c1, 3, padding=1, backend=backend, seed=1),
        nn.ReLU(),
        MaxPool2d(2),
        Conv2d(c1, c2, 3, padding=1, backend=backend, seed=2),
        nn.ReLU(),
        MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(c2 * 2 * 2, hidden, backend=backend, seed=3),
        nn.ReLU(),
        nn.Linear(hidden, 10, backend=backend, seed=4),
    )


def _torch_cnn(widths: Tuple[int, int, int]):
    m = torch.nn
    c1, c2, hidden = widths
    return m.Sequential(
        m.Conv2d(1, c1, 3, padding=1),
        m.ReLU(),
        m.MaxPool2d(2),
        m.Conv2d(c1, c2, 3, padding=1),
        m.ReLU(),
        m.MaxPool2d(2),
        m.Flatten(),
        m.Linear(c2 * 2 * 2, hidden),
        m.ReLU(),
        m.Linear(hidden, 10),
    ).double()


def cnn_rows(
    batch: int, batches: Optional[int], widths: Tuple[int, int, int], cuda: backends.TensorBackend
) -> List[list]:
    from torchlight.nn import functional as F
    from torchlight.optim import Adam

    data = torchlight.datasets.Digits(train=True)
    images = data.data[:, np.newaxis]  # (N, 1, 8, 8)
    labels = data.targets
    count = len(labels) if batches is None else batch * batches
    X = torchlight.tensor(images[:count], backend=cuda)
    y = torchlight.tensor(labels[:count], dtype=torchlight.int64, backend=cuda)
    model = _torchlight_cnn("cuda", widths)
    optimizer = Adam(model.parameters(), lr=1e-3)

    def epoch():
        for start in range(0, count, batch):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(X[start : start + batch]), y[start : start + batch])
            loss.backward()
            optimizer.step()
        return loss.item()  # (copies one value back: the epoch's work is done)

    first, best = gpu_time(epoch, _numba_sync, budget=0.0, runs=2)
    theirs = None
    if torch_gpu():
        net = _torch_cnn(widths).cuda()
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        tX = torch.from_numpy(images[:count]).cuda()
        ty = torch.from_numpy(labels[:count]).cuda()

        def torch_epoch():
            for start in range(0, count, batch):
                opt.zero_grad()
                loss = torch.nn.functional.cross_entropy(net(tX[start : start + batch]), ty[start : start + batch])
                loss.backward()
                opt.step()
            return loss.item()

        theirs = gpu_time(torch_epoch, _torch_sync, budget=0.0, runs=2)[1]
    name = f"CNN epoch, {count} digits"
    ratio = "-" if theirs is None else f"{best / theirs:.1f}x the time"
    return [[name, "s", fmt(best), fmt(theirs), ratio, "-", fmt(first), "-"]]


# An SM of compute capability 9.0 (H100, H200), for the occupancy column of --ptx: the CUDA
# occupancy calculator's figures (registers are given to a warp in units of 256).
SM90 = {"registers": 65536, "register_unit": 256, "threads": 2048, "blocks": 32, "shared": 228 * 1024}
SM90["shared_reserved"] = 1024  # bytes of shared memory the system keeps per block


def ptx_kernels(cc: str) -> List[Tuple[str, int, str]]:
    """(name, threads per block, PTX) of every kind of kernel of the cuda backend, compiled for
    compute capability ``cc`` ("9.0") without a GPU. Needs numba-cuda and its CUDA libraries."""
    import types as pytypes

    from numba import cuda, types

    capability = tuple(int(v) for v in cc.split("."))
    if not cuda.is_available():  # numba asks the current device for its capability, and allocates one array
        import numba.cuda.dispatcher as dispatcher

        dispatcher.get_current_device = lambda: pytypes.SimpleNamespace(compute_capability=capability)  # type: ignore
        cuda.device_array = lambda *args, **kwargs: object()
    from torchlight.backends import cuda as kernels

    S, A, L, F = types.float64[::1], types.int64[::1], types.int64, types.float64  # storage, shape, int, float
    compiled = []

    def ptx(dispatcher, signature, name, threads):
        try:
            text, _ = cuda.compile_ptx(dispatcher.py_func, signature, cc=capability)
        except Exception as e:
            raise SystemExit(
                f"compiling the {name} kernel failed: {type(e).__name__}: {e}\n(this needs numba-cuda and "
                "the CUDA libraries of the cuda extra; numba's own numba.cuda needs a CUDA toolkit)"
            ) from e
        compiled.append((name, threads, text))

    lifted = {
        "exp": scalar.exp,
        "sigmoid": scalar.sigmoid,
        "log": scalar.log,
        "relu(x) * 0.5": lambda x: scalar.relu(x) * 0.5,
    }
    for what, fn in lifted.items():
        ptx(kernels.map_kernel(fn).kernels[0], (S, A, A, S, A, A, L, types.boolean), f"map {what}", kernels.THREADS)
    for fn in (scalar.add, scalar.mul, scalar.div, scalar.pow, scalar.max, scalar.is_close):
        signature = (S, A, A, S, A, A, S, A, A, L, types.boolean)
        ptx(kernels.zip_kernel(fn).kernels[0], signature, f"zip {fn.__name__}", kernels.THREADS)
    for fn in (scalar.add, scalar.max):
        lines, parts = kernels.reduce_kernel(fn).kernels
        ptx(lines, (S, A, A, S, A, A, L, F, L), f"reduce {fn.__name__}", kernels.REDUCE_THREADS)
        ptx(parts, (S, A, S, A, L, L, L), f"reduce {fn.__name__}, parts", kernels.LINE_THREADS)
    matmul = (S, S, S) + (L,) * 12
    ptx(kernels._matmul_kernel(), matmul, "matmul (stage 3.5's tiles)", kernels.TILE**2)
    ptx(kernels._register_tiles_kernel(), matmul, "matmul (register tiles)", kernels.REG_THREADS**2)
    ptx(kernels._unfold1d_kernel, (S, L, L, L, S, L, L, L) + (L,) * 7, "unfold1d", kernels.THREADS)
    ptx(kernels._fold1d_kernel, (S, L, L, L, S, L, L, L) + (L,) * 7, "fold1d", kernels.THREADS)
    ptx(kernels._unfold2d_kernel, (S, L, L, L, S, L, L, L, L) + (L,) * 12, "unfold2d", kernels.THREADS)
    ptx(kernels._fold2d_kernel, (S, L, L, L, L, S, L, L, L) + (L,) * 12, "fold2d", kernels.THREADS)
    ptx(kernels._fill, (S, L, F), "fill", kernels.THREADS)
    return compiled


def find_ptxas() -> Optional[str]:
    """The ptxas of the nvidia-cuda-nvcc-cu12 wheel (the cuda extra installs it), else one on PATH."""
    try:
        import nvidia.cuda_nvcc as nvcc
    except ImportError:
        return shutil.which("ptxas")
    for folder in nvcc.__path__:
        candidate = Path(folder) / "bin" / "ptxas"
        if candidate.is_file():
            return str(candidate)
    return shutil.which("ptxas")


def ptxas_usage(ptxas: str, ptx: str, cc: str) -> dict:
    """What ptxas (the assembler a GPU's driver runs on PTX) says of the kernel in ``ptx``:
    registers per thread, static shared memory, stack frame and spills, in bytes."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "kernel.ptx"
        path.write_text(ptx)
        arch = "sm_" + cc.replace(".", "")
        done = subprocess.run(
            [ptxas, "-v", "--gpu-name", arch, str(path), "-o", os.devnull], capture_output=True, text=True
        )
    said = done.stdout + done.stderr
    if done.returncode != 0:
        raise SystemExit(f"ptxas rejected a kernel for {arch}:\n{said}")
    entry = said[said.index("Compiling entry function") :]  # (the kernel's own figures, not a device function's)

    def number(pattern: str) -> int:
        found = re.search(pattern, entry)
        return int(found[1]) if found else 0

    return {
        "registers": number(r"Used (\d+) registers"),
        "shared": number(r"(\d+) bytes smem"),
        "stack": number(r"(\d+) bytes stack frame"),
        "spill stores": number(r"(\d+) bytes spill stores"),
        "spill loads": number(r"(\d+) bytes spill loads"),
    }


def occupancy(threads: int, registers: int, shared: int) -> float:
    """The share of an SM90 SM's threads that blocks of this kernel can fill at once (registers,
    shared memory, threads and blocks per SM each limit how many blocks fit)."""
    warps = -(-threads // 32)
    unit = SM90["register_unit"]
    per_warp = -(-max(registers, 1) * 32 // unit) * unit
    blocks = min(
        SM90["registers"] // per_warp // warps,
        SM90["shared"] // (shared + SM90["shared_reserved"]),
        SM90["threads"] // threads,
        SM90["blocks"],
    )
    return blocks * warps * 32 / SM90["threads"]


def compile_ptx(cc: str) -> int:
    """Compile every kind of kernel of the cuda backend to PTX for compute capability ``cc`` ("9.0"),
    without a GPU: a check that a GPU's compiler accepts them (the simulator runs them as Python,
    so it accepts anything). Then, where ptxas is found, a table of what each kernel uses per
    thread and per block; the matrix multiplies' PTX must fuse each product into its sum (an
    fma), as the bit-for-bit agreement of the two kernels on a GPU rests on that."""
    from numba import cuda

    if "simulator" in cuda.device_array.__module__:
        print("--ptx compiles for a GPU: unset NUMBA_ENABLE_CUDASIM")
        return 1
    compiled = ptx_kernels(cc)
    names = sorted({name.split(" ")[0] for name, _, _ in compiled})
    print(f"compiled {len(compiled)} kernels to PTX for compute capability {cc}: {', '.join(names)}")
    for name, _, ptx in compiled:
        if name.startswith("matmul") and (
            ptx.count("mul.rn.f64") + ptx.count("mul.f64") or not ptx.count("fma.rn.f64")
        ):
            print(f"the {name} kernel does not fuse each product into its sum (fma.rn.f64)")
            return 1
    ptxas = find_ptxas()
    if ptxas is None:
        print(
            "(no ptxas found, so no table of registers and shared memory: the cuda extra's "
            "nvidia-cuda-nvcc-cu12 has one)"
        )
        return 0
    said = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout
    version = next((line for line in said.splitlines() if "release" in line), "version unknown")
    arch = "sm_" + cc.replace(".", "")
    print(f"\nWhat each kernel uses on {arch} (ptxas -v, {version}):\n")
    header = ["kernel", "threads per block", "registers per thread", "shared memory per block", "stack frame", "spills"]
    header += ["fma.f64 / mul.f64 in the PTX"]
    if cc == "9.0":
        header.append("occupancy")
    rows = []
    for name, threads, ptx in compiled:
        used = ptxas_usage(ptxas, ptx, cc)
        spills = f"{used['spill stores']} B / {used['spill loads']} B"
        fused = f"{ptx.count('fma.rn.f64')} / {ptx.count('mul.rn.f64') + ptx.count('mul.f64')}"
        row = [name, str(threads), str(used["registers"]), f"{used['shared']} B", f"{used['stack']} B", spills, fused]
        if cc == "9.0":
            row.append(f"{100 * occupancy(threads, used['registers'], used['shared']):.0f}%")
        rows.append(row)
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |")
    print("|-" + "-|-".join("-" * w for w in widths) + "-|")
    for row in rows:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")
    print(
        "\nspills: bytes stored to and loaded from local memory when registers run out; occupancy: the "
        "share of an SM's 2048 thread slots that resident blocks can fill (registers, shared memory, "
        "threads and blocks per SM each limit it)."
        if cc == "9.0"
        else ""
    )
    return 0


def gpu_name() -> str:
    from numba import cuda

    if "simulator" in cuda.device_array.__module__:
        return "numba's CUDA simulator (on the CPU): not a measurement"
    device = cuda.get_current_device()
    name = device.name.decode() if isinstance(device.name, bytes) else str(device.name)
    return f"{name} (compute capability {'.'.join(map(str, device.compute_capability))})"


def main(argv: Optional[List[str]] = None) -> int:
    args = parser().parse_args(argv)
    if args.ptx:
        return compile_ptx(args.ptx)
    simulated = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
    if simulated and not args.smoke:
        print("NUMBA_ENABLE_CUDASIM is set: the simulator runs on the CPU and is not measured")
        print("(python benchmarks/cuda.py --smoke checks the script there).")
        return 0
    try:
        cuda = backends.get("cuda")
    except backends.BackendUnavailable as e:
        print(f"No GPU to measure here, nothing was run.\n{e}")
        return 0
    sizes = SMOKE if args.smoke else FULL
    print(f"GPU: {gpu_name()}")
    import numba
    from numba import cuda as numba_cuda

    found = (
        f"PyTorch {torch.__version__} on the GPU" if torch_gpu() else "no PyTorch with CUDA (its columns stay empty)"
    )
    print(f"numba {numba.__version__}, numba.cuda: {getattr(numba_cuda, 'implementation', '?')}, {found}")
    rows, notes = matmul_rows(sizes["matmul"], cuda)
    rows += zip_rows(sizes["zip"], cuda) + sum_rows(sizes["sum"], cuda)
    rows += cnn_rows(sizes["batch"], sizes["batches"], sizes["widths"], cuda)
    header = ["", "unit", "torchlight", "PyTorch", "share", "target", "first call s", "max error"]
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("-|-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)))
    print(
        "share: torchlight's rate as a percentage of PyTorch's; the CNN row compares times (PyTorch's "
        "being the unit). max error: relative to the magnitudes summed (matmul, sum) or absolute (zip)."
    )
    print("\n".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
