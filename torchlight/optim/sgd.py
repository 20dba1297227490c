"""Modules 1 and 2: stochastic gradient descent, which moves Parameters against their gradients.

Module 1 trains a network of Scalars with SGD, module 2 one of Tensors, with the same code. As in
PyTorch, a step changes each parameter's value in place (outside the graph, under ``no_grad``):
the model keeps the very same Scalar and Tensor objects, and their ``.grad`` stays until
``zero_grad()`` clears it. A training loop therefore calls ``zero_grad()`` before each
``backward()``; without it, the new gradients are added to the old ones.
"""

from typing import Any, Iterable

from ..autograd.grad_mode import no_grad
from ..extension import extension_point
from ..scalar_variable import Scalar
from .optimizer import Optimizer, check_number, value_of

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent with momentum, as ``torch.optim.SGD``.

    With g the gradient (plus ``weight_decay * value``): velocity = momentum * velocity +
    (1 - dampening) * g (g itself on the first step); value -= lr * velocity, or with
    ``nesterov=True`` value -= lr * (g + momentum * velocity).

    :param params: the parameters to update: an iterable of Parameters (``model.parameters()``),
        or of dicts, each a parameter group with ``"params"`` and its own settings.
    :param lr: the learning rate.
    :param momentum: the factor of the velocity kept each step, in [0, 1).
    :param dampening: the share of the gradient left out of the velocity.
    :param weight_decay: the factor of the value added to the gradient.
    :param nesterov: step along g + momentum * velocity.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
    ):
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov)
        self.check_group(defaults)  # before the parameters, as PyTorch: a bad setting is named first
        super().__init__(params, defaults)

    def check_group(self, group: dict) -> None:
        lr = check_number("lr", group["lr"])
        # Stricter than PyTorch (which allows lr=0 and momentum=1): neither ever trains anything.
        if not lr > 0.0:
            raise ValueError(f"Invalid learning rate: {group['lr']} (SGD needs a positive learning rate)")
        momentum = check_number("momentum", group["momentum"])
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"Invalid momentum value: {group['momentum']} (SGD needs 0 <= momentum < 1)")
        if not 0.0 <= check_number("dampening", group["dampening"]) <= 1.0:
            raise ValueError(f"Invalid dampening value: {group['dampening']} (expected 0 <= dampening <= 1)")
        if not check_number("weight_decay", group["weight_decay"]) >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {group['weight_decay']}")
        if not isinstance(group["nesterov"], bool):
            raise TypeError(f"nesterov must be True or False, got {group['nesterov']!r}")
        if group["nesterov"] and (momentum <= 0.0 or group["dampening"] != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")

    def step(self) -> None:
        """Move each parameter's value against its gradient, in place; ``.grad`` is left as it is."""
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    value: Any = value_of(p)  # a Scalar or a Tensor
                    if value.grad is not None:  # (None: not used by this loss)
                        self._update(p, value, group)

    @extension_point
    def _update(self, p: Any, value: Any, group: dict) -> None:
        """One parameter's step. (Module 3 gives Tensors of the compiled backends the same step in
        numpy, on their storages: ``optim/sgd_arrays.py``.)"""
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        g = value.grad
        if group["weight_decay"] != 0.0:
            g = g + group["weight_decay"] * _detached(value)
        if momentum != 0.0:
            state = self.state.setdefault(p, {})
            v = state.get("momentum_buffer")
            if v is None:
                v = _copy(g)
            else:  # (without dampening, one operation less: each is a kernel call)
                v = momentum * v + (g if dampening == 0.0 else (1.0 - dampening) * g)
            state["momentum_buffer"] = v
            g = g + momentum * v if group["nesterov"] else v
        value.sub_(g, alpha=lr)


def _detached(value: Any) -> Any:
    """The value as a number (a Scalar's) or a tensor without history, for arithmetic on gradients."""
    return value.data if isinstance(value, Scalar) else value.detach()


def _copy(g: Any) -> Any:
    # The velocity must not be the gradient tensor itself: the next backward adds into .grad.
    clone = getattr(g, "clone", None)
    return g if clone is None else clone()
