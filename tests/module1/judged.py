"""Module 1's judged probes: named calls into the student's code on inputs drawn from ``rng``, whose
values the autograder compares with the reference's (torchlight/grading/judged.py)."""

import math

from torchlight import Scalar
from torchlight.autograd import backpropagate, central_difference, topological_sort


def _floats(rng, n, low=-3.0, high=3.0):
    return [rng.uniform(low, high) for _ in range(n)]


def stage_1_1(rng):
    xs = _floats(rng, 3)
    f = lambda a, b, c: a * a * b + math.sin(c) * b  # noqa: E731
    return {
        "central_difference": lambda: [central_difference(f, *xs, arg=i, epsilon=1e-4) for i in range(3)],
        "bad arg": lambda: central_difference(f, *xs, arg=3),
    }


def _ops(a, b):
    """Every Scalar operation of stages 1.2 and 1.3, on Scalars a and b (b positive)."""
    return {
        "add": lambda: a + b,
        "radd": lambda: 2.5 + a,
        "mul": lambda: a * b,
        "neg": lambda: -a,
        "sub": lambda: a - b,
        "rsub": lambda: 1.5 - a,
        "div": lambda: a / b,
        "rdiv": lambda: 2.0 / b,
        "pow": lambda: b**a,
        "log": lambda: b.log(),
        "exp": lambda: a.exp(),
        "sigmoid": lambda: a.sigmoid(),
        "relu": lambda: a.relu(),
        "tanh": lambda: a.tanh(),
        "lt": lambda: a < b,
        "gt": lambda: a > b,
        "eq": lambda: a == a,
    }


def stage_1_2(rng):
    x, y = _floats(rng, 1)[0], rng.uniform(0.2, 4.0)
    return {name: (lambda op=op: op().data) for name, op in _ops(Scalar(x), Scalar(y)).items()}


def _by_chain_rule(out, d):
    """Each leaf's derivative of out, following chain_rule along every path (no backpropagate)."""
    grads, todo = {}, [(out, d)]
    while todo:
        node, g = todo.pop()
        if node.is_leaf():
            grads[node.unique_id] = grads.get(node.unique_id, 0.0) + g
        else:
            todo.extend(node.chain_rule(g))
    return grads


def stage_1_3(rng):
    x, y, d = _floats(rng, 1)[0], rng.uniform(0.2, 4.0), rng.uniform(-2.0, 2.0)

    def derivatives(op):
        a, b = Scalar(x), Scalar(y)
        grads = _by_chain_rule(op(a, b), d)
        return [grads.get(a.unique_id), grads.get(b.unique_id)]

    calls = {name: (lambda name=name: derivatives(lambda a, b: _ops(a, b)[name]())) for name in _ops(0, 0)}
    calls["lt, eq"] = lambda: derivatives(lambda a, b: (a < b) + (a == b) * a)
    calls["repeated"] = lambda: derivatives(lambda a, b: a * a * b)
    return calls


def stage_1_4(rng):
    xs = _floats(rng, 3)

    def graph():
        a, b, c = (Scalar(v) for v in xs)
        h = a * b + c
        return a, b, c, (h * h.sigmoid() + h * a - c.exp()) * b

    def order():
        a, b, c, out = graph()
        names = {a.unique_id: "a", b.unique_id: "b", c.unique_id: "c", out.unique_id: "out"}
        sorted_ = topological_sort(out)
        place = {node.unique_id: i for i, node in enumerate(sorted_)}
        after_parents = all(
            place[p.unique_id] < place[n.unique_id] for n in sorted_ for p in n.parents if p.unique_id in place
        )
        return [len(sorted_), after_parents, names.get(sorted_[-1].unique_id), sorted(names.values())]

    def gradients(d):
        a, b, c, out = graph()
        backpropagate(out, d)
        backpropagate(out, d)  # twice: the second adds to the first
        return [a.grad, b.grad, c.grad]

    def deep():
        x = Scalar(xs[0])
        y = x
        for _ in range(3000):
            y = y * 1.0001 + 0.0
        y.backward()
        return x.grad

    return {"topological_sort": order, "backpropagate": lambda: gradients(rng.uniform(-2, 2)), "deep": deep}


def stage_1_5(rng):
    from project import train_scalar as ts
    from torchlight.datasets import toy

    seed, hidden = rng.randint(0, 10**6), rng.randint(2, 4)
    points = [(rng.random(), rng.random()) for _ in range(4)]

    def linear():
        import random

        layer = ts.ScalarLinear(3, 2, random.Random(seed))
        return [s.data for s in layer([Scalar(v) for v in _floats(rng.__class__(seed), 3)])]

    def network():
        model = ts.ScalarNetwork(hidden, seed=seed)
        return [model([Scalar(a), Scalar(b)]).data for a, b in points]

    def loss():
        model = ts.ScalarNetwork(hidden, seed=seed)
        value, correct = ts.loss_and_correct(model, toy.xor(12, seed=seed))
        return [value.data, correct]

    def train():
        result = ts.train("xor", hidden=hidden, epochs=3, n=8, seed=seed, progress=False)
        return [result.losses, result.accuracies, [p.value.data for p in result.model.parameters()]]

    return {"ScalarLinear": linear, "ScalarNetwork": network, "loss_and_correct": loss, "train": train}
