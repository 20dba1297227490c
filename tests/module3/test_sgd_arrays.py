"""Module 3's SGD step on the compiled backends' storages (torchlight/optim/sgd_arrays.py): the
same values as sgd.py's step, to the bit, with every setting, and the same version counters."""

import itertools

import numpy as np
import pytest

import torchlight
from torchlight.nn import Parameter
from torchlight.optim import SGD

pytestmark = pytest.mark.task3_6

SETTINGS = [
    dict(momentum=m, dampening=d, weight_decay=w, nesterov=n)
    for m, d, w, n in itertools.product((0.0, 0.9), (0.0, 0.25), (0.0, 0.01), (False, True))
    if not (n and (m == 0.0 or d != 0.0))
]


def _run(settings, fast, backend="fast", steps=3):
    """Three steps on two parameters (one of them a matrix); the values, buffers and versions after each."""
    rng = np.random.default_rng(0)
    w = Parameter(torchlight.tensor(rng.normal(size=(3, 4)), backend=backend, requires_grad=True))
    b = Parameter(torchlight.tensor(rng.normal(size=(4,)), backend=backend, requires_grad=True))
    x = torchlight.tensor(rng.normal(size=(5, 3)), backend=backend)
    opt = SGD([w, b], lr=0.1, **settings)
    opt.fast = fast
    seen = []
    for _ in range(steps):
        opt.zero_grad()
        ((x @ w.value + b.value).tanh() ** 2).sum().backward()
        opt.step()
        buffers = [opt.state.get(p, {}).get("momentum_buffer") for p in (w, b)]
        seen.append(
            [p.value.to_numpy().copy() for p in (w, b)]
            + [None if v is None else v.to_numpy().copy() for v in buffers]
            + [p.value._version for p in (w, b)]
        )
    return seen


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
def test_the_arrays_step_is_the_taught_step_to_the_bit(settings):
    for fast, taught in zip(_run(settings, True), _run(settings, False), strict=True):
        for a, b in zip(fast, taught, strict=True):
            if isinstance(a, np.ndarray):
                np.testing.assert_array_equal(a, b)
            else:
                assert a == b


def test_the_arrays_step_runs_on_fast_and_not_on_simple(monkeypatch):
    from torchlight.optim import sgd

    calls = []
    monkeypatch.setattr(sgd, "_copy", lambda g: calls.append(g) or g.clone())  # the taught step's first buffer
    _run(dict(momentum=0.9), True, "fast", steps=1)
    assert calls == [], "fast took sgd.py's step"
    _run(dict(momentum=0.9), True, "simple", steps=1)
    assert len(calls) == 2, "simple did not take sgd.py's step"


def test_a_view_that_is_not_one_block_takes_the_taught_step():
    rng = np.random.default_rng(1)
    base = torchlight.tensor(rng.normal(size=(4, 3)), backend="fast")
    for fast in (True, False):
        w = base.clone().T.detach().requires_grad_()  # a transposed view: not one contiguous block
        opt = SGD([w], lr=0.5, momentum=0.5)
        opt.fast = fast
        for _ in range(2):
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
        if fast:
            first = w.to_numpy().copy()
    np.testing.assert_array_equal(first, w.to_numpy())
