"""Backward passes in several threads into one shared leaf: no update is lost (PyTorch serialises them)."""

import sys
import threading

import numpy as np
import pytest

import torchlight


@pytest.fixture
def switch_often():
    # Threads switch every few microseconds, so that two additions into .grad would interleave.
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _in_threads(backward, threads, passes):
    """Run ``backward`` passes times in each of threads threads at once; an error in one is raised
    here, in the test's thread (a stub's NotImplementedError, for one, is reported as the stage's)."""
    errors = []

    def work():
        try:
            for _ in range(passes):
                backward()
        except BaseException as e:  # raised again below
            errors.append(e)

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in pool), "a thread did not finish"
    if errors:
        raise errors[0]


@pytest.mark.task5_1
@pytest.mark.parametrize("backend", ["simple", "fast"])
def test_concurrent_backward_into_one_leaf_loses_no_update(backend, switch_often):
    w = torchlight.tensor([1.0, 2.0, 3.0], backend=backend, requires_grad=True)
    x = torchlight.tensor([0.5, -1.0, 2.0], backend=backend)
    threads, passes = 8, 50
    _in_threads(lambda: (w * x).sum().backward(), threads, passes)
    np.testing.assert_array_equal(w.grad.to_numpy(), threads * passes * x.to_numpy())


@pytest.mark.task1_4
def test_concurrent_backward_into_one_scalar_leaf_loses_no_update(switch_often):
    from torchlight.scalar_variable import Scalar

    w = Scalar(1.5)
    threads, passes = 8, 200
    _in_threads(lambda: (w * 2.0).backward(), threads, passes)
    assert w.grad == 2.0 * threads * passes
