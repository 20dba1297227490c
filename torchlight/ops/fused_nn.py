"""Module 4 (speed): max pooling of side-by-side windows and the cross-entropy, each one Function
over a kernel of the backend's own, where the backend has one (fast: ``backends/fast_nn.py``).

The course composes both (stages 4.3 and 4.4): max pooling is ``tile``'s views and copy, then
``max(-1)`` (``ops/pooling.py``); the cross-entropy is ``log_softmax``, then the negative
log-likelihood (``nn/functional.py``). That is a dozen generic kernels and graph nodes each way,
and on a LeNet's small tensors (windows of 4 values, rows of 10 scores) their calls, not their
arithmetic, are most of a training step (docs/performance.md). Here each is one Function whose
forward is one kernel, and whose backward is another:

- ``MaxPool2dBlocks``: the maximum of each kh x kw block and its position in the block; backward
  writes each gradient at its block's position (``WindowScatter``), whose own backward reads it
  back (``WindowGather``). Values, positions and gradients are those of the taught path, bit for
  bit: the kernel folds ``scalar.max`` over each block in tile's order, and the scatter multiplies
  the gradient by 1.0 and 0.0 as the taught backward multiplies it by a one-hot. Second-order and
  forward-mode derivatives gather where the taught path sums a product with the one-hot: the same
  values, except that the taught sum may turn a -0.0 into 0.0, and an infinity into nan.
- ``CrossEntropy``: each row's ``-sum(dist * log_softmax(x))``, reduced. The loss is the taught
  one bit for bit (the same steps in the same order, with the exp and log the fast backend's maps
  compile). Its gradient, ``(softmax(x) * sum(dist) - dist) * g`` (``CrossEntropyBack``), is
  computed by that formula, not through the taught graph's nodes: a different order of the same
  sums, so it agrees with the taught gradient to rounding, not to the bit.

``max_pool2d`` and ``cross_entropy_rows`` take the fused path where it applies (windows side by
side, without padding; scores (N, C) and a target without a gradient) and the backend has the
kernels; ``F.max_pool2d``, ``nn.MaxPool2d`` and ``F.cross_entropy`` call them. Everywhere else,
and on backends without the kernels (simple, cuda), the taught code runs.

In the student edition the fused path must not stand in for a stage's code: the taught functions
stay what stage 4.3's and 4.4's tests call (``ops.pooling.max_pool2d``, ``F.log_softmax``,
``F.nll_loss``), and before the fused path first runs, the taught version runs once on a tiny
input (``raise_if_stub``), so that a stage not yet written raises its "Task 4.N" message here too.
tests/module4/test_fused_pool.py and test_fused_loss.py compare both paths (higher orders:
tests/module5/test_fused_pool_loss_higher_order.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional, Set, Tuple

import numpy as np

from .. import scalar as op
from ..autograd.function import Context, Function
from . import pooling
from .conv import int_tuple
from .elementwise import Grad, _plus, save

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = [
    "CrossEntropy",
    "CrossEntropyBack",
    "MaxPool2dBlocks",
    "WindowGather",
    "WindowScatter",
    "cross_entropy_rows",
    "max_pool2d",
    "raise_if_stub",
]

_NO_MASK = np.zeros(1)  # the kernel's mask where there is none (it reads it only when masked)


# -- the student edition's stubs --------------------------------------------------------------

_taught_ran: Set[str] = set()


def raise_if_stub(name: str, taught: Callable[[], Any]) -> None:
    """Run ``taught()`` (the taught version on a tiny input) the first time the fused path ``name``
    is taken: in the student edition a stage not yet written then raises its own message, as it
    would without the fused path. Once it has run through, never again in this process."""
    if name not in _taught_ran:
        taught()
        _taught_ran.add(name)


def _tiny(array: Any) -> Tensor:
    """A small tensor on the simple backend, for the taught version's trial run."""
    from ..tensor import Tensor

    return Tensor.from_numpy(np.asarray(array, dtype=np.float64), "simple")


def _taught_max_pool() -> None:
    pooling.max_pool2d(_tiny(np.arange(4.0).reshape(1, 1, 2, 2)), 2)


def _kernel(backend: Any, name: str) -> Callable[..., Any]:
    """The backend's fused kernel ``name``, which the caller has found it has."""
    kernel = backend.fused_kernel(name)
    if kernel is None:
        raise RuntimeError(f"{name}: the '{backend.name}' backend has no such kernel (a fused Function ran without it)")
    return kernel


# -- max pooling of blocks --------------------------------------------------------------------


