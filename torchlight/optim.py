"""Module 4: optimizers, which move Parameters against their gradients.

They work on Scalar and Tensor parameters alike: each step replaces a parameter's value with a
new leaf (``p.update``), computed outside the graph.
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
            p.value.grad = None

    def step(self) -> None:
        """Move each parameter against its gradient; each gets a fresh leaf (with no .grad)."""
        with no_grad():
            for i, p in enumerate(self.params):
                grad = p.value.grad
                if grad is None:
                    continue  # not used by this loss
                v = self.velocity[i]
                v = grad if v is None else self.momentum * v + grad
                self.velocity[i] = v
                p.update(p.value.detach() - self.lr * v)
