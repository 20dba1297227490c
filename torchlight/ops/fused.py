"""Module 3 (speed): operations fused into one Function, where the composed version costs time.

Module 2 composes these of primitives: ``sub`` is add and neg, ``div`` is mul and inv, ``tanh``
is sigmoid scaled and shifted (``ops/elementwise.py``), and ``linear`` is ``x @ weight.T + bias``
(``nn/linear.py``). Each composed op runs several kernels forward and records several graph
nodes, each with its own backward; in a small network that per-operation overhead, not the
arithmetic, is most of the time. A fused op runs one kernel (``op.sub``) or fewer steps and records
one node: the same values and gradients, computed faster. Tensor's ``-``, ``/`` and ``tanh``
(``tensor_fused.py`` puts these in place of the composed ones) and ``nn.Linear`` use these;
tests/module3/test_fused.py holds each equal to its composed version.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Tuple

from .. import scalar as op
from ..autograd.function import Context, Function
from .elementwise import Grad, _Binary, _plus, _Unary, save

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["Div", "Linear", "Sub", "Tanh"]


class Sub(_Binary):
    """a - b in one kernel (composed: ``a + (-b)``, two)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        return a.backend.zip(op.sub)(a, b)

    @staticmethod
    def partial_a(ctx: Context, v: Tensor) -> Tensor:
        return v

    @staticmethod
    def partial_b(ctx: Context, v: Tensor) -> Tensor:
        return -v


class Div(_Binary):
    """a / b in one kernel (composed: ``a * inv(b)``, two)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        save(ctx, a, b)
        return a.backend.zip(op.div)(a, b)

    @staticmethod
    def partial_a(ctx: Context, v: Tensor) -> Tensor:
        a, b = ctx.saved_tensors
        return v / b

    @staticmethod
    def partial_b(ctx: Context, v: Tensor) -> Tensor:
        a, b = ctx.saved_tensors
        return -v * a / (b * b)


class Tanh(_Unary):
    """tanh(a) in one kernel (composed: ``2 * sigmoid(2a) - 1``, four)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        out = a.backend.map(op.tanh)(a)
        save(ctx, out)
        return out

    @staticmethod
    def derivative(ctx: Context, v: Tensor) -> Tensor:
        (t,) = ctx.saved_tensors
        return v * (1.0 - t * t)


class Linear(Function):
    """x @ weight.T + bias (bias may be None): the affine map that ``nn.Linear`` applies.

    Composed, it is a permute, a matmul and a broadcast add forward, and backward adds a
    transpose, a permute back, and a sum and a view for the bias: eight operations where this
    makes four (PyTorch has the same one, ``F.linear``). Its backward is still written in
    differentiable operations.
    """

    @staticmethod
    def forward(ctx: Context, x: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
        save(ctx, x, weight)
        # HINT: one backend matrix_multiply with weight's transposed view (a permuted TensorData),
        # HINT: then the bias added into the fresh result with the backend's zip (out=...).
        # BEGIN SOLUTION 3.6
        backend = x.backend
        out = backend.matrix_multiply(x, weight._new(weight._data.permute(1, 0)))
        if bias is not None:
            backend.zip(op.add)(out, bias, out=out)  # out is fresh: add the bias in place
        return out
        # END SOLUTION 3.6

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Grad, Grad, Grad]:
        x, weight = ctx.saved_tensors
        # HINT: each gradient only where ctx.needs_input_grad asks for it (one entry per argument
        # HINT: given: two when bias was left out); every leading dimension of x (none, or several)
        # HINT: is a batch dimension for the weight's and the bias's gradients.
        # BEGIN SOLUTION 3.6
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
        # END SOLUTION 3.6

    @staticmethod
    def jvp(ctx: Context, tx: Grad, tw: Grad, tb: Grad = None) -> Grad:
        x, weight = ctx.saved_tensors
        out = None if tx is None else tx @ weight.transpose(0, 1)
        out = _plus(out, None if tw is None else x @ tw.transpose(0, 1))
        return _plus(out, tb)
