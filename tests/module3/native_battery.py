"""A battery of computations whose every observable result is written out, to compare the native
apply with the Python one (tests/module3/test_native_apply.py runs it in two processes, with
TORCHLIGHT_NATIVE=1 and =0, and compares the outputs).

What is written, per case: values bit for bit (the float64 bytes), gradients, the graph (each
History's Function, stamp, inputs, output count and ``previous``; each Context's attributes in
insertion order), the Variables' ids, output numbers, versions and tangents, and the type and
message of every error. Object identity is written as the order in which objects were first
seen, stamps and ids relative to the battery's start.

Run: ``python tests/module3/native_battery.py`` prints one JSON document (first key: the path).
"""

import json
import sys
import threading
import traceback

import numpy as np

import torchlight
from torchlight import Scalar, Tensor
from torchlight.autograd import Function, History, Variable, grad, native
from torchlight.autograd import forward_ad as fwad
from torchlight.nn import Parameter


class Recorder:
    def __init__(self):
        self.ids = {}
        self.keep = []
        self.stamp0 = History().stamp
        self.uid0 = Variable._next_id()

    def ref(self, obj):
        if id(obj) not in self.ids:
            self.ids[id(obj)] = len(self.ids)
            self.keep.append(obj)
        return self.ids[id(obj)]

    def bits(self, t):
        a = np.ascontiguousarray(t.to_numpy(), dtype=np.float64)
        return [list(a.shape), a.tobytes().hex()]

    def var(self, v, depth=0):
        if isinstance(v, Tensor):
            out = {"T": self.ref(v), "bits": self.bits(v), "version": v._version}
        else:
            out = {"S": self.ref(v), "data": v.data.hex()}
        out["uid"] = v.unique_id - self.uid0
        out["output_nr"] = v._output_nr
        out["grad"] = self.any(v.grad, depth + 1)
        fw = getattr(v, "_fw", None)
        out["fw"] = None if fw is None else [fw[0], self.any(fw[1], depth + 1)]
        out["history"] = self.history(v.history, depth + 1)
        return out

    def history(self, h, depth):
        if h is None:
            return None
        first = id(h) not in self.ids
        r = {"H": self.ref(h)}
        if not first or depth > 60:
            return r
        r["fields"] = list(vars(h))  # in the order they were set
        r["fn"] = None if h.last_fn is None else h.last_fn.name
        r["stamp"] = h.stamp - self.stamp0
        r["num_outputs"] = h.num_outputs
        r["output_meta"] = [
            None if m is None else [m[0].__name__, repr(m[1][0]) if isinstance(m[1], tuple) else repr(m[1])]
            for m in h.output_meta
        ]
        r["inputs"] = [self.any(x, depth + 1) for x in h.inputs]
        r["previous"] = None if h.previous is None else {str(k): self.any(v, depth + 1) for k, v in h.previous.items()}
        r["ctx"] = None if h.ctx is None else self.ctx(h.ctx, depth + 1)
        return r

    def ctx(self, ctx, depth):
        first = id(ctx) not in self.ids
        r = {"C": self.ref(ctx)}
        if first:
            r["attrs"] = [[k, self.any(v, depth + 1)] for k, v in vars(ctx).items()]
        return r

    def any(self, v, depth=0):
        if isinstance(v, Variable):
            if id(v) in self.ids:
                return {"V": self.ids[id(v)]}
            return self.var(v, depth)
        if isinstance(v, float):
            return ["f", v.hex()]
        if v is None or isinstance(v, (bool, int, str)):
            return v
        if isinstance(v, (tuple, list)):
            return [type(v).__name__] + [self.any(x, depth + 1) for x in v]
        if isinstance(v, dict):
            return ["dict"] + [[repr(k), self.any(x, depth + 1)] for k, x in v.items()]
        if isinstance(v, type):
            return ["type", v.__name__]
        if isinstance(v, np.ndarray):
            return ["nd", v.tobytes().hex()]
        if isinstance(v, History):
            return self.history(v, depth)
        return ["obj", type(v).__name__]


CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def t(values, requires_grad=False, backend=None):
    return torchlight.tensor(values, requires_grad=requires_grad, backend=backend)


# -- Scalars ----------------------------------------------------------------------------------------


@case
def scalar_graph(rec):
    x, y = Scalar(1.5), Scalar(-0.25)
    c = Scalar(2.0, history=None)
    z = ((x * y + x.sigmoid() * c) / (y.exp() + 1.0)).log() + x.relu() - 3.0
    z.backward()
    return [z, x, y, c]


@case
def scalar_no_grad_and_constants(rec):
    x = Scalar(0.5)
    with torchlight.no_grad():
        a = x * 3.0 + 1.0
    b = Scalar(2.0, history=None) * Scalar(4.0, history=None)
    return [a, b, torchlight.is_grad_enabled()]


