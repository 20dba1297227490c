"""Task 3.2 (once map, zip and reduce are written): PyTorch's beginner API (issue 14) on the fast
backend: module 2's tests of it (tests/module2/test_torch_api.py and test_torch_api_grad.py),
imported and rerun with ``BACKENDS = ["fast"]``, so that both backends give the same values,
gradients and errors.
The matrix products are task 3.3's and stay out (as in test_fast_tensor_ops.py)."""

import pytest

from .strategies import reuse

pytestmark = pytest.mark.task3_2
BACKENDS = ["fast"]


def _not_matmul(name):
    return "matmul" not in name


for _file in ("test_torch_api", "test_torch_api_grad"):
    globals().update(reuse.tests(reuse.load(_file), keep=_not_matmul))
