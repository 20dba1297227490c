"""Module 3's judged probes: named calls into the student's code on inputs drawn from ``rng``, whose
values the autograder compares with the reference's (torchlight/grading/judged.py). The fast
backend's threshold for parallel kernels is lowered so that small tensors reach them too; cuda
runs in numba's simulator where there is no GPU (the grader sets NUMBA_ENABLE_CUDASIM)."""

import numpy as np

import torchlight as tl
from torchlight.backends import fast


def _array(rng, shape, low=-2.0, high=2.0):
    n = int(np.prod(shape))
    return np.array([rng.uniform(low, high) for _ in range(n)]).reshape(shape)


def _tensor(rng, shape, backend, low=-2.0, high=2.0, grad=False):
    return tl.tensor(_array(rng, shape, low, high).tolist(), backend=backend, requires_grad=grad)


def _parallel():
    fast.PARALLEL_THRESHOLD = 64  # every tensor here has more elements: the parallel launchers run


def _maps_and_zips(rng, backend, shape):
    a = _tensor(rng, shape, backend)
    b = _tensor(rng, shape[1:], backend)
    p = a.permute(2, 0, 1)
    return {
        "map (permuted)": lambda: p.exp(),
        "map (broadcast)": lambda: b.expand(*shape).exp(),
        "zip (broadcast)": lambda: [a * b, b * a],
        "zip (permuted)": lambda: [p * p, p * a.permute(2, 1, 0).permute(2, 0, 1)],
    }


def stage_3_1(rng):
    _parallel()
    return _maps_and_zips(rng, "fast", (rng.randint(3, 5), rng.randint(4, 6), rng.randint(5, 7)))


def _reductions(rng, backend, shape):
    a = _tensor(rng, shape, backend)
    p = a.permute(1, 2, 0)
    return {
        "sum": lambda: [a.sum(0), a.sum(1), a.sum(2), a.sum()],
        "sum (permuted)": lambda: [p.sum(0), p.sum(1), p.sum(2)],
        "max": lambda: [a.max(0).values, a.max(2).values, p.max(1).values],
    }


def stage_3_2(rng):
    _parallel()
    return _reductions(rng, "fast", (rng.randint(3, 5), rng.randint(4, 9), rng.randint(5, 9)))


def _products(rng, backend, sizes):
    n, k, m = sizes
    a, b = _tensor(rng, (2, n, k), backend), _tensor(rng, (k, m), backend)
    c = _tensor(rng, (m, k), backend)
    return {
        "matmul": lambda: a @ b,
        "matmul (transposed)": lambda: a @ c.transpose(0, 1),
        "matmul (one batch)": lambda: a[0] @ b,
    }


def stage_3_3(rng):
    _parallel()
    calls = _products(rng, "fast", (rng.randint(5, 11), rng.randint(3, 40), rng.randint(5, 11)))
    large = _products(rng, "fast", (rng.randint(17, 37), rng.randint(60, 300), rng.randint(17, 37)))
    calls.update({f"{k} (blocks)": v for k, v in large.items()})
    return calls


def stage_3_4(rng):
    calls = _maps_and_zips(rng, "cuda", (2, rng.randint(2, 3), rng.randint(2, 4)))
    calls.update(_reductions(rng, "cuda", (2, rng.randint(2, 3), rng.randint(2, 5))))
    return calls


def stage_3_5(rng):
    return _products(rng, "cuda", (rng.randint(3, 18), rng.randint(2, 20), rng.randint(3, 18)))


def stage_3_6(rng):
    n, k, m = rng.randint(2, 5), rng.randint(2, 6), rng.randint(2, 5)

    def linear(bias, shape, wanted):
        layer = tl.nn.Linear(k, m, bias=bias, backend="fast")
        layer.weight.value = _tensor(rng, (m, k), "fast", grad="w" in wanted)
        if bias:
            layer.bias.value = _tensor(rng, (m,), "fast", grad="b" in wanted)
        x = _tensor(rng, shape, "fast", grad="x" in wanted)
        out = layer(x)
        (out * out).sum().backward()
        grads = [x.grad, layer.weight.value.grad, layer.bias.value.grad if bias else None]
        return [out, grads]

    return {
        "Linear": lambda: linear(True, (n, k), "xwb"),
        "Linear (3-d input)": lambda: linear(True, (2, n, k), "xwb"),
        "Linear (no bias, weight only)": lambda: linear(False, (n, k), "w"),
        "Linear (input only)": lambda: linear(True, (n, k), "x"),
    }
