"""The primitives, timed on simple, fast, numpy and PyTorch in the same run.

Each row is one backend primitive (``map``, ``zip``, ``reduce``, ``matrix_multiply``) called through
the TensorBackend, as Functions call it, against the equivalent numpy and PyTorch call on the same
float64 data. simple is timed only at the small sizes (it is pure Python: seconds per million
elements); each size has its own row.
"""

from dataclasses import dataclass
from functools import partial
from typing import Dict, List, Optional

import numpy as np

from timing import compare
from torchlight import Tensor, backends, scalar

try:
    import torch
except ImportError:
    torch = None

SIMPLE_LIMIT = 20_000  # simple is timed up to this many elements (or multiply-adds for matmul)


@dataclass
class Row:
    """One measured operation: seconds per call for each contender (None: not measured)."""

    group: str
    operation: str
    shape: str
    times: Dict[str, Optional[float]]
    flops: Optional[float] = None  # floating-point operations per call, for matmul


def _tensors(arrays: List[np.ndarray], backend) -> List[Tensor]:
    return [Tensor.from_numpy(a, backend) for a in arrays]


def elementwise_cases(n: int) -> List[tuple]:
    """(group, name, inputs, torchlight op, numpy op, torch op) on n x n float64 inputs."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    row, column = rng.standard_normal(n), rng.standard_normal((n, 1))
    positive = np.abs(x) + 0.01
    t = torch
    return [
        ("map", "neg (contiguous)", [x], lambda b, a: b.map(scalar.neg)(a), np.negative, t and t.neg),
        (
            "map",
            "relu (contiguous)",
            [x],
            lambda b, a: b.map(scalar.relu)(a),
            lambda a: np.maximum(a, 0.0),
            t and t.relu,
        ),
        ("map", "exp (contiguous)", [x], lambda b, a: b.map(scalar.exp)(a), np.exp, t and t.exp),
        ("map", "log (contiguous)", [positive], lambda b, a: b.map(scalar.log)(a), np.log, t and t.log),
        (
            "map",
            "sigmoid (contiguous)",
            [x],
            lambda b, a: b.map(scalar.sigmoid)(a),
            lambda a: 0.5 * np.tanh(0.5 * a) + 0.5,  # numpy has no sigmoid: this identity is one pass of tanh
            t and t.sigmoid,
        ),
        ("map", "tanh (contiguous)", [x], lambda b, a: b.map(scalar.tanh)(a), np.tanh, t and t.tanh),
        ("zip", "add (contiguous)", [x, y], lambda b, a, c: b.zip(scalar.add)(a, c), np.add, t and t.add),
        ("zip", "mul (broadcast row)", [x, row], lambda b, a, c: b.zip(scalar.mul)(a, c), np.multiply, t and t.mul),
        (
            "zip",
            "mul (broadcast column)",
            [x, column],
            lambda b, a, c: b.zip(scalar.mul)(a, c),
            np.multiply,
            t and t.mul,
        ),
        # The first operand is read transposed: a permuted view, strides (1, n), in every library.
        (
            "zip",
            "add (permuted)",
            [x, y],
            lambda b, a, c: b.zip(scalar.add)(a.permute(1, 0), c),
            lambda a, c: a.T + c,
            t and (lambda a, c: a.T + c),
        ),
        (
            "reduce",
            "sum (last dim)",
            [x],
            lambda b, a: b.reduce(scalar.add, 0.0)(a, 1),
            lambda a: a.sum(1),
            t and (lambda a: a.sum(1)),
        ),
        (
            "reduce",
            "sum (first dim)",
            [x],
            lambda b, a: b.reduce(scalar.add, 0.0)(a, 0),
            lambda a: a.sum(0),
            t and (lambda a: a.sum(0)),
        ),
        (
            "reduce",
            "max (last dim)",
            [x],
            lambda b, a: b.reduce(scalar.max, -np.inf)(a, 1),
            lambda a: a.max(1),
            t and (lambda a: a.amax(1)),
        ),
    ]


def elementwise(sizes: List[int], rounds: int) -> List[Row]:
    fast, simple = backends.get("fast"), backends.get("simple")
    rows = []
    for n in sizes:
        for group, name, arrays, op, np_op, torch_op in elementwise_cases(n):
            fast_in, simple_in = _tensors(arrays, fast), _tensors(arrays, simple)
            torch_in = [torch.from_numpy(a) for a in arrays] if torch is not None else None
            contenders = {
                "simple": partial(op, simple, *simple_in) if n * n <= SIMPLE_LIMIT else None,
                "fast": partial(op, fast, *fast_in),
                "numpy": partial(np_op, *arrays),
                "torch": partial(torch_op, *torch_in) if torch is not None else None,
            }
            times = compare(contenders, rounds=rounds)
            rows.append(Row(group, name, f"{n}x{n}", {k: times.get(k) for k in contenders}))
    return rows


MATMUL_SHAPES = [
    (1, 50, 100, 100),
    (1, 64, 64, 64),
    (1, 128, 128, 128),
    (1, 256, 256, 256),
    (1, 512, 512, 512),
    (1, 1024, 1024, 1024),
    (16, 256, 256, 256),
]


def matmul(shapes: List[tuple], rounds: int) -> List[Row]:
    fast, simple = backends.get("fast"), backends.get("simple")
    rows = []
    rng = np.random.default_rng(1)
    for batch, n, k, m in shapes:
        lead = (batch,) if batch > 1 else ()
        a, b = rng.standard_normal(lead + (n, k)), rng.standard_normal(lead + (k, m))
        fa, fb = _tensors([a, b], fast)
        sa, sb = _tensors([a, b], simple)
        ta, tb = (torch.from_numpy(a), torch.from_numpy(b)) if torch is not None else (None, None)
        contenders = {
            "simple": partial(simple.matrix_multiply, sa, sb) if batch * n * k * m <= 300_000 else None,
            "fast": partial(fast.matrix_multiply, fa, fb),
            "numpy": partial(np.matmul, a, b),
            "torch": partial(torch.matmul, ta, tb) if torch is not None else None,
        }
        times = compare(contenders, rounds=rounds + 1, budget=0.3, pause=0.2)
        shape = (f"{batch}x" if batch > 1 else "") + f"{n}x{k} @ {k}x{m}"
        rows.append(
            Row("matmul", "matmul", shape, {k_: times.get(k_) for k_ in contenders}, flops=2.0 * batch * n * k * m)
        )
    return rows