def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor:
    """The largest value of each kernel_size window of input (N, C, H, W) or (C, H, W), windows
    ``stride`` apart, as ``F.max_pool2d``: stage 4.3's ``ops.pooling.max_pool2d`` (the same
    results and errors), in one kernel where the windows lie side by side (stride = kernel size,
    no padding) and the backend has one. The gradient goes to the first maximum of each window.

    :param input: an image (N, C, H, W) or (C, H, W).
    :param kernel_size: the window's size: an int or a pair (height, width).
    :param stride: the step between windows: an int or a pair (default: the kernel size).
    :param padding: -inf added on each side (never the maximum): an int or a pair.
    :param dilation: only 1 (PyTorch's other values are not supported).
    :param ceil_mode: only False (not supported).
    :param return_indices: only False (not supported).
    """
    # the taught function's checks, in its order, so that a mistake gets the same error either way
    if int_tuple("max_pool2d", "dilation", dilation, 2) != (1, 1) or return_indices:
        return pooling.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)
    x, kernel, stride, padding = pooling._pool_arguments("max_pool2d", input, kernel_size, stride, padding, ceil_mode)
    if stride != kernel or padding != (0, 0) or x.backend.fused_kernel("max_pool2d_blocks_kernel") is None:
        return pooling.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)
    raise_if_stub("max_pool2d", _taught_max_pool)
    out = MaxPool2dBlocks.apply(x, kernel)
    return out if len(input.shape) == 4 else out.squeeze(0)


class MaxPool2dBlocks(Function):
    """The maximum of each kh x kw block of x (N, C, H, W), blocks side by side: (N, C, H // kh,
    W // kw); rows and columns past the last whole block are left out. The gradient goes to each
    block's first maximum."""

    @staticmethod
    def forward(ctx: Context, x: Tensor, kernel: Tuple[int, int]) -> Tensor:
        backend = x.backend
        kh, kw = kernel
        n, c, h, w = x.shape
        out, pos = backend.empty((n, c, h // kh, w // kw)), backend.empty((n, c, h // kh, w // kw))
        _kernel(backend, "max_pool2d_blocks_kernel")(
            *out.kernel_args(), pos.kernel_args()[0], *x._data.kernel_args(), kh, kw
        )
        ctx.pos, ctx.kernel, ctx.shape = pos, kernel, x.shape
        return x._new(out)

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Tensor, None]:
        return WindowScatter.apply(g, ctx.pos, ctx.kernel, ctx.shape), None

    @staticmethod
    def jvp(ctx: Context, t: Tensor, t_kernel: None = None) -> Tensor:
        return WindowGather.apply(t, ctx.pos, ctx.kernel)


class WindowScatter(Function):
    """g (N, C, H // kh, W // kw) written into zeros of ``shape`` (N, C, H, W), each value at its
    block's position ``pos`` (the max pool's positions); linear, the adjoint of WindowGather."""

    @staticmethod
    def forward(ctx: Context, g: Tensor, pos: Any, kernel: Tuple[int, int], shape: Tuple[int, ...]) -> Tensor:
        backend = g.backend
        out = backend.zeros(shape)
        _kernel(backend, "window_scatter_kernel")(
            *out.kernel_args(), *g._data.kernel_args(), pos.kernel_args()[0], *kernel
        )
        ctx.args = (pos, kernel, shape)
        return g._new(out)

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Tensor, None, None, None]:
        return WindowGather.apply(g, *ctx.args[:2]), None, None, None

    @staticmethod
    def jvp(ctx: Context, t: Tensor, *non_tensors: None) -> Tensor:
        return WindowScatter.apply(t, *ctx.args)


class WindowGather(Function):
    """t (N, C, H, W) read at each block's position ``pos``: (N, C, H // kh, W // kw); linear, the
    adjoint of WindowScatter."""

    @staticmethod
    def forward(ctx: Context, t: Tensor, pos: Any, kernel: Tuple[int, int]) -> Tensor:
        backend = t.backend
        out = backend.empty(pos.shape)
        _kernel(backend, "window_gather_kernel")(
            *out.kernel_args(), *t._data.kernel_args(), pos.kernel_args()[0], *kernel
        )
        ctx.args, ctx.shape = (pos, kernel), t.shape
        return t._new(out)

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Tensor, None, None]:
        return WindowScatter.apply(g, *ctx.args, ctx.shape), None, None

    @staticmethod
    def jvp(ctx: Context, t: Tensor, *non_tensors: None) -> Tensor:
        return WindowGather.apply(t, *ctx.args)


# -- the cross-entropy of rows ----------------------------------------------------------------


def cross_entropy_rows(
    input: Tensor, dist: Tensor, support: Optional[np.ndarray], reduction: str, total: float
) -> Optional[Tensor]:
    """The taught cross-entropy's last step, ``_nll(_on_support(log_softmax(input, 1), support),
    dist, 1, reduction, total)``, as one Function, for scores (N, C) on a backend with the kernels
    and a target without a gradient; None where that does not apply (the caller then runs the
    taught code). ``support`` is where the target puts weight (None: everywhere)."""
    backend = input.backend
    if (
        input.dims != 2
        or backend.fused_kernel("cross_entropy_kernel") is None
        or dist.backend is not backend
        or dist.shape != input.shape
        or dist.requires_grad
    ):
        return None
    mask = None if support is None or support.all() else support
    return CrossEntropy.apply(input, dist, mask, reduction, total)


