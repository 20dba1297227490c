"""Every built-in differentiable op, as a small case that module 5's checks run on.

A case names a function of tensors, the shapes and kinds of its inputs, and (where the same code
does not run on PyTorch) the equivalent PyTorch function. Inputs are fixed by a seed and chosen
where each op is smooth: away from the kinks of relu and abs, positive for log, sqrt and the base
of pow, with distinct values for max.
"""

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

import torchlight
from torchlight import ops as F
from torchlight import scalar
from torchlight.ops import advanced_index as A
from torchlight.ops import inplace as I


@dataclass
class Case:
    name: str
    fn: Callable  # fn(*tensors) on torchlight tensors
    shapes: Sequence[tuple]
    kinds: Sequence[str] = ()  # per input: "any" (default), "pos" or "distinct"
    torch_fn: Optional[Callable] = None  # fn(torch, *tensors), when fn itself does not run on torch
    second_order: bool = True  # False: first-order only by design (Map)

    def arrays(self, seed: int = 0):
        rng = np.random.default_rng(seed)
        kinds = list(self.kinds) + ["any"] * (len(self.shapes) - len(self.kinds))
        return [_values(rng, shape, kind) for shape, kind in zip(self.shapes, kinds, strict=True)]

    def tensors(self, seed: int = 0, requires_grad: bool = True):
        return [torchlight.tensor(a, requires_grad=requires_grad) for a in self.arrays(seed)]

    def run_torch(self, torch, *xs):
        return self.fn(*xs) if self.torch_fn is None else self.torch_fn(torch, *xs)

    def __repr__(self):
        return self.name


def _values(rng, shape, kind):
    n = int(np.prod(shape))
    if kind == "pos":
        return rng.uniform(0.5, 1.5, n).reshape(shape)
    if kind == "distinct":  # at least 0.2 apart, so a maximum stays one under small nudges
        return (rng.permutation(n) * 0.2 - 0.1 * n + rng.uniform(-0.05, 0.05)).reshape(shape)
    # nonzero, at least 0.2 from the kinks of relu and abs
    return (rng.choice([-1.0, 1.0], n) * rng.uniform(0.2, 1.0, n)).reshape(shape)


def _index_back_torch(torch, g):
    out = torch.zeros(2, 3, dtype=torch.float64)
    out[:, 1:] = g
    return out


def _setitem(a, v):
    b = a.clone()
    b[:, 1:] = v
    return b


def _setitem_at(a, v):  # (issue 22: through lists of positions)
    b = a.clone()
    b[[0, 1], [2, 0]] = v
    return b


def _setitem_mask(a, v):
    b = a.clone()
    b[a.detach() > 0] = v
    return b


GATHER_INDEX = np.array([[2, 0], [1, 1]])
WHERE = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])


def _where_torch(torch, a, b):
    return torch.where(torch.tensor(WHERE) > 0, a, b)


