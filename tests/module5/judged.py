"""Module 5's judged probes: named calls into the student's code on inputs drawn from ``rng``, whose
values the autograder compares with the reference's (torchlight/grading/judged.py)."""

import numpy as np

import torchlight as tl
from torchlight.autograd import Function, functional, grad, once_differentiable
from torchlight.autograd import forward_ad as fwad


def _array(rng, shape, low=-2.0, high=2.0):
    n = int(np.prod(shape))
    return np.array([rng.uniform(low, high) for _ in range(n)]).reshape(shape)


def _tensor(rng, shape, low=-2.0, high=2.0, grad=False):
    return tl.tensor(_array(rng, shape, low, high).tolist(), backend="simple", requires_grad=grad)


def _raised(f):
    try:
        f()
    except Exception as e:
        return type(e).__name__
    return None


class _Split(Function):
    """Two outputs (x * scale, x + shift), with defaults: only the first is used below."""

    @staticmethod
    def forward(ctx, x, shift=1.0, scale=2.0):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x * scale, x + shift

    @staticmethod
    def backward(ctx, g1, g2):
        (x,) = ctx.saved_tensors
        return g1 * ctx.scale + g2 * x, None, None


class _Affine(Function):
    """The combined forward style: setup_context sees every input, defaults filled in."""

    @staticmethod
    def forward(x, a=3.0, *rest, b=0.5):
        return x * a + b

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.inputs = [float(v) if not isinstance(v, tl.Tensor) else "tensor" for v in inputs]
        ctx.a = inputs[1]

    @staticmethod
    def backward(ctx, g):
        return (g * ctx.a,) + (None,) * (len(ctx.inputs) - 1)


def stage_5_1(rng):
    x = _array(rng, (3,))
    a, b = rng.uniform(-2, 2), rng.uniform(-2, 2)

    def split():
        leaf = tl.tensor(x.tolist(), backend="simple", requires_grad=True)
        first, _ = _Split.apply(leaf, shift=a)
        (first * first).sum().backward()
        return leaf.grad

    def affine(*args, **kwargs):
        leaf = tl.tensor(x.tolist(), backend="simple", requires_grad=True)
        out = _Affine.apply(leaf, *args, **kwargs)
        out.sum().backward()
        return [out, leaf.grad, out.grad_fn is not None]

    seen = {}

    class Probe(_Affine):
        @staticmethod
        def setup_context(ctx, inputs, output):
            seen["inputs"] = [float(v) if not isinstance(v, tl.Tensor) else "tensor" for v in inputs]
            _Affine.setup_context(ctx, inputs, output)

    def inputs(*args, **kwargs):
        Probe.apply(tl.tensor(x.tolist(), backend="simple", requires_grad=True), *args, **kwargs)
        return seen.pop("inputs")

    return {
        "materialized": split,
        "defaults": lambda: affine(),
        "keywords": lambda: affine(b=b),
        "positional": lambda: affine(a, 1.0, 2.0, b=b),
        "inputs (defaults)": lambda: inputs(),
        "inputs (all)": lambda: inputs(a, 7.0, b=b),
        "unknown keyword": lambda: _raised(lambda: affine(c=1.0)),
    }


def stage_5_2(rng):
    x, y = _array(rng, (2, 3)), _array(rng, (2, 3), 0.5, 2.0)

    def leaves():
        return [tl.tensor(v.tolist(), backend="simple", requires_grad=True) for v in (x, y)]

    def mul_():
        a, b = leaves()
        t = a * 1.5
        early = t + 3.0  # uses t from before the change
        t.mul_(b)
        (t * t + early).sum().backward()
        return [t, a.grad, b.grad, t._version]

    def div_():
        a, b = leaves()
        t = a + 0.0
        t.div_(b)
        (t * t).sum().backward()
        return [t, a.grad, b.grad]

    def twice():
        a, b = leaves()
        t = a * 1.0
        t.mul_(b).mul_(b).div_(2.0)
        t.sum().backward()
        return [a.grad, b.grad]

    def saved():
        a, b = leaves()
        t = a * 1.0
        s = t * t  # saves t
        t.mul_(b)
        return _raised(lambda: s.sum().backward())

    def leaf():
        a, b = leaves()
        with tl.no_grad():
            a * 1.0
        return [_raised(lambda: a.mul_(b)), _raised(lambda: a.view(6).mul_(2.0))]

    return {"mul_": mul_, "div_": div_, "chained": twice, "saved tensor changed": saved, "leaf changed": leaf}


def stage_5_3(rng):
    x = _array(rng, (4,))

    class Cube(Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t * t

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return g * 3.0 * t * t

    class Pair(Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a

    def first():
        leaf = tl.tensor(x.tolist(), backend="simple", requires_grad=True)
        (g,) = grad(Cube.apply(leaf).sum(), [leaf], create_graph=True)
        return [g, g.requires_grad, _raised(lambda: g.sum().backward())]

    def pair():
        a = tl.tensor(x.tolist(), backend="simple", requires_grad=True)
        b = tl.tensor(x[::-1].tolist(), backend="simple", requires_grad=True)
        ga, gb = grad(Pair.apply(a, b).sum(), [a, b], create_graph=True)
        return [ga, gb, _raised(lambda: (ga * gb).sum().backward())]

    return {"once_differentiable": first, "two inputs": pair}


def stage_5_4(rng):
    x, t, y = _array(rng, (2, 3), 0.2, 2.0), _array(rng, (2, 3)), _array(rng, (2, 3))
    ops = {
        "exp": lambda a: a.exp(),
        "log": lambda a: a.log(),
        "sigmoid": lambda a: a.sigmoid(),
        "relu": lambda a: (a - 1.0).relu(),
        "mul, add": lambda a: a * a + a,
        "pow": lambda a: a**1.5,
        "sum": lambda a: a.sum(1),
    }

    def tangent(f):
        with fwad.dual_level():
            dual = fwad.make_dual(tl.tensor(x.tolist(), backend="simple"), tl.tensor(t.tolist(), backend="simple"))
            out = f(dual)
            primal, tan = fwad.unpack_dual(out)
            return [primal, tan]

    def two_inputs():
        with fwad.dual_level():
            a = fwad.make_dual(tl.tensor(x.tolist(), backend="simple"), tl.tensor(t.tolist(), backend="simple"))
            b = tl.tensor(y.tolist(), backend="simple")
            return [fwad.unpack_dual(a * b).tangent, fwad.unpack_dual(b / a).tangent, fwad.unpack_dual(b).tangent]

    def hvp():
        f = lambda a: (a * a * a).sum() + (a.exp() * a).sum()  # noqa: E731
        value, hv = functional.hvp(f, tl.tensor(x.tolist(), backend="simple"), tl.tensor(t.tolist(), backend="simple"))
        return [value, hv]

    calls = {f"jvp {name}": (lambda f=f: tangent(f)) for name, f in ops.items()}
    calls.update({"jvp two inputs": two_inputs, "hvp": hvp})
    return calls
