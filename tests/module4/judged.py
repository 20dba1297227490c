"""Module 4's judged probes: named calls into the student's code on inputs drawn from ``rng``, whose
values the autograder compares with the reference's (torchlight/grading/judged.py). Every tensor
here is on the simple backend, which runs the code of module 4's stages (fast fuses some of it)."""

import numpy as np

import torchlight as tl
from torchlight.nn import functional as F
from torchlight.ops.pooling import tile
from torchlight.optim.adam import adam_update


def _array(rng, shape, low=-2.0, high=2.0):
    n = int(np.prod(shape))
    return np.array([rng.uniform(low, high) for _ in range(n)]).reshape(shape)


def _tensor(rng, shape, low=-2.0, high=2.0, grad=False):
    return tl.tensor(_array(rng, shape, low, high).tolist(), backend="simple", requires_grad=grad)


def _with_grads(rng, f, *shapes):
    """f(*leaves), then the leaves' gradients of (f * a random tensor).sum()."""
    leaves = [_tensor(rng, shape, grad=True) for shape in shapes]
    out = f(*leaves)
    (out * _tensor(rng, out.shape)).sum().backward()
    return [out, [leaf.grad for leaf in leaves]]


def stage_4_1(rng):
    n, c, o, w, k = 2, rng.randint(1, 3), rng.randint(1, 3), rng.randint(5, 9), rng.randint(1, 3)
    return {
        "conv1d": lambda: _with_grads(rng, lambda x, wt, b: F.conv1d(x, wt, b), (n, c, w), (o, c, k), (o,)),
        "conv1d (stride, padding)": lambda: _with_grads(
            rng, lambda x, wt: F.conv1d(x, wt, None, stride=2, padding=1), (n, c, w), (o, c, k)
        ),
    }


def stage_4_2(rng):
    n, c, o = 2, rng.randint(1, 2), rng.randint(1, 3)
    h, w, kh, kw = rng.randint(4, 6), rng.randint(4, 6), rng.randint(1, 3), rng.randint(1, 3)
    return {
        "conv2d": lambda: _with_grads(rng, lambda x, wt, b: F.conv2d(x, wt, b), (n, c, h, w), (o, c, kh, kw), (o,)),
        "conv2d (stride, padding)": lambda: _with_grads(
            rng, lambda x, wt: F.conv2d(x, wt, None, stride=(2, 1), padding=(1, 2)), (n, c, h, w), (o, c, kh, kw)
        ),
    }


def stage_4_3(rng):
    n, c, h, w = 2, rng.randint(1, 2), 2 * rng.randint(2, 3), 2 * rng.randint(2, 3)
    return {
        "tile": lambda: tile(_tensor(rng, (n, c, h, w)), (2, 2)),
        "avg_pool2d": lambda: _with_grads(rng, lambda x: F.avg_pool2d(x, 2), (n, c, h, w)),
        "avg_pool2d (stride, padding)": lambda: _with_grads(rng, lambda x: F.avg_pool2d(x[0], 3, 2, 1), (n, c, h, w)),
        "max_pool2d": lambda: _with_grads(rng, lambda x: F.max_pool2d(x, 2), (n, c, h, w)),
        "max_pool2d (stride, padding)": lambda: _with_grads(rng, lambda x: F.max_pool2d(x, (3, 2), 1, 1), (n, c, h, w)),
    }


def stage_4_4(rng):
    n, classes = rng.randint(2, 4), rng.randint(2, 5)
    p = rng.choice([0.25, 0.5, 0.75])

    def dropout():
        x = _tensor(rng, (40, 50), 0.5, 2.0, grad=True)
        out = F.dropout(x, p)
        out.sum().backward()
        ratio, grad = (out / x).to_numpy(), x.grad.to_numpy()
        dropped = float((ratio == 0).mean())
        return [sorted({round(float(v), 9) for v in ratio.flat}), bool(abs(dropped - p) < 0.1), (grad == ratio).all()]

    def nll():
        logits = _tensor(rng, (n, classes), -5.0, 5.0)
        target = [rng.randrange(classes) for _ in range(n)]
        logp = F.log_softmax(logits, 1)
        return [
            F.nll_loss(logp, target),
            F.nll_loss(logp, target, reduction="sum"),
            F.nll_loss(logp, target, reduction="none"),
        ]

    return {
        "logsumexp": lambda: _with_grads(rng, lambda x: F.logsumexp(x * 300.0, 1), (n, classes)),
        "softmax": lambda: _with_grads(rng, lambda x: F.softmax(x * 400.0, 1), (n, classes)),
        "softmax (dim 0)": lambda: F.softmax(_tensor(rng, (n, classes)), 0),
        "log_softmax": lambda: _with_grads(rng, lambda x: F.log_softmax(x * 400.0, 1), (n, classes)),
        "dropout": dropout,
        "nll_loss": nll,
        "cross_entropy": lambda: _with_grads(
            rng, lambda x: F.cross_entropy(x, [rng.randrange(classes) for _ in range(n)]), (n, classes)
        ),
        "cross_entropy (probabilities)": lambda: _with_grads(
            rng, lambda x, t: F.cross_entropy(x, F.softmax(t, 1)), (n, classes), (n, classes)
        ),
    }


def stage_4_5(rng):
    from torchlight.examples import train_cnn

    seed, classes = rng.randint(0, 10**6), rng.randint(2, 4)

    def model():
        return train_cnn.LeNet((4, 4), classes, channels=(2, 3), hidden=5, backend="simple", seed=seed)

    def step(optimizer):
        net = model()
        x, y = _tensor(rng, (3, 1, 4, 4)), [rng.randrange(classes) for _ in range(3)]
        opt = optimizer(net.parameters())
        first = train_cnn.train_step(net, opt, x, y)
        second = train_cnn.train_step(net, opt, x, y)
        return [first, second, [p.value.sum() for p in net.parameters()]]

    def adam():
        m, v, g = (_tensor(rng, (3,), 0.1, 1.0) for _ in range(3))
        step = rng.randint(1, 5)
        return [
            list(adam_update(m, v, g, step, 0.9, 0.999, 1e-8)),
            list(adam_update(0.5, 0.2, 0.3, step, 0.8, 0.99, 1e-6)),
        ]

    return {
        "LeNet": lambda: model()(_tensor(rng, (2, 1, 4, 4))),
        "train_step (SGD)": lambda: step(lambda ps: tl.optim.SGD(ps, 0.1)),
        "train_step (Adam)": lambda: step(lambda ps: tl.optim.Adam(ps, 0.01)),
        "adam_update": adam,
    }
