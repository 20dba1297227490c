"""numba's CUDA simulator, as the cuda backend repairs it (torchlight/backends/cuda_simulator.py):
every thread of a block gets the same shared array, however the simulated threads interleave.

The simulator's threads race for a shared array only when one is switched out while making it;
here numpy's ``empty``, as the simulator and the repair see it, sleeps, so that they always would."""

import time

import numba
import numpy as np
import pytest
from numba import cuda

from torchlight import backends

try:
    backends.get("cuda")  # (repairs the simulator, when the backend runs in it)
except backends.BackendUnavailable as e:
    pytest.skip(str(e), allow_module_level=True)
from torchlight.backends import cuda as kernels
from torchlight.backends import cuda_simulator

if not kernels.SIMULATOR:
    pytest.skip("the cuda backend runs on a GPU here, not in numba's simulator", allow_module_level=True)
from numba.cuda.simulator import kernelapi


class _SlowNumpy:
    """numpy, but ``empty`` lets other threads run before it returns."""

    def __getattr__(self, name):
        return getattr(np, name)

    def empty(self, *args, **kwargs):
        time.sleep(0.002)
        return np.empty(*args, **kwargs)


@cuda.jit
def _reverse_through_shared(out):
    s = cuda.shared.array(4, numba.float64)
    t = cuda.threadIdx.x
    s[t] = t + 1.0
    cuda.syncthreads()
    out[t] = s[3 - t]  # written by another thread of the block


def test_the_threads_of_a_block_share_one_array(monkeypatch):
    # where the simulator makes its arrays, and where the repair does
    monkeypatch.setattr(kernelapi, "np", _SlowNumpy())
    monkeypatch.setattr(cuda_simulator, "np", _SlowNumpy())
    for _ in range(5):  # (unrepaired, most launches gave some thread an array of its own)
        out = np.zeros(4)
        _reverse_through_shared[1, 4](out)
        assert out.tolist() == [4.0, 3.0, 2.0, 1.0]


def test_tiles_on_different_lines_stay_different():
    # matrix multiply's two tiles come from two lines: two arrays, as on a GPU
    @cuda.jit
    def two(out):
        a = cuda.shared.array(2, numba.float64)
        b = cuda.shared.array(2, numba.float64)
        t = cuda.threadIdx.x
        a[t] = 1.0
        b[t] = 2.0
        cuda.syncthreads()
        out[t] = a[1 - t] + 10 * b[1 - t]

    out = np.zeros(2)
    two[1, 2](out)
    assert out.tolist() == [21.0, 21.0]
