"""Module 4: RMSprop, as ``torch.optim.RMSprop``.

RMSprop (Hinton's lecture notes, 2012) divides each gradient by a running root mean square of
that parameter's gradients: ``square_avg = alpha * square_avg + (1 - alpha) * g * g``, then the
parameter moves by ``lr * g / (sqrt(square_avg) + eps)``. A coordinate whose gradients are large
takes smaller steps, one whose gradients are small larger ones. Options, each as PyTorch's:

- ``weight_decay``: ``weight_decay * value`` is added to the gradient first;
- ``centered``: the running mean of the gradient, ``grad_avg``, is kept too, and the step divides
  by an estimate of the gradient's standard deviation, ``sqrt(square_avg - grad_avg ** 2)``;
- ``momentum``: the steps ``g / (... + eps)`` are accumulated in a velocity
  (``buf = momentum * buf + step``), and the parameter moves by ``lr * buf``.

The operations are PyTorch's, in its order, so that in float64 the two take the same steps.
"""

from typing import Any, Iterable

from ..scalar_variable import Scalar
from .optimizer import Optimizer, check_number

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, as ``torch.optim.RMSprop``; its state per parameter: ``step``, ``square_avg``, and
    ``momentum_buffer`` (with momentum) and ``grad_avg`` (centered).

    :param params: the parameters to update: an iterable of Parameters (``model.parameters()``),
        or of dicts, each a parameter group with ``"params"`` and its own settings.
    :param lr: the learning rate.
    :param alpha: the decay rate of the squared gradient's running mean.
    :param eps: added to the denominator, for stability.
    :param weight_decay: the factor of the value added to the gradient.
    :param momentum: the factor of the velocity kept each step (0: none).
    :param centered: divide by the gradient's variance (its mean subtracted), not its square's mean.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
    ):
        defaults = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum, centered=centered)
        self.check_group(defaults)
        super().__init__(params, defaults)

    def check_group(self, group: dict) -> None:
        # Stricter than PyTorch (which allows lr=0), as SGD and Adam here: lr=0 never trains anything.
        if not check_number("lr", group["lr"]) > 0.0:
            raise ValueError(f"Invalid learning rate: {group['lr']} (RMSprop needs lr > 0)")
        if not check_number("eps", group["eps"]) >= 0.0:
            raise ValueError(f"Invalid epsilon value: {group['eps']}")
        if not check_number("momentum", group["momentum"]) >= 0.0:
            raise ValueError(f"Invalid momentum value: {group['momentum']}")
        if not check_number("weight_decay", group["weight_decay"]) >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {group['weight_decay']}")
        if not check_number("alpha", group["alpha"]) >= 0.0:
            raise ValueError(f"Invalid alpha value: {group['alpha']}")
        if not isinstance(group["centered"], bool):
            raise TypeError(f"centered must be True or False, got {group['centered']!r}")

    def _update(self, p: Any, value: Any, group: dict) -> None:
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        weight_decay, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
        state = self.state.get(p)
        if state is None:
            state = self.state[p] = {"step": 0, "square_avg": _zeros(value)}
            if momentum > 0:
                state["momentum_buffer"] = _zeros(value)
            if centered:
                state["grad_avg"] = _zeros(value)
        state["step"] += 1
        grad = value.grad
        if weight_decay != 0:
            grad = grad + weight_decay * _detached(value)
        square_avg = state["square_avg"] = alpha * state["square_avg"] + (1 - alpha) * (grad * grad)
        if centered:
            grad_avg = state["grad_avg"] = _lerp(state["grad_avg"], grad, 1 - alpha)
            avg = _sqrt(square_avg - grad_avg * grad_avg) + eps
        else:
            avg = _sqrt(square_avg) + eps
        if momentum > 0:
            buf = state["momentum_buffer"] = momentum * state["momentum_buffer"] + grad / avg
            value.sub_(buf, alpha=lr)
        else:
            value.sub_(grad / avg, alpha=lr)


def _lerp(start: Any, end: Any, weight: float) -> Any:
    """start + weight * (end - start), computed from the nearer end, as PyTorch's ``lerp``."""
    if weight < 0.5:
        return start + weight * (end - start)
    return end - (end - start) * (1 - weight)


def _sqrt(x: Any) -> Any:
    return x**0.5 if isinstance(x, (float, Scalar)) else x.sqrt()


def _zeros(value: Any) -> Any:
    return 0.0 if isinstance(value, Scalar) else value.new_zeros(value.shape)


def _detached(value: Any) -> Any:
    return value.data if isinstance(value, Scalar) else value.detach()
