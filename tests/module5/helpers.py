"""Small helpers shared by module 5's tests: PyTorch twins of torchlight values, comparisons."""

import numpy as np


def torch_leaves(torch, arrays, requires_grad=True):
    """float64 torch tensors with the values of ``arrays``."""
    return [torch.tensor(np.asarray(a), dtype=torch.float64, requires_grad=requires_grad) for a in arrays]


def assert_close(mine, theirs, atol=1e-10, what="torchlight's result (ACTUAL) and PyTorch's (DESIRED)"):
    """A torchlight tensor equals a torch tensor (None on either side reads as zeros)."""
    if theirs is None and mine is None:
        return
    if theirs is None:
        expected = np.zeros(mine.shape)
    else:
        expected = theirs.detach().numpy(force=True)
    got = np.zeros_like(expected) if mine is None else mine.to_numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=atol, err_msg=what)


def module2(name):
    """Module 2's test file ``<name>.py``, loaded by its path (tests/module2/reuse.py): module 5
    checks second derivatives on module 2's tables of operations."""
    import importlib.util
    import sys
    from pathlib import Path

    key = "torchlight_tests_module2_reuse"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, Path(__file__).resolve().parents[1] / "module2" / "reuse.py")
        sys.modules[key] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[key])
    return sys.modules[key].load(name)