CASES = [
    # elementwise arithmetic (b broadcasts to a where shapes differ)
    Case("neg", lambda a: -a, [(2, 3)]),
    Case("add", lambda a, b: a + b, [(2, 3), (3,)]),
    Case("sub", lambda a, b: a - b, [(2, 3), (2, 1)]),
    Case("mul", lambda a, b: a * b, [(2, 3), (3,)]),
    Case("div", lambda a, b: a / b, [(2, 3), (3,)], ["any", "pos"]),
    Case("pow", lambda a, b: a**b, [(2, 3), (2, 3)], ["pos", "any"]),
    Case("pow_number", lambda a: a**3.0, [(2, 3)]),
    Case("inv", lambda a: F.Inv.apply(a), [(2, 3)], ["pos"], lambda torch, a: 1.0 / a),
    Case("inv_back", lambda a, g: F.InvBack.apply(a, g), [(2, 3), (2, 3)], ["pos"], lambda torch, a, g: -g / a**2),
    Case("log", lambda a: a.log(), [(2, 3)], ["pos"]),
    Case("log_back", lambda a, g: F.LogBack.apply(a, g), [(2, 3), (2, 3)], ["pos"], lambda torch, a, g: g / a),
    Case("exp", lambda a: a.exp(), [(2, 3)]),
    Case("sigmoid", lambda a: a.sigmoid(), [(2, 3)]),
    Case("tanh", lambda a: a.tanh(), [(2, 3)]),
    Case("relu", lambda a: a.relu(), [(2, 3)]),
    Case("relu_back", lambda a, g: F.ReluBack.apply(a, g), [(2, 3), (2, 3)], (), lambda torch, a, g: g * (a > 0)),
    Case("sqrt", lambda a: a.sqrt(), [(2, 3)], ["pos"]),
    Case("abs", lambda a: a.abs(), [(2, 3)]),
    Case(
        "map",
        lambda a: F.Map.apply(a, scalar.log, scalar.log_back),
        [(2, 3)],
        ["pos"],
        lambda torch, a: a.log(),
        second_order=False,
    ),
    # matrix multiply: matrices, matrix @ vector, batched with broadcasting
    Case("matmul", lambda a, b: a @ b, [(2, 3), (3, 2)]),
    Case("matvec", lambda a, b: a @ b, [(2, 3), (3,)]),
    Case("batched_matmul", lambda a, b: a @ b, [(2, 2, 3), (3, 2)]),
    # the affine map of nn.Linear, fused: a batch of rows, one vector, leading batch dims, no bias
    Case(
        "linear", F.Linear.apply, [(2, 3), (4, 3), (4,)], (), lambda torch, x, w, b: torch.nn.functional.linear(x, w, b)
    ),
    Case(
        "linear_vector",
        F.Linear.apply,
        [(3,), (4, 3), (4,)],
        (),
        lambda torch, x, w, b: torch.nn.functional.linear(x, w, b),
    ),
    Case(
        "linear_batched",
        F.Linear.apply,
        [(2, 2, 3), (4, 3), (4,)],
        (),
        lambda torch, x, w, b: torch.nn.functional.linear(x, w, b),
    ),
    Case("linear_no_bias", F.Linear.apply, [(2, 3), (4, 3)], (), lambda torch, x, w: torch.nn.functional.linear(x, w)),
    # reductions
    Case("sum_all", lambda a: a.sum(), [(2, 3)]),
    Case("sum_dim", lambda a: a.sum(1), [(2, 3)]),
    Case("sum_keepdim", lambda a: a.sum(0, keepdim=True), [(2, 3)]),
    Case("mean", lambda a: a.mean(0), [(2, 3)]),
    Case("max_all", lambda a: a.max(), [(2, 3)], ["distinct"]),
    Case("max_dim", lambda a: a.max(1).values, [(2, 3)], ["distinct"]),
    # views and copies
    Case("view", lambda a: a.view(3, 2), [(2, 3)]),
    Case("permute", lambda a: a.permute(1, 0), [(2, 3)]),
    Case("expand", lambda a: a.expand(2, 3), [(1, 3)]),
    Case("unsqueeze", lambda a: a.unsqueeze(1), [(2, 3)]),
    Case("squeeze", lambda a: a.squeeze(1), [(2, 1, 3)]),
    Case("index", lambda a: a[1:, None, ::2], [(3, 3)]),
    Case(
        "index_back",
        lambda g: F.IndexBack.apply(g, (2, 3), (slice(None), slice(1, None))),
        [(2, 2)],
        (),
        _index_back_torch,
    ),
    Case("clone", lambda a: a.clone(), [(2, 3)]),
    Case("to", lambda a: F.To.apply(a, a.backend), [(2, 3)], (), lambda torch, a: a.clone()),
    Case(
        "gather",
        lambda a: a.gather(1, torchlight.tensor(GATHER_INDEX)),
        [(2, 3)],
        (),
        lambda torch, a: a.gather(1, torch.tensor(GATHER_INDEX)),
    ),
    # in-place operations, on a copy (a leaf that requires grad cannot change in place)
    Case("add_", lambda a, b: a.clone().add_(b), [(2, 3), (3,)]),
    Case("sub_", lambda a, b: a.clone().sub_(b, alpha=2.0), [(2, 3), (2, 3)]),
    Case("mul_", lambda a, b: a.clone().mul_(b), [(2, 3), (3,)]),
    Case("div_", lambda a, b: a.clone().div_(b), [(2, 3), (3,)], ["any", "pos"]),
    Case("fill_", lambda a, v: a.clone().fill_(v), [(2, 3), ()]),
    Case("setitem", _setitem, [(2, 3), (2, 2)]),
    Case("setitem_at", _setitem_at, [(2, 3), (1,)]),
    Case("setitem_mask", _setitem_mask, [(2, 3), ()]),
    # indexing by lists and tensors, adaptive pooling (issue 22)
    Case("take", lambda a: a[[1, 0, 1], [2, 2, 0]], [(2, 3)]),
    Case("take_mask", lambda a: a[a.detach() > 0] * a[[1]].sum(), [(2, 3)]),
    Case(
        "adaptive_avg_pool2d",
        lambda a: torchlight.nn.functional.adaptive_avg_pool2d(a, (2, 3)),
        [(1, 1, 3, 4)],
        (),
        lambda torch, a: torch.nn.functional.adaptive_avg_pool2d(a, (2, 3)),
    ),
    Case(
        "adaptive_max_pool2d",
        lambda a: torchlight.nn.functional.adaptive_max_pool2d(a, (2, 3)) ** 2,
        [(1, 1, 3, 4)],
        ["distinct"],
        lambda torch, a: torch.nn.functional.adaptive_max_pool2d(a, (2, 3)) ** 2,
    ),
    # PyTorch's API beyond the stages (issue 14); maximum's b is shifted away from ties with a
    Case("sin", lambda a: a.sin(), [(2, 3)]),
    Case("cos", lambda a: a.cos(), [(2, 3)]),
    Case(
        "cat",
        lambda a, b: torchlight.cat([a, b], dim=1),
        [(2, 3), (2, 2)],
        (),
        lambda torch, a, b: torch.cat([a, b], 1),
    ),
    Case("where", lambda a, b: torchlight.where(a.new_tensor(WHERE) > 0, a, b), [(2, 3), (3,)], (), _where_torch),
    Case(
        "maximum",
        lambda a, b: torchlight.maximum(a, b + 0.05),
        [(2, 3), (3,)],
        (),
        lambda torch, a, b: torch.maximum(a, b + 0.05),
    ),
]

# The Functions that CASES exercise, so that a test can check that none is left out.
COVERED = {
    F.Neg,
    F.Add,
    F.Sub,
    F.Mul,
    F.Div,
    F.Pow,
    F.Inv,
    F.InvBack,
    F.Log,
    F.LogBack,
    F.Exp,
    F.Sigmoid,
    F.Tanh,
    F.ReLU,
    F.ReluBack,
    F.Sqrt,
    F.Abs,
    F.Map,
    F.MatMul,
    F.Linear,
    F.Sum,
    F.Max,
    F.MaxDim,
    F.View,
    F.Permute,
    F.BroadcastView,
    F.Unsqueeze,
    F.Squeeze,
    F.Index,
    F.IndexBack,
    F.Copy,
    F.To,
    F.Gather,
    I.AddInplace,
    I.MulInplace,
    I.DivInplace,
    I.Fill,
    I.SetItem,
    I.SetItemAt,
    A.Take,
    A.Put,
    F.Sin,
    F.Cos,
    F.Cat,
    F.Where,
    F.Maximum,
}
# Functions without a gradient (comparisons): their outputs never require grad.
NOT_DIFFERENTIABLE = {F.LT, F.GT, F.EQ, F.IsClose}
