"""Module 0's judged probes: named calls into the student's code on inputs drawn from ``rng``, whose
values the autograder compares with the reference's (torchlight/grading/judged.py)."""

from torchlight import Scalar
from torchlight import scalar as op
from torchlight.datasets import toy
from torchlight.nn import Module, Parameter


def _floats(rng, n, low=-10.0, high=10.0):
    return [rng.uniform(low, high) for _ in range(n)]


def stage_0_1(rng):
    xs, ys = _floats(rng, 6), _floats(rng, 6)
    pos = _floats(rng, 6, 0.1, 20.0)
    big = [-800.0, -40.0, 0.0, 40.0, 800.0]
    ties = [(x, x) for x in xs[:2]] + [(x, x + 1e-3) for x in xs[:2]] + [(0.0, -0.0)]
    return {
        "mul": lambda: [op.mul(x, y) for x, y in zip(xs, ys, strict=True)],
        "add": lambda: [op.add(x, y) for x, y in zip(xs, ys, strict=True)],
        "neg": lambda: [op.neg(x) for x in xs + [0.0]],
        "lt": lambda: [op.lt(x, y) for x, y in zip(xs, ys, strict=True)] + [op.lt(x, x) for x in xs],
        "eq": lambda: [op.eq(x, y) for x, y in ties + list(zip(xs, ys, strict=True))],
        "max": lambda: [op.max(x, y) for x, y in zip(xs, ys, strict=True)] + [op.max(x, x) for x in xs],
        "is_close": lambda: [op.is_close(x, y) for x, y in ties],
        "sigmoid": lambda: [op.sigmoid(x) for x in xs + big],
        "relu": lambda: [op.relu(x) for x in xs + [0.0]],
        "log": lambda: [op.log(x) for x in pos],
        "exp": lambda: [op.exp(x) for x in xs],
        "inv": lambda: [op.inv(x) for x in pos + [-p for p in pos]],
        "log_back": lambda: [op.log_back(x, y) for x, y in zip(pos, ys, strict=True)],
        "inv_back": lambda: [op.inv_back(x, y) for x, y in zip(pos, ys, strict=True)],
        "relu_back": lambda: [op.relu_back(x, y) for x, y in zip(xs, ys, strict=True)],
    }


def stage_0_2(rng):
    xs, ys = _floats(rng, 7), _floats(rng, 7)
    return {
        "map": lambda: op.map(lambda x: 3.0 * x - 1.0)(xs),
        "zip_with": lambda: op.zip_with(lambda x, y: x * y - y)(xs, ys),
        "reduce": lambda: [op.reduce(lambda a, x: 2.0 * a + x, 0.5)(xs), op.reduce(op.add, 7.0)([])],
        "neg_list": lambda: op.neg_list(xs),
        "add_lists": lambda: op.add_lists(xs, ys),
        "sum": lambda: [op.sum(xs), op.sum([])],
        "prod": lambda: [op.prod(xs[:4]), op.prod([])],
    }


class _Leaf(Module):
    def __init__(self, value):
        super().__init__()
        self.p = Parameter(Scalar(value))


class _Branch(Module):
    def __init__(self, rng, depth):
        super().__init__()
        self.w = Parameter(Scalar(rng.uniform(-1, 1)))
        self.left = _Branch(rng, depth - 1) if depth > 1 else _Leaf(rng.uniform(-1, 1))
        self.right = _Leaf(rng.uniform(-1, 1))
        if rng.random() < 0.5:
            self.b = Parameter(Scalar(rng.uniform(-1, 1)))


def stage_0_3(rng):
    def tree():
        return _Branch(rng.__class__(seed), depth)

    seed, depth = rng.random(), rng.randint(2, 4)

    def switched():
        net = tree()
        net.left.eval()
        first = [m.training for m in net.modules()]
        net.train()
        second = [m.training for m in net.modules()]
        return [first, second, net.eval() is net, [m.training for m in net.modules()]]

    return {
        "named_children": lambda: [n for n, _ in tree().named_children()],
        "children": lambda: [type(m).__name__ for m in tree().children()],
        "named_modules": lambda: [n for n, _ in tree().named_modules()] + [n for n, _ in tree().named_modules("top")],
        "modules": lambda: [type(m).__name__ for m in tree().modules()],
        "named_parameters": lambda: (
            [(n, p.value.data) for n, p in tree().named_parameters()]
            + [n for n, _ in tree().named_parameters("x", recurse=False)]
        ),
        "parameters": lambda: [p.value.data for p in tree().parameters()] + [len(list(tree().parameters(False)))],
        "train_eval": switched,
    }


# Each data set's rule, as its docstring states it.
_RULES = {
    "simple": lambda x1, x2: x1 < 0.5,
    "xor": lambda x1, x2: (x1 < 0.5) != (x2 < 0.5),
    "circle": lambda x1, x2: (x1 - 0.5) ** 2 + (x2 - 0.5) ** 2 > 0.1,
}


def stage_0_4(rng):
    n, seed = rng.randint(5, 40), rng.randint(0, 10**6)

    def points(name):
        # The docstring asks for points drawn from random.Random(seed), not an order of drawing:
        # every order draws the same 2n numbers, and each label must follow the rule at its point.
        data = getattr(toy, name)(n, seed=seed)
        wrong = [i for i, (x, y) in enumerate(zip(data.X, data.y, strict=True)) if y != int(_RULES[name](*x))]
        kinds = sorted({type(v).__name__ for x in data.X for v in x} | {type(y).__name__ for y in data.y})
        return [data.n, len(data.X), sorted(v for x in data.X for v in x), wrong, kinds]

    return {name: (lambda name=name: points(name)) for name in _RULES}
