"""Module 2: the matrix product, a Function over the backend's ``matrix_multiply`` primitive."""

from __future__ import annotations

from typing import TYPE_CHECKING, Tuple

from ..autograd.function import Context, Function
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

    @classmethod
    def backward(cls, ctx: Context, g: Tensor) -> Tuple[Grad, Grad]:
        needs = ctx.needs_input_grad  # (module 5) skip the product for an input that gets no gradient
        return (cls.grad_a(ctx, g) if needs[0] else None), (cls.grad_b(ctx, g) if needs[1] else None)

    @staticmethod
    def grad_a(ctx: Context, g: Tensor) -> Tensor:
        """The gradient for a: g @ b^T (in matrices; see ``_as_matrices`` for vectors)."""
        a, b = ctx.saved_tensors
        # BEGIN SOLUTION 2.5
        # HINT: in matrices, out = a @ b gives a the gradient g @ b^T (transpose(-1, -2)); a
        # vector a was a row: squeeze that row away again. Batch dims: the engine sums them.
        a2, b2, g2 = _as_matrices(a, b, g)
        ga = g2 @ b2.transpose(-1, -2)
        return ga.squeeze(-2) if a.dims == 1 else ga
        # END SOLUTION 2.5

    @staticmethod
    def grad_b(ctx: Context, g: Tensor) -> Tensor:
        """The gradient for b: a^T @ g (in matrices; see ``_as_matrices`` for vectors)."""
        a, b = ctx.saved_tensors
        # BEGIN SOLUTION 2.5
        a2, b2, g2 = _as_matrices(a, b, g)
        gb = a2.transpose(-1, -2) @ g2
        return gb.squeeze(-1) if b.dims == 1 else gb
        # END SOLUTION 2.5

    @staticmethod
    def jvp(ctx: Context, ta: Grad, tb: Grad) -> Grad:
        a, b = ctx.saved_tensors
        return _plus(None if ta is None else ta @ b, None if tb is None else a @ tb)


def _as_matrices(a: Tensor, b: Tensor, g: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """a, b and the gradient of a @ b as matrices: a vector a is a row (1, k), a vector b a column
    (k, 1), and g gets the dimensions of size 1 that the product of those would have."""
    a2 = a.unsqueeze(0) if a.dims == 1 else a
    b2 = b.unsqueeze(-1) if b.dims == 1 else b
    g2 = g.unsqueeze(-1) if b.dims == 1 else g
    g2 = g2.unsqueeze(-2) if a.dims == 1 else g2
    return a2, b2, g2
