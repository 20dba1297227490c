"""Task 3.4: module 2's tensor tests (values, broadcasting, views, gradients), rerun on the cuda
backend in numba's simulator (everything but matrix multiply, which is task 3.5's).

As on fast (test_fast_tensor_ops.py): module 2's own test functions, imported and run with
``BACKENDS = ["cuda"]``, with fewer hypothesis examples (the simulator is slow; cuda_reuse.py).
"""

import pytest

from .cuda_reuse import cuda_versions
from .strategies import reuse

pytestmark = pytest.mark.task3_4
BACKENDS = ["cuda"]


def _not_matmul(name):
    return "matmul" not in name and "matrix_multiply" not in name  # those are task 3.5's


for _file in ("test_tensor_data", "test_tensor_operations", "test_backend_ops", "test_autodiff"):
    globals().update(cuda_versions(reuse.tests(reuse.load(_file), keep=_not_matmul)))