# -- built-in tensor operations ------------------------------------------------------------------


@case
def tensor_builtin_ops(rec):
    x = t([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], requires_grad=True)
    w = t([0.3, -0.2, 0.9], requires_grad=True)
    y = (x * w + w).sigmoid()
    z = (y.exp() - x.relu()) / (w * w + 1.0)
    m = x @ t([[1.0], [2.0], [3.0]])
    loss = z.sum() + m.mean() + x.permute(1, 0).sum(0).log().sum()
    loss.backward()
    return [loss, x, w, y, z, m]


@case
def tensor_simple_backend(rec):
    x = t([1.0, 2.0, 3.0, 4.0], requires_grad=True, backend="simple")
    w = t([0.5, 0.25, -1.0, 2.0], backend="simple")
    y = x
    for i in range(12):
        y = y * w if i % 3 == 0 else (y + w if i % 3 == 1 else y.sigmoid())
    y.sum().backward()
    return [y, x, w]


@case
def tensor_chain_like_the_benchmark(rec):
    x = t([0.1, 0.2, 0.3, 0.4], requires_grad=True)
    w = t([0.9, 0.8, 0.7, 0.6])
    y = x
    for i in range(30):
        y = y * w if i % 3 == 0 else (y + w if i % 3 == 1 else y.sigmoid())
    y.sum().backward()
    return [y, x]


@case
def max_with_indices_is_non_differentiable(rec):
    x = t([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], requires_grad=True)
    values, indices = x.max(1)
    (values * 2.0).sum().backward()
    return [values, indices, x]


@case
def no_grad_and_enable_grad(rec):
    x = t([1.0, 2.0], requires_grad=True)
    with torchlight.no_grad():
        a = x * 2.0
        with torchlight.enable_grad():
            b = x * 3.0
        c = b + 1.0
    d = x * x
    return [a, b, c, d, torchlight.is_grad_enabled()]


@case
def double_backward(rec):
    x = t([0.5, -1.5, 2.0], requires_grad=True)
    y = (x * x * x).sigmoid().sum()
    (g,) = grad(y, x, create_graph=True)
    (gg,) = grad(g.sum(), x)
    return [y, g, gg, x]


@case
def inplace_builtin(rec):
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    a = x * 2.0
    b = a.sigmoid()
    a.mul_(3.0)
    c = a + b
    c.sum().backward()
    out = [a, b, c, x]
    y = t([1.0, 2.0], requires_grad=True)
    s = y.exp()  # saves its output
    s.add_(1.0)
    try:
        s.sum().backward()
    except Exception as e:
        out.append(f"{type(e).__name__}: {e}")
    return out


# -- custom Functions ---------------------------------------------------------------------------------


class MulAdd(Function):
    @staticmethod
    def forward(ctx, x, w, scale=1.0, *, shift=0.0):
        ctx.save_for_backward(x, w)
        ctx.scale = scale
        return x * w * scale + shift

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w * ctx.scale, g * x * ctx.scale, None


class Combined(Function):
    @staticmethod
    def forward(x, w, scale=2.0):
        return (x * w).exp() * scale

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, w, scale = inputs
        ctx.save_for_backward(x, w, output)

    @staticmethod
    def backward(ctx, g):
        x, w, out = ctx.saved_tensors
        return g * out * w, g * out * x, None