class CrossEntropy(Function):
    """``-sum(dist * log_softmax(x, 1), 1)`` for x (N, C) and a constant dist (N, C), reduced as
    ``reduction`` says ("none", "sum", or "mean": the sum divided by ``total``). Where ``mask``
    (a bool array of x's shape) is False the log-probability counts as 0, whatever it is."""

    @staticmethod
    def forward(
        ctx: Context, x: Tensor, dist: Tensor, mask: Optional[np.ndarray], reduction: str, total: float
    ) -> Tensor:
        backend = x.backend
        losses = backend.empty((x.shape[0],))
        flags = _NO_MASK if mask is None else np.ascontiguousarray(mask, dtype=np.float64).reshape(-1)
        summed = _kernel(backend, "cross_entropy_kernel")(
            losses.kernel_args()[0], *x._data.kernel_args(), *dist._data.kernel_args(), flags, mask is not None
        )
        save(ctx, x, dist)
        ctx.reduction, ctx.total = reduction, total
        if reduction == "none":
            return x._new(losses)
        # the taught losses.sum(), then / total as Div does it (scalar.div)
        return x._new(backend.filled((), summed if reduction == "sum" else op.div(summed, total)))

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Grad, None, None, None, None]:
        if not ctx.needs_input_grad[0]:
            return None, None, None, None, None
        x, dist = ctx.saved_tensors
        divisor = ctx.total if ctx.reduction == "mean" else 1.0
        return CrossEntropyBack.apply(x, g, dist, divisor), None, None, None, None

    @staticmethod
    def jvp(ctx: Context, tx: Grad, *rest: Any) -> Grad:
        if tx is None:
            return None
        x, dist = ctx.saved_tensors
        per_row = (CrossEntropyBack.apply(x, x._constant(1.0), dist, 1.0) * tx).sum(1)
        if ctx.reduction == "none":
            return per_row
        return per_row.sum() if ctx.reduction == "sum" else per_row.sum() / ctx.total


class CrossEntropyBack(Function):
    """``(softmax(x, 1) * sum(dist, 1) - dist) * (scale / divisor)``, the gradient of the rows'
    cross-entropies: x and dist (N, C), scale (N,) or () (one for every row), divisor a number (the
    mean's total weight, or 1). Differentiable in x and scale."""

    @staticmethod
    def forward(ctx: Context, x: Tensor, scale: Tensor, dist: Tensor, divisor: float) -> Tensor:
        backend = x.backend
        out = backend.empty(x.shape)
        s = scale._data if scale.dims == 1 else scale._data.expand(x.shape[0])
        _kernel(backend, "cross_entropy_back_kernel")(
            out.kernel_args()[0], *x._data.kernel_args(), *dist._data.kernel_args(), *s.kernel_args()[::2], divisor
        )
        save(ctx, x, scale, dist)
        ctx.divisor = divisor
        return x._new(out)

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Grad, Grad, None, None]:
        x, scale, dist = ctx.saved_tensors
        needs = ctx.needs_input_grad
        p, weight = _softmax_rows(x), dist.sum(1, keepdim=True) / ctx.divisor
        gx = gs = None
        if needs[0]:  # d/dx of softmax(x) * (weight * scale) against g
            u = g * (weight * _per_row(scale))
            gx = p * (u - (u * p).sum(1, keepdim=True))
        if needs[1]:  # the engine sums it down to () where one scale served every row
            gs = (g * (p * weight - dist / ctx.divisor)).sum(1)
        return gx, gs, None, None

    @staticmethod
    def jvp(ctx: Context, tx: Grad, ts: Grad, *non_tensors: Any) -> Grad:
        x, scale, dist = ctx.saved_tensors
        p, weight = _softmax_rows(x), dist.sum(1, keepdim=True) / ctx.divisor
        out = None
        if tx is not None:
            out = (weight * _per_row(scale)) * p * (tx - (p * tx).sum(1, keepdim=True))
        if ts is not None:
            out = _plus(out, (p * weight - dist / ctx.divisor) * _per_row(ts))
        return out


def _softmax_rows(x: Tensor) -> Tensor:
    """softmax(x, 1), composed (differentiable to any order)."""
    e = (x - x.detach().max(1, keepdim=True).values).exp()
    return e / e.sum(1, keepdim=True)


def _per_row(s: Tensor) -> Tensor:
    """A scale of shape (N,) as a column (N, 1); one of shape () as it is: either broadcasts over rows."""
    return s.unsqueeze(1) if s.dims == 1 else s
