"""Task 3.3: module 2's tests that multiply matrices (the backend's matrix_multiply, matmul's
gradients, the Linear layer), rerun on the fast backend.

As in test_fast_tensor_ops.py: module 2's own test functions, imported and run with
``BACKENDS = ["fast"]``.
"""

import pytest

from .strategies import reuse

pytestmark = pytest.mark.task3_3
BACKENDS = ["fast"]


@pytest.fixture(autouse=True)
def _composed_linear(monkeypatch):
    """As in module 2 (tests/module2/conftest.py): Linear's composed forward, the one module 2 asks
    for; the fused Linear (ops/fused.py) is stage 3.6's, tested in test_fused.py on both backends."""
    from torchlight.nn import Linear

    monkeypatch.setattr(Linear, "fused", False)


globals().update(reuse.tests(reuse.load("test_matmul")))
globals().update(reuse.tests(reuse.load("test_linear")))  # Linear is a matrix product
