"""Modules 2 and 5: the tensor operations, each a Function with a short forward and backward.

A forward runs with recording switched off, on tensors, through the backend's primitives
(``a.backend.zip(op.mul)(a, b)``) or through tensor methods (which record nothing there). A
backward is written in tensor operations, so that with ``create_graph=True`` a graph is built
through it and higher-order gradients work.

Broadcasting needs no code here: a backward returns the gradient in the output's shape and the
engine sums it down to each input's shape (``Tensor._match_grad``, the one place that does it).

Each op has a ``jvp`` too (forward-mode AD, module 5): tangents of the inputs in, tangents of the
outputs out, None for an input without one. A tangent may have any shape that broadcasts to
its output's; the engine expands it (``Tensor._match_tangent``).
"""

import math

import numpy as np

from .. import scalar as op
from ..tensor_data import IndexingError, TensorData, normalize_dim
from .function import Function, once_differentiable


def _plus(x, y):
    """x + y, where None (no tangent) counts as zero."""
    if x is None:
        return y
    if y is None:
        return x
    return x + y

# -- elementwise arithmetic ---------------------------------------------------------------


class Neg(Function):
    @staticmethod
    def forward(ctx, a):
        return a.backend.map(op.neg)(a)

    @staticmethod
    def backward(ctx, g):
        return -g

    @staticmethod
    def jvp(ctx, t):
        return -t


class Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a.backend.zip(op.add)(a, b)

    @staticmethod
    def backward(ctx, g):
        return g, g

    @staticmethod
    def jvp(ctx, ta, tb):
        return _plus(ta, tb)


class Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a.backend.zip(op.sub)(a, b)

    @staticmethod
    def backward(ctx, g):
        return g, (-g if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, ta, tb):
        return _plus(ta, None if tb is None else -tb)


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        ctx.save_for_forward(a, b)
        return a.backend.zip(op.mul)(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return (g * b if ctx.needs_input_grad[0] else None), (g * a if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.saved_tensors
        return _plus(None if ta is None else ta * b, None if tb is None else a * tb)


class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        ctx.save_for_forward(a, b)
        return a.backend.zip(op.div)(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ga = g / b if ctx.needs_input_grad[0] else None
        gb = -g * a / (b * b) if ctx.needs_input_grad[1] else None
        return ga, gb

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.saved_tensors
        return _plus(None if ta is None else ta / b, None if tb is None else -tb * a / (b * b))


class Pow(Function):
    """a ** b, elementwise (b is usually a constant, e.g. 2.0)."""

    @staticmethod
    def forward(ctx, a, b):
        out = a.backend.zip(op.pow)(a, b)
        ctx.save_for_backward(a, b, out)
        ctx.save_for_forward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, out = ctx.saved_tensors
        ga = g * b * a ** (b - 1.0) if ctx.needs_input_grad[0] else None
        # d/db a**b = a**b * log(a)
        gb = g * out * a.log() if ctx.needs_input_grad[1] else None
        return ga, gb

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b, out = ctx.saved_tensors
        return _plus(None if ta is None else ta * b * a ** (b - 1.0), None if tb is None else tb * out * a.log())


class Inv(Function):
    """1 / a"""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        ctx.save_for_forward(a)
        return a.backend.map(op.inv)(a)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return InvBack.apply(a, g)

    @staticmethod
    def jvp(ctx, t):
        (a,) = ctx.saved_tensors
        return InvBack.apply(a, t)


class InvBack(Function):
    """g * d/da (1/a) = -g / a**2: Inv's backward, a Function itself so that it has a derivative."""

    @staticmethod
    def forward(ctx, a, g):
        ctx.save_for_backward(a, g)
        ctx.save_for_forward(a, g)
        return a.backend.zip(op.inv_back)(a, g)

    @staticmethod
    def backward(ctx, gg):
        a, g = ctx.saved_tensors
        ga = gg * g * 2.0 / (a * a * a) if ctx.needs_input_grad[0] else None
        return ga, (InvBack.apply(a, gg) if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, ta, tg):
        a, g = ctx.saved_tensors
        return _plus(None if ta is None else ta * g * 2.0 / (a * a * a), None if tg is None else InvBack.apply(a, tg))


class Log(Function):
    """Natural log (-inf at 0, nan below, as PyTorch)."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        ctx.save_for_forward(a)
        return a.backend.map(op.log)(a)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return LogBack.apply(a, g)

    @staticmethod
    def jvp(ctx, t):
        (a,) = ctx.saved_tensors
        return LogBack.apply(a, t)


class LogBack(Function):
    """g * d/da log(a) = g / a: Log's backward, differentiable in turn."""

    @staticmethod
    def forward(ctx, a, g):
        ctx.save_for_backward(a, g)
        ctx.save_for_forward(a, g)
        return a.backend.zip(op.log_back)(a, g)

    @staticmethod
    def backward(ctx, gg):
        a, g = ctx.saved_tensors
        ga = -gg * g / (a * a) if ctx.needs_input_grad[0] else None
        return ga, (LogBack.apply(a, gg) if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, ta, tg):
        a, g = ctx.saved_tensors
        return _plus(None if ta is None else -ta * g / (a * a), None if tg is None else LogBack.apply(a, tg))


class Exp(Function):
    @staticmethod
    def forward(ctx, a):
        out = a.backend.map(op.exp)(a)
        ctx.save_for_backward(out)
        ctx.save_for_forward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out

    @staticmethod
    def jvp(ctx, t):
        (out,) = ctx.saved_tensors
        return t * out


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, a):
        out = a.backend.map(op.sigmoid)(a)
        ctx.save_for_backward(out)
        ctx.save_for_forward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (s,) = ctx.saved_tensors
        return g * s * (1.0 - s)

    @staticmethod
    def jvp(ctx, t):
        (s,) = ctx.saved_tensors
        return t * s * (1.0 - s)


class Tanh(Function):
    @staticmethod
    def forward(ctx, a):
        out = a.backend.map(op.tanh)(a)
        ctx.save_for_backward(out)
        ctx.save_for_forward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (t,) = ctx.saved_tensors
        return g * (1.0 - t * t)

    @staticmethod
    def jvp(ctx, ta):
        (t,) = ctx.saved_tensors
        return ta * (1.0 - t * t)


class ReLU(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        ctx.save_for_forward(a)
        return a.backend.map(op.relu)(a)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return ReluBack.apply(a, g)

    @staticmethod
    def jvp(ctx, t):
        (a,) = ctx.saved_tensors
        return ReluBack.apply(a, t)


class ReluBack(Function):
    """g where a > 0, else 0: ReLU's backward. Its derivative in a is 0 (almost everywhere)."""

    @staticmethod
    def forward(ctx, a, g):
        ctx.save_for_backward(a)
        ctx.save_for_forward(a)
        return a.backend.zip(op.relu_back)(a, g)

    @staticmethod
    def backward(ctx, gg):
        (a,) = ctx.saved_tensors
        return None, (ReluBack.apply(a, gg) if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, ta, tg):
        (a,) = ctx.saved_tensors
        return None if tg is None else ReluBack.apply(a, tg)  # ta moves nothing: the slope in a is 0


class Sqrt(Function):
    @staticmethod
    def forward(ctx, a):
        out = a.backend.map(op.sqrt)(a)
        ctx.save_for_backward(out)
        ctx.save_for_forward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g / (out * 2.0)

    @staticmethod
    def jvp(ctx, t):
        (out,) = ctx.saved_tensors
        return t / (out * 2.0)


class Abs(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        ctx.save_for_forward(a)
        return a.backend.map(op.abs)(a)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * a.backend.map(op.sign)(a)  # sign(a) is a constant: its own derivative is 0

    @staticmethod
    def jvp(ctx, t):
        (a,) = ctx.saved_tensors
        return t * a.backend.map(op.sign)(a)


class Map(Function):
    """Any scalar function ``fn``, elementwise, given ``fn_back(x, d) = d * fn'(x)`` (first order only).

    ``Map.apply(x, torchlight.scalar.sigmoid, my_sigmoid_back)``. The derivative is computed by a
    backend primitive, not by tensor operations, so it cannot be differentiated again: a double
    backward through Map raises.
    """

    @staticmethod
    def forward(ctx, a, fn, fn_back=None):
        ctx.save_for_backward(a)
        ctx.save_for_forward(a)
        ctx.fn_back = fn_back
        return a.backend.map(fn)(a)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        if ctx.fn_back is None:
            raise RuntimeError("Map.apply(x, fn) was given no fn_back(x, d), so it cannot be differentiated")
        return a.backend.zip(ctx.fn_back)(a, g), None, None

    @staticmethod
    def jvp(ctx, t, t_fn=None, t_fn_back=None):
        (a,) = ctx.saved_tensors
        if ctx.fn_back is None:
            raise RuntimeError("Map.apply(x, fn) was given no fn_back(x, d), so it has no derivative")
        return a.backend.zip(ctx.fn_back)(a, t)  # fn'(a) * t, computed without a graph, as backward


# -- comparisons: no gradient ---------------------------------------------------------------


class _Compare(Function):
    """Elementwise 1.0 / 0.0; the result does not require grad (as in PyTorch)."""

    fn = None

    @classmethod
    def forward(cls, ctx, a, b):
        out = a.backend.zip(cls.fn)(a, b)
        ctx.mark_non_differentiable(out)
        return out

    @staticmethod
    def backward(ctx, g):
        return None, None

    @staticmethod
    def jvp(ctx, ta, tb):
        return None


class LT(_Compare):
    fn = staticmethod(op.lt)


class GT(_Compare):
    fn = staticmethod(op.gt)


class EQ(_Compare):
    fn = staticmethod(op.eq)


class IsClose(_Compare):
    fn = staticmethod(op.is_close)


# -- matrix multiply ------------------------------------------------------------------------


class MatMul(Function):
    """a @ b with numpy's rules (1-D operands are vectors; batch dimensions broadcast)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        ctx.save_for_forward(a, b)
        return a.backend.matrix_multiply(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        # Work with matrices: a vector a is a row (1, k), a vector b a column (k, 1).
        a2 = a.unsqueeze(0) if a.dims == 1 else a
        b2 = b.unsqueeze(-1) if b.dims == 1 else b
        g2 = g.unsqueeze(-1) if b.dims == 1 else g
        g2 = g2.unsqueeze(-2) if a.dims == 1 else g2
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = g2 @ b2.transpose(-1, -2)
            ga = ga.squeeze(-2) if a.dims == 1 else ga  # broadcast batch dims are summed by the engine
        if ctx.needs_input_grad[1]:
            gb = a2.transpose(-1, -2) @ g2
            gb = gb.squeeze(-1) if b.dims == 1 else gb
        return ga, gb

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.saved_tensors
        return _plus(None if ta is None else ta @ b, None if tb is None else a @ tb)


class Linear(Function):
    """x @ weight.T + bias (bias may be None): the affine map that ``nn.Linear`` applies.

    Composed, it is a permute, a matmul and a broadcast add forward, and backward adds a
    transpose, a permute back, and a sum and a view for the bias: eight operations where this
    makes four. In a small network per-operation overhead dominates, so this is a primitive for
    speed's sake (PyTorch has the same one, ``F.linear``); its backward is still written in
    differentiable operations.
    """

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight)
        ctx.save_for_forward(x, weight)
        backend = x.backend
        out = backend.matrix_multiply(x, type(weight)(weight._data.permute(1, 0), weight.backend))
        if bias is not None:
            backend.zip(op.add)(out, bias, out=out)  # out is fresh: add the bias in place
        return out

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.saved_tensors
        needs = ctx.needs_input_grad
        gx = gw = gb = None
        if needs[0]:
            gx = g @ weight
        # Every leading dimension of x (none, or several) is a batch dimension: flatten them to one.
        g2 = g if g.dims == 2 else g.reshape(-1, weight.shape[0])
        if needs[1]:
            x2 = x if x.dims == 2 else x.reshape(-1, weight.shape[1])
            gw = g2.transpose(0, 1) @ x2
        if len(needs) > 2 and needs[2]:
            gb = g2.sum(0)
        return gx, gw, gb

    @staticmethod
    def jvp(ctx, tx, tw, tb=None):
        x, weight = ctx.saved_tensors
        out = None if tx is None else tx @ weight.transpose(0, 1)
        out = _plus(out, None if tw is None else x @ tw.transpose(0, 1))
        return _plus(out, tb)


# -- reductions ----------------------------------------------------------------------------


def _reduce_all(backend, a, fn, start):
    """Reduce every dimension of a with fn: a 0-d tensor."""
    data = a._data
    if data.is_contiguous():  # one pass over the flat storage
        flat = type(a)(data.view(data.size), backend)
        return type(a)(backend.reduce(fn, start)(flat, 0)._data.view(()), backend)
    for d in range(data.dims):
        a = backend.reduce(fn, start)(a, d)
    return type(a)(a._data.view(()), backend)


class Sum(Function):
    """The sum over ``dims`` (a tuple of dimensions), dropping them unless ``keepdim``."""

    @staticmethod
    def forward(ctx, a, dims, keepdim=False):
        ctx.shape, ctx.dims, ctx.keepdim = a.shape, dims, keepdim
        backend = a.backend
        if len(dims) == a.dims and a.dims > 0:
            out = _reduce_all(backend, a, op.add, 0.0)
        else:
            out = a
            for d in dims:
                out = backend.reduce(op.add, 0.0)(out, d)
            if out is a:
                return a
        return type(a)(out._data.view(_reduced_shape(a.shape, dims, keepdim)), backend)

    @staticmethod
    def backward(ctx, g):
        if not ctx.keepdim:
            for d in ctx.dims:
                g = g.unsqueeze(d)
        return g.expand(ctx.shape), None, None

    @staticmethod
    def jvp(ctx, t, t_dims=None, t_keepdim=None):
        return Sum.apply(t, ctx.dims, ctx.keepdim)


def _reduced_shape(shape, dims, keepdim):
    if keepdim:
        return tuple(1 if d in dims else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in dims)


def _arange_along(like, dim):
    """A constant tensor 0, 1, ..., n-1 laid along dimension ``dim`` (size 1 elsewhere)."""
    n = like.shape[dim]
    shape = [1] * like.dims
    shape[dim] = n
    return type(like)(TensorData(np.arange(n, dtype=np.float64), shape), like.backend)


class Max(Function):
    """The maximum over all elements (``dim=None``: a 0-d tensor), or over ``dim``: (values, indices).

    Indices are the first position of the maximum and have no gradient. The gradient goes to
    that position; with ``dim=None`` it is shared evenly among ties, as in PyTorch.
    """

    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False):
        ctx.set_materialize_grads(False)
        backend = a.backend
        if dim is None:
            out = _reduce_all(backend, a, op.max, -math.inf)
            ctx.mask = a == out
            return out
        dim = normalize_dim(dim, a.dims)
        values = backend.reduce(op.max, -math.inf)(a, dim)
        # The first index where a equals the maximum: the smallest of (position where equal, else
        # position + n), found as -max(-candidates).
        positions = _arange_along(a, dim)
        candidates = positions + (1.0 - (a == values)) * float(a.shape[dim])
        indices = -backend.reduce(op.max, -math.inf)(-candidates, dim)
        ctx.one_hot = positions == indices
        ctx.dim, ctx.keepdim = dim, keepdim
        if not keepdim:
            values = type(a)(values._data.squeeze(dim), backend)
            indices = type(a)(indices._data.squeeze(dim), backend)
        ctx.mark_non_differentiable(indices)
        return values, indices

    @staticmethod
    def backward(ctx, g, g_indices=None):
        if g is None:
            return None, None, None
        if hasattr(ctx, "mask"):
            return g * ctx.mask / ctx.mask.sum(), None, None
        if not ctx.keepdim:
            g = g.unsqueeze(ctx.dim)
        return g * ctx.one_hot, None, None

    @staticmethod
    def jvp(ctx, t, t_dim=None, t_keepdim=None):
        if hasattr(ctx, "mask"):  # the mean of the tangents at the maxima, as backward shares among ties
            return (t * ctx.mask).sum() / ctx.mask.sum()
        return (t * ctx.one_hot).sum(ctx.dim, ctx.keepdim), None


# -- movement: views that share storage, and copies -------------------------------------------


class View(Function):
    """The same elements with a new shape (the input must be contiguous)."""

    returns_view = True

    @staticmethod
    def forward(ctx, a, shape):
        ctx.shape, ctx.new_shape = a.shape, shape
        return type(a)(a._data.view(shape), a.backend)

    @staticmethod
    def backward(ctx, g):
        return g.contiguous().view(ctx.shape), None

    @staticmethod
    def jvp(ctx, t, t_shape=None):
        return View.apply(t.contiguous(), ctx.new_shape)


class Permute(Function):
    returns_view = True

    @staticmethod
    def forward(ctx, a, order):
        data = a._data.permute(*order)
        ctx.order = tuple(normalize_dim(d, a.dims) for d in order)
        return type(a)(data, a.backend)

    @staticmethod
    def backward(ctx, g):
        inverse = [0] * len(ctx.order)
        for i, d in enumerate(ctx.order):
            inverse[d] = i
        return g.permute(*inverse), None

    @staticmethod
    def jvp(ctx, t, t_order=None):
        return t.permute(*ctx.order)


class BroadcastView(Function):
    """a broadcast to ``shape`` without copying (stride 0 along repeated dimensions)."""

    returns_view = True

    @staticmethod
    def forward(ctx, a, shape):
        return type(a)(a._data.expand(shape), a.backend)

    @staticmethod
    def backward(ctx, g):
        return g, None  # the engine sums g down to a's shape

    @staticmethod
    def jvp(ctx, t, t_shape=None):
        return t  # the engine expands t to the output's shape


class Unsqueeze(Function):
    returns_view = True

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = normalize_dim(dim, a.dims + 1)
        return type(a)(a._data.unsqueeze(dim), a.backend)

    @staticmethod
    def backward(ctx, g):
        return Squeeze.apply(g, ctx.dim), None

    @staticmethod
    def jvp(ctx, t, t_dim=None):
        return Unsqueeze.apply(t, ctx.dim)


class Squeeze(Function):
    returns_view = True

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = normalize_dim(dim, a.dims)
        return type(a)(a._data.squeeze(dim), a.backend)

    @staticmethod
    def backward(ctx, g):
        return Unsqueeze.apply(g, ctx.dim), None

    @staticmethod
    def jvp(ctx, t, t_dim=None):
        return Squeeze.apply(t, ctx.dim)


class Index(Function):
    """``a[key]`` for integers, slices, ``None`` and ``...``: a view of a."""

    returns_view = True

    @staticmethod
    def forward(ctx, a, key):
        ctx.shape = a.shape
        ctx.key = key
        return type(a)(a._data.getitem(key), a.backend)

    @staticmethod
    def backward(ctx, g):
        return IndexBack.apply(g, ctx.shape, ctx.key), None

    @staticmethod
    def jvp(ctx, t, t_key=None):
        return Index.apply(t, ctx.key)


class IndexBack(Function):
    """Zeros of ``shape`` with g written into ``[key]``: Index's backward, differentiable in turn."""

    @staticmethod
    def forward(ctx, g, shape, key):
        ctx.shape, ctx.key = shape, key
        out = type(g)(TensorData.zeros(shape), g.backend)
        window = type(g)(out._data.getitem(key), g.backend)
        g.backend.map(op.id)(g, out=window)
        return out

    @staticmethod
    def backward(ctx, gg):
        return Index.apply(gg, ctx.key), None, None

    @staticmethod
    def jvp(ctx, t, t_shape=None, t_key=None):
        return IndexBack.apply(t, ctx.shape, ctx.key)


class Copy(Function):
    """A contiguous copy in new storage (``clone``, ``contiguous``)."""

    @staticmethod
    def forward(ctx, a):
        return a.backend.map(op.id)(a)

    @staticmethod
    def backward(ctx, g):
        return g

    @staticmethod
    def jvp(ctx, t):
        return t


class To(Function):
    """The same values on another backend; the gradient goes back to the original one."""

    @staticmethod
    def forward(ctx, a, backend):
        ctx.source, ctx.target = a.backend, backend
        return type(a)(a._data.contiguous(), backend)

    @staticmethod
    def backward(ctx, g):
        return g.to(ctx.source), None

    @staticmethod
    def jvp(ctx, t, t_backend=None):
        return t.to(ctx.target)


class Gather(Function):
    """``out[i][j][k] = a[i][index[i][j][k]][k]`` for dim 1 (likewise for other dims), as PyTorch.

    Built from primitives: a one-hot encoding of ``index`` along a new last dimension, multiplied
    with a and summed. Its backward scatters the gradient back through the same one-hot.
    """

    @staticmethod
    def forward(ctx, a, dim, index):
        dim = normalize_dim(dim, a.dims)
        _check_gather(a, dim, index)
        n = a.dims
        # a restricted to index's size in every other dimension, its dim moved last: [..., 1, C]
        key = tuple(slice(0, index.shape[d]) if d != dim else slice(None) for d in range(n))
        order = [d for d in range(n) if d != dim] + [dim]
        moved = a[key].permute(*order).unsqueeze(dim)
        one_hot = index.unsqueeze(-1) == _arange_along(a, dim).view(a.shape[dim])  # index.shape + (C,)
        ctx.one_hot, ctx.dim, ctx.key, ctx.shape = one_hot, dim, key, a.shape
        ctx.index = index
        return (moved * one_hot).sum(-1)

    @staticmethod
    def backward(ctx, g):
        dim, n = ctx.dim, len(ctx.shape)
        spread = (g.unsqueeze(-1) * ctx.one_hot).sum(dim)  # index's other dims..., C
        back = list(range(n - 1))
        back.insert(dim, n - 1)
        grad = spread.permute(*back)
        if grad.shape != ctx.shape:  # index was smaller than a in some other dimension
            grad = IndexBack.apply(grad, ctx.shape, ctx.key)
        return grad, None, None

    @staticmethod
    def jvp(ctx, t, t_dim=None, t_index=None):
        return Gather.apply(t, ctx.dim, ctx.index)


def _check_gather(a, dim, index):
    if not hasattr(index, "_data"):
        raise TypeError(f"gather(): index must be a Tensor of indices, got {type(index).__name__}")
    if index.dims != a.dims:
        raise RuntimeError(
            f"Index tensor must have the same number of dimensions as input tensor (index shape "
            f"{index.shape}, input shape {a.shape})"
        )
    for d in range(a.dims):
        if d != dim and index.shape[d] > a.shape[d]:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {list(index.shape)} to be smaller "
                f"than self {list(a.shape)} apart from dimension {dim}"
            )
    values = index.to_numpy()
    if values.size:
        if np.any(values != np.round(values)):
            raise RuntimeError("gather(): index must hold whole numbers (positions along dim)")
        bad = values[(values < 0) | (values >= a.shape[dim])]
        if bad.size:
            raise IndexingError(f"index {int(bad[0])} is out of bounds for dimension {dim} with size {a.shape[dim]}")
