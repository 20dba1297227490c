"""Task 3.5: module 2's tests that multiply matrices (the backend's matrix_multiply, matmul's
gradients, the Linear layer), rerun on the cuda backend in numba's simulator.

As in test_cuda_tensor_ops.py: module 2's own test functions, run with ``BACKENDS = ["cuda"]``
and fewer hypothesis examples.
"""

import pytest

from .cuda_reuse import cuda_versions
from .strategies import reuse

pytestmark = pytest.mark.task3_5
BACKENDS = ["cuda"]


@pytest.fixture(autouse=True)
def _composed_linear(monkeypatch):
    """As in module 2 (tests/module2/conftest.py): Linear's composed forward, the one module 2 asks
    for; the fused Linear (ops/fused.py) is stage 3.6's."""
    from torchlight.nn import Linear

    monkeypatch.setattr(Linear, "fused", False)


globals().update(cuda_versions(reuse.tests(reuse.load("test_matmul"))))
globals().update(cuda_versions(reuse.tests(reuse.load("test_linear"))))  # Linear is a matrix product
