"""Task 3.2: module 2's tensor tests, rerun on the fast backend (everything but matrix multiply),
once map, zip (3.1) and reduce (3.2) are written.

The fast backend must give the simple backend's answers, so module 2's own test functions serve
again here: imported, not copied, and run with ``BACKENDS = ["fast"]`` (tests/conftest.py gives
each test that takes ``backend_name`` one case per backend in its module's list). Module 2 runs
them on "simple" only: its stages come before the fast kernels exist.
"""

import pytest

from .strategies import reuse

pytestmark = pytest.mark.task3_2
BACKENDS = ["fast"]


def _not_matmul(name):
    return "matmul" not in name and "matrix_multiply" not in name  # those are task 3.3's


for _file in ("test_tensor_data", "test_tensor_operations", "test_backend_ops", "test_autodiff"):
    globals().update(reuse.tests(reuse.load(_file), keep=_not_matmul))
