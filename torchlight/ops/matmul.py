"""Module 2: the matrix product, a Function over the backend's ``matrix_multiply`` primitive."""

from __future__ import annotations

from typing import TYPE_CHECKING, Tuple

from ..autograd.function_api import Context, Function
from .elementwise import Grad, _plus, save

if TYPE_CHECKING:
    from ..tensor import Tensor

__all__ = ["MatMul"]


class MatMul(Function):
    """a @ b with numpy's rules (1-D operands are vectors; batch dimensions broadcast)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        save(ctx, a, b)
        return a.backend.matrix_multiply(a, b)

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> Tuple[Grad, Grad]:
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
    def jvp(ctx: Context, ta: Grad, tb: Grad) -> Grad:
        a, b = ctx.saved_tensors
        return _plus(None if ta is None else ta @ b, None if tb is None else a @ tb)
