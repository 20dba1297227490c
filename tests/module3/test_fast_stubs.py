"""Task 3.1: in the student edition, an unwritten function reached by the fast backend raises its
stub's own message, at once.

A stub, ``raise NotImplementedError("Task N.K: ...")``, returns nothing, so a kernel compiled
around it fails numba's typing: seconds spent, then "cannot compile". The fast backend calls the
scalar function once in Python first (``fast_parallel.raise_if_stub``), and runs a part once
serially before its first parallel launch (numba loses an exception raised in a launcher's
threads). These tests stand in for the edition with functions written as stubs are.
"""

import time

import numpy as np
import pytest

import torchlight
from torchlight.backends import fast, fast_parallel

pytestmark = pytest.mark.task3_1

FAST = torchlight.backends.get("fast")


def stubbed_relu(x: float) -> float:
    raise NotImplementedError("Task 0.1: implement relu in torchlight/scalar.py; see the notebook")


def stubbed_add(x: float, y: float) -> float:
    raise NotImplementedError("Task 0.1: implement add in torchlight/scalar.py; see the notebook")


def calls_a_stub(x: float) -> float:
    return 2.0 * stubbed_relu(x)  # a user's function over a stubbed operator


@pytest.mark.parametrize(
    "make",
    [
        lambda t: FAST.map(stubbed_relu)(t),
        lambda t: FAST.map(calls_a_stub)(t),
        lambda t: FAST.zip(stubbed_add)(t, t),
        lambda t: FAST.reduce(stubbed_add, 0.0)(t, 0),
    ],
    ids=["map", "map_of_a_caller", "zip", "reduce"],
)
def test_a_stubbed_scalar_function_raises_its_own_message_quickly(make):
    t = torchlight.tensor([[0.5, -1.0], [2.0, 3.0]], backend=FAST)
    for _ in range(2):  # every attempt says the same, and none compiles anything
        start = time.perf_counter()
        with pytest.raises(NotImplementedError, match=r"^Task 0\.1: implement (relu|add) "):
            make(t)
        assert time.perf_counter() - start < 0.5, "the stub should raise before numba compiles anything"


def _halve(x: float) -> float:
    return 0.5 * x


def _plus(x: float, y: float) -> float:
    return x + y


def test_the_check_is_done_once_per_function(monkeypatch):
    # (functions of the test's own, not torchlight.scalar's: in the student edition those are
    # stage 0.1's stubs, which this test would compile with the check turned off)
    checked = []
    monkeypatch.setattr(fast, "_not_stubs", set())
    monkeypatch.setattr(fast_parallel, "raise_if_stub", lambda f, *args: checked.append((f, args)))
    for _ in range(2):
        fast.map_kernel(_halve)
        fast.zip_kernel(_plus)
        fast.reduce_kernel(_plus)
    functions = [(f, args) for f, args in checked if f in (_halve, _plus)]
    assert functions == [(_halve, (0.5,)), (_plus, (0.5, 0.25))]
    assert len(checked) == 2 + 4  # and the four index helpers, once


def test_other_exceptions_are_left_to_the_compiler():
    def fails_in_python(x):
        raise ValueError("not a stub")

    def not_a_task(x):
        raise NotImplementedError("some other message")

    # ignored: numba will say what they are (or compile them: an exception may be what fn raises)
    fast_parallel.raise_if_stub(fails_in_python, 0.5)
    fast_parallel.raise_if_stub(not_a_task, 0.5)
    with pytest.raises(NotImplementedError, match=r"^Task 0\.1"):
        fast_parallel.raise_if_stub(stubbed_relu, 0.5)


def test_a_part_that_raises_raises_before_the_first_parallel_launch(monkeypatch):
    kernel = fast.map_kernel(fast.scalar.neg)

    def stubbed_part(*args):
        raise NotImplementedError("Task 3.1: implement map_part in torchlight/backends/fast.py")

    monkeypatch.setattr(kernel, "part", stubbed_part)
    monkeypatch.setattr(fast, "PARALLEL_THRESHOLD", 0)
    monkeypatch.setattr(fast.numba, "get_num_threads", lambda: 2)
    a = np.arange(4.0)
    shape, strides = np.array([4]), np.array([1])
    with pytest.raises(NotImplementedError, match=r"^Task 3\.1"):
        kernel(np.zeros(4), shape, strides, a, shape, strides)
