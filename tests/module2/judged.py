"""Module 2's judged probes: named calls into the student's code on inputs drawn from ``rng``, whose
values the autograder compares with the reference's (torchlight/grading/judged.py). Every tensor
here is on the simple backend, whose kernels module 2 writes."""

import numpy as np

import torchlight as tl
from torchlight import indexing
from torchlight.ops import elementwise
from torchlight.tensor_data import TensorData, broadcasts_to, shape_broadcast, strides_from_shape


def _shape(rng, dims, low=1, high=4):
    return tuple(rng.randint(low, high) for _ in range(dims))


def _array(rng, shape, low=-2.0, high=2.0):
    n = int(np.prod(shape))
    return np.array([rng.uniform(low, high) for _ in range(n)]).reshape(shape)


def _tensor(rng, shape, low=-2.0, high=2.0, grad=False):
    return tl.tensor(_array(rng, shape, low, high).tolist(), backend="simple", requires_grad=grad)


def stage_2_1(rng):
    shape = _shape(rng, 4)
    strides = strides_from_shape(shape)
    order = list(range(4))
    rng.shuffle(order)

    def positions():
        every = [list(i) for i in np.ndindex(*shape)]
        return [[indexing.index_to_position(i, strides), indexing.index_to_position(i, strides[::-1])] for i in every]

    def indices():
        found = []
        for ordinal in range(int(np.prod(shape))):
            out = [0] * 4
            indexing.to_index(ordinal, shape, out)
            found.append(list(out))
        return found

    def permuted():
        data = TensorData(np.arange(float(np.prod(shape))), shape)
        view = data.permute(*order)
        return [list(view.shape), list(view.strides), view.to_numpy().tolist()]

    return {
        "strides_from_shape": lambda: [list(strides_from_shape(s)) for s in (shape, (5,), (), (3, 1, 2))],
        "index_to_position": positions,
        "to_index": indices,
        "is_contiguous": lambda: [
            indexing.is_contiguous(shape, strides),
            indexing.is_contiguous(shape, strides[::-1]),
            indexing.is_contiguous((1, 3), (7, 1)),
            indexing.is_contiguous((2, 1, 3), (3, 9, 1)),
        ],
        "permute": permuted,
    }


def stage_2_2(rng):
    big = _shape(rng, 3, 2, 4)
    small = tuple(1 if rng.random() < 0.5 else n for n in big[1:])

    def index():
        out = []
        for ordinal in range(int(np.prod(big))):
            big_index = [0, 0, 0]
            indexing.to_index(ordinal, big, big_index)
            small_index = [0, 0]
            indexing.broadcast_index(big_index, big, small, small_index)
            out.append(small_index)
        return out

    return {
        "shape_broadcast": lambda: [
            list(shape_broadcast(big, small)),
            list(shape_broadcast((1,) + small, big[:1] + (1, 1))),
        ],
        "shape_broadcast mismatch": lambda: shape_broadcast((big[0] + 1, 2), (big[0] + 2, 2)),
        "broadcasts_to": lambda: [
            broadcasts_to(small, big),
            broadcasts_to(big, small),
            broadcasts_to((big[0] + 1,), big),
            broadcasts_to((), big),
        ],
        "broadcast_index": index,
    }


def _unary(t):
    return {
        "neg": lambda: -t,
        "exp": lambda: t.exp(),
        "log": lambda: (t * t + 0.5).log(),
        "sigmoid": lambda: t.sigmoid(),
        "relu": lambda: t.relu(),
        "inv": lambda: elementwise.Inv.apply(t * t + 0.5),
        "sqrt": lambda: (t * t).sqrt(),
        "abs": lambda: t.abs(),
    }


def _binary(a, b):
    return {"add": lambda: a + b, "mul": lambda: a * b, "pow": lambda: (a * a + 0.5) ** b}


def stage_2_3(rng):
    shape = _shape(rng, 3, 2, 4)
    a, b = _tensor(rng, shape), _tensor(rng, shape[1:])
    p = a.permute(2, 0, 1)
    calls = {f"{k} (permuted)": v for k, v in _unary(p).items()}
    calls.update({k: v for k, v in _binary(a, b).items()})
    calls.update({f"{k} (permuted)": v for k, v in _binary(p, p).items()})
    calls["sum"] = lambda: [a.sum(0), a.sum(1), p.sum(2), a.sum()]
    return calls


def stage_2_4(rng):
    shape = _shape(rng, 3, 2, 4)
    values, others = _array(rng, shape), _array(rng, shape[1:])

    def grads(f, *arrays):
        leaves = [tl.tensor(x.tolist(), backend="simple", requires_grad=True) for x in arrays]
        out = f(*leaves)
        out.backward(tl.tensor(_array(rng.__class__(7), out.shape).tolist(), backend="simple"))
        return [leaf.grad for leaf in leaves]

    calls = {f"d {name}": (lambda name=name: grads(lambda t: _unary(t)[name](), values)) for name in _unary(0)}
    calls.update(
        {
            f"d {name}": (lambda name=name: grads(lambda a, b: _binary(a, b)[name](), values, others))
            for name in _binary(0, 0)
        }
    )
    calls["d view, permute"] = lambda: grads(lambda t: t.permute(1, 2, 0).contiguous().view(-1) * 3.0, values)
    calls["d sum"] = lambda: grads(lambda t: t.sum(1) * t.sum(), values)
    calls["d max"] = lambda: grads(lambda t: t.max(1).values + t.max(), values)
    return calls


def stage_2_5(rng):
    from project import train_tensor as tt

    m, k, n = (rng.randint(1, 5) for _ in range(3))
    seed, hidden = rng.randint(0, 10**6), rng.randint(2, 4)

    def matmul():
        a, b = _tensor(rng, (2, m, k), grad=True), _tensor(rng, (k, n), grad=True)
        out = a @ b
        (out * out).sum().backward()
        return [out, a.grad, b.grad]

    def linear():
        x = _tensor(rng, (m, k))
        w, bias = _tensor(rng, (n, k)), _tensor(rng, (n,))
        return [tl.nn.Linear.composed(x, w, bias), tl.nn.Linear.composed(x, w, None)]

    def network():
        model = tt.Network(hidden, backend="simple", seed=seed)
        return model(_tensor(rng, (4, 2), 0.0, 1.0))

    def loss():
        logits, target = (
            _tensor(rng, (6,), -30.0, 30.0),
            tl.tensor([float(rng.random() < 0.5) for _ in range(6)], backend="simple"),
        )
        return tt.binary_cross_entropy_with_logits(logits, target)

    def train():
        result = tt.train("xor", hidden=hidden, epochs=3, n=8, seed=seed, backend="simple", progress=False)
        return [result.losses, result.accuracies]

    return {"matmul": matmul, "Linear.composed": linear, "Network": network, "bce": loss, "train": train}
