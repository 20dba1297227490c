"""Every kernel of the cuda backend compiles for a GPU, checked without one: ``python
benchmarks/cuda.py --ptx 9.0`` compiles each to PTX for compute capability 9.0 (an H100's or
H200's) through numba-cuda, and ptxas assembles each for sm_90 as a GPU's driver would.

numba's simulator, which the other cuda tests run in, takes any Python, so only this shows that
a GPU's compiler accepts the kernels. It runs where the cuda extra is installed (numba-cuda with
the nvidia-cuda-nvcc-cu12 wheel, which brings NVVM and ptxas: CI's .ci/numba-cuda-simulator), in
a process of its own (numba.cuda in this one is the simulator: tests/conftest.py); elsewhere it
is skipped. It compiles module 4's kernels as well, so it has no stage of its own: in a student
edition it passes once every stage that the kernels run is written.
"""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

if importlib.util.find_spec("numba_cuda") is None or importlib.util.find_spec("nvidia.cuda_nvcc") is None:
    pytest.skip(
        "compiling for a GPU needs the cuda extra (numba-cuda with nvidia-cuda-nvcc-cu12: "
        "pip install -e '.[cuda]'); .ci/numba-cuda-simulator runs this test",
        allow_module_level=True,
    )

KERNELS = [
    *(f"map {f}" for f in ("exp", "sigmoid", "log", "relu(x) * 0.5")),
    *(f"zip {f}" for f in ("add", "mul", "div", "pow", "max", "is_close")),
    *(f"reduce {f}{parts}" for f in ("add", "max") for parts in ("", ", parts")),
    "matmul (stage 3.5's tiles)",
    "matmul (register tiles)",
    *("unfold1d", "fold1d", "unfold2d", "fold2d", "fill"),
]


@pytest.fixture(scope="module")
def table():
    """benchmarks/cuda.py --ptx 9.0's table: {kernel: {column: value}}."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    done = subprocess.run(
        [sys.executable, "benchmarks/cuda.py", "--ptx", "9.0"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"compiled {len(KERNELS)} kernels to PTX for compute capability 9.0" in done.stdout, done.stdout
    lines = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    return {
        cells[0]: dict(zip(header, cells, strict=True))
        for cells in ([cell.strip() for cell in line.strip("|").split("|")] for line in lines[1:])
    }


def number(text):
    return int(re.match(r"\d+", text)[0])


def test_every_kernel_compiles_and_assembles_for_sm_90(table):
    assert list(table) == KERNELS


def test_no_kernel_spills_registers_and_each_fits_an_sm(table):
    for kernel, row in table.items():
        assert row["spills"] == "0 B / 0 B", (kernel, row)
        assert 0 < number(row["registers per thread"]) <= 255, (kernel, row)
        assert number(row["shared memory per block"]) <= 48 * 1024, (kernel, row)  # (static shared memory's limit)
        assert row["occupancy"] != "0%", (kernel, row)


def test_the_register_tiles_sums_stay_in_registers(table):
    # its 4 x 4 sums and 8 operands are local arrays: a stack frame would mean that they were left
    # in (slow) local memory, as the map and zip kernels' index buffers are
    row = table["matmul (register tiles)"]
    assert row["stack frame"] == "0 B", row
    assert number(row["shared memory per block"]) == (16 * 65 + 16 * 64) * 8, row


def test_both_matmul_kernels_fuse_every_product_into_its_sum(table):
    # so that on a GPU they round alike, step by step, and agree to the bit (the script fails first
    # if not; the table shows the counts)
    for kernel in ("matmul (stage 3.5's tiles)", "matmul (register tiles)"):
        fma, mul = (int(v) for v in table[kernel]["fma.f64 / mul.f64 in the PTX"].split("/"))
        assert fma > 0 and mul == 0, (kernel, fma, mul)
