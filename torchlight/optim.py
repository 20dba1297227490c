"""Modules 1 and 2: optimizers, which move Parameters against their gradients.

Module 1 trains a network of Scalars with SGD, module 2 one of Tensors, with the same code. As in
PyTorch, a step changes each parameter's value in place (outside the graph, under ``no_grad``):
the model keeps the very same Scalar and Tensor objects, and their ``.grad`` stays until
``zero_grad()`` clears it. A training loop therefore calls ``zero_grad()`` before each
``backward()``; without it, the new gradients are added to the old ones.
"""

from typing import Any, Iterable, List

from .autograd.grad_mode import no_grad
from .nn.module import Parameter


class SGD:
    """Stochastic gradient descent with momentum, as ``torch.optim.SGD``.

    velocity = momentum * velocity + grad;  value = value - lr * velocity
    """

    def __init__(self, params: Iterable[Parameter], lr: float, momentum: float = 0.0):
        if lr <= 0.0:
            raise ValueError(f"SGD needs a positive learning rate, got lr={lr}")
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"SGD needs 0 <= momentum < 1, got momentum={momentum}")
        self.params: List[Parameter] = list(params)
        if not self.params:
            raise ValueError("SGD got an empty parameter list; pass model.parameters()")
        self.lr, self.momentum = lr, momentum
        self.velocity: List[Any] = [None] * len(self.params)

    def zero_grad(self) -> None:
        """Forget every parameter's gradient (``.grad = None``) before the next backward."""
        for p in self.params:
            value: Any = p.value  # a Scalar or a Tensor
            value.grad = None

    def step(self) -> None:
        """Move each parameter's value against its gradient, in place; ``.grad`` is left as it is."""
        with no_grad():
            for i, p in enumerate(self.params):
                value: Any = p.value  # a Scalar or a Tensor
                grad = value.grad
                if grad is None:
                    continue  # not used by this loss
                v = self.velocity[i]
                v = grad if v is None else self.momentum * v + grad
                self.velocity[i] = v
                value.sub_(v, alpha=self.lr)
