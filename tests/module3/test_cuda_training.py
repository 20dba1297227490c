"""Task 3.6: training on the cuda backend (in numba's simulator): the fused operations equal their
compositions there too, and a few epochs of the tensor network give the fast backend's losses.

Only reductions and matrix products add in another order on cuda (a tree, tiles): the losses and
parameters agree to rounding.
"""

import numpy as np
import pytest

from project.train_tensor import train

from . import test_fused
from .cuda_reuse import cuda_versions
from .strategies import reuse

pytestmark = pytest.mark.task3_6
BACKENDS = ["cuda"]

# Module 3's fused operations (ops/fused.py) against their compositions, on cuda. The fused Linear's
# gradcheck (hundreds of matrix products, seconds each batch in the simulator) is left to fast and
# simple; on cuda the fused Linear runs in the training below, against fast's numbers.
globals().update(cuda_versions(reuse.tests(test_fused, keep=lambda name: "fused_linear" not in name)))


def test_cuda_trains_as_fast_does():
    fast = train("split", hidden=3, epochs=3, n=6, backend="fast", progress=False)
    cuda = train("split", hidden=3, epochs=3, n=6, backend="cuda", progress=False)
    assert cuda.backend == "cuda" and fast.backend == "fast"
    np.testing.assert_allclose(cuda.losses, fast.losses, rtol=1e-12)
    assert cuda.losses[-1] < cuda.losses[0]  # it learns: the steps moved the parameters downhill
    for (name, p_cuda), (_, p_fast) in zip(cuda.model.named_parameters(), fast.model.named_parameters(), strict=True):
        assert p_cuda.value.backend.name == "cuda"
        np.testing.assert_allclose(
            p_cuda.value.to_numpy(), p_fast.value.to_numpy(), rtol=1e-10, atol=1e-12, err_msg=name
        )