class Split(Function):
    """Several outputs, one of them unused; a plain number among them."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2.0, x.exp(), 7.5, None

    @staticmethod
    def backward(ctx, ga, gb, gc, gd):
        (x,) = ctx.saved_tensors
        return ga * 2.0 + gb * x.exp()


class Identity(Function):
    """Returns its input unchanged: the output must be a new node."""

    @staticmethod
    def forward(ctx, x, y):
        return x, y

    @staticmethod
    def backward(ctx, g1, g2):
        return g1, g2


class Scale_(Function):
    @staticmethod
    def forward(ctx, x, k):
        x._data.storage[:] *= k  # the raw in-place change, which mark_dirty declares
        ctx.mark_dirty(x)
        ctx.k = k
        return x

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None


class Bad(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g, g


class Boom(Function):
    @staticmethod
    def forward(ctx, x):
        raise ValueError(f"forward failed on {x.shape}")

    @staticmethod
    def backward(ctx, g):
        return g


class WithJvp(Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        ctx.save_for_forward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w, g * x

    @staticmethod
    def jvp(ctx, tx, tw):
        x, w = ctx.saved_tensors
        return (tx * w if tx is not None else None) if tw is None else tx * w + tw * x


class PlainNumbers(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a * b + 1.0, a - b

    @staticmethod
    def backward(ctx, g1, g2):
        return g1, g2


class ScalarSquare(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_values
        return 2.0 * x * g


@case
def custom_legacy(rec):
    x = t([1.0, -2.0, 0.5], requires_grad=True)
    w = t([0.5, 0.5, 2.0], requires_grad=True)
    y = MulAdd.apply(x, w, 3.0, shift=0.25)
    z = MulAdd.apply(y, w)
    z.sum().backward()
    return [y, z, x, w]


@case
def custom_combined(rec):
    x = t([1.0, -2.0, 0.5], requires_grad=True)
    w = t([0.5, 0.5, 2.0])
    y = Combined.apply(x, w)
    z = Combined.apply(y, w, scale=0.5)
    z.sum().backward()
    return [y, z, x, w]


@case
def several_outputs(rec):
    x = t([0.5, 1.5], requires_grad=True)
    a, b, c, d = Split.apply(x)
    a.sum().backward()
    return [a, b, c, d, x]


@case
def input_returned_unchanged(rec):
    x = t([1.0, 2.0], requires_grad=True)
    y = t([3.0])
    p, q = Identity.apply(x, y)
    (p * 2.0).sum().backward()
    return [p, q, x, y, p is x, q is y]


@case
def mark_dirty(rec):
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    a = x * 1.0
    b = a.exp()
    c = Scale_.apply(a, 4.0)
    (c.sum() + b.sum()).backward()
    out = [a, b, c, x, c is a]
    try:
        Scale_.apply(x, 2.0)  # a leaf that requires grad
    except Exception as e:
        out.append(f"{type(e).__name__}: {e}")
    return out


@case
def errors(rec):
    x = t([1.0, 2.0], requires_grad=True)
    out = []
    for fn in (lambda: Bad.apply(x).sum().backward(), lambda: Boom.apply(x), lambda: MulAdd.apply(x)):
        try:
            fn()
        except Exception as e:
            out.append(f"{type(e).__name__}: {e}")
    out.append(torchlight.is_grad_enabled())
    with torchlight.no_grad():
        try:
            Boom.apply(x)
        except Exception as e:
            out.append(f"{type(e).__name__}: {e}")
        out.append(torchlight.is_grad_enabled())
    with fwad.dual_level():
        try:
            Boom.apply(x)
        except Exception as e:
            out.append(f"{type(e).__name__}: {e}")
        out.append(torchlight.autograd.grad_mode._state.mode[:])
    out.append(torchlight.autograd.grad_mode._state.mode[:])
    try:
        t([1.0, 2.0]) * t([1.0, 2.0, 3.0])
    except Exception as e:
        out.append(f"{type(e).__name__}: {e}")
    return out


@case
def forward_mode(rec):
    x = t([1.0, 2.0, 3.0])
    w = t([0.5, -1.0, 2.0], requires_grad=True)
    out = []
    with fwad.dual_level():
        dx = fwad.make_dual(x, t([1.0, 0.0, 0.5]))
        y = WithJvp.apply(dx, w)
        z = (y * dx).sigmoid() + dx.exp()
        out += [y, z, fwad.unpack_dual(z).tangent]
        try:
            MulAdd.apply(dx, w)  # no jvp
        except Exception as e:
            out.append(f"{type(e).__name__}: {e}")
    z.sum().backward()
    out.append(w)
    return out


@case
def plain_values_only(rec):
    return [PlainNumbers.apply(3.0, 4.5), PlainNumbers.apply(2, 5)]


@case
def parameter_argument(rec):
    p = Parameter(t([1.0, 2.0]))
    x = t([3.0, 4.0], requires_grad=True)
    y = MulAdd.apply(p, x)
    y.sum().backward()
    return [y, p.value, x]


@case
def scalar_custom_function(rec):
    x = Scalar(3.0)
    y = ScalarSquare.apply(x)
    z = ScalarSquare.apply(y * 0.5)
    z.backward()
    return [y, z, x]


@case
def other_thread(rec):
    results = []

    def work():
        x = t([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward()
        results.append([y, x, torchlight.is_grad_enabled()])

    with torchlight.no_grad():
        th = threading.Thread(target=work)
        th.start()
        th.join()
        results.append(torchlight.is_grad_enabled())
    return results


def main():
    rec = Recorder()
    out = {"path": native.path(), "reason": native.reason(), "cases": {}}
    for fn in CASES:
        try:
            value = fn(rec)
            out["cases"][fn.__name__] = rec.any(value)
        except Exception as e:  # (compared by type and message; the traceback is for reading)
            out["cases"][fn.__name__] = ["battery error", f"{type(e).__name__}: {e}"]
            out.setdefault("tracebacks", {})[fn.__name__] = traceback.format_exc()
    out["stats"] = list(native.stats())
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
