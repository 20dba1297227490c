"""Module 4: Adam and AdamW, the optimizers that train convolutional networks in a few epochs.

Adam (Kingma and Ba, 2015) keeps two running averages per parameter: m, of the gradient, and v,
of its square. Each parameter moves by lr * m / sqrt(v): a step of about lr in every coordinate,
whatever the scale of its gradient, smaller where the gradient's sign keeps changing. Both
averages start at 0, so early on they are too small; dividing by 1 - beta ** step ("bias
correction") undoes that. AdamW (Loshchilov and Hutter, 2019) shrinks the weights directly
instead of adding ``weight_decay * value`` to the gradient, which Adam's scaling would undo.
"""

from typing import Any, Iterable, Optional, Tuple

import numpy as np

from ..scalar_variable import Scalar
from .optimizer import Optimizer, check_number
from .sgd_arrays import storage_view

__all__ = ["Adam", "AdamW", "adam_update"]


def adam_update(
    exp_avg: Any, exp_avg_sq: Any, grad: Any, step: int, beta1: float, beta2: float, eps: float
) -> Tuple[Any, Any, Any]:
    """One Adam update of a parameter with gradient ``grad`` at ``step`` (1 for the first):
    the new averages ``(exp_avg, exp_avg_sq)`` and the direction to subtract (times lr) from the
    parameter. Arguments and results are all Tensors, or all numbers for a Scalar parameter.
    """
    # HINT: m = beta1 * m + (1 - beta1) * g; v likewise with g * g and beta2; correct both for
    # HINT: their start at 0 (divide by 1 - beta ** step); the direction is m_hat / (sqrt(v_hat) + eps).
    # Only arithmetic operators serve both Tensors and floats: a square root is ** 0.5.
    # BEGIN SOLUTION 4.5
    exp_avg = beta1 * exp_avg + (1.0 - beta1) * grad
    exp_avg_sq = beta2 * exp_avg_sq + (1.0 - beta2) * (grad * grad)
    m_hat = exp_avg / (1.0 - beta1**step)
    v_hat = exp_avg_sq / (1.0 - beta2**step)
    return exp_avg, exp_avg_sq, m_hat / (v_hat**0.5 + eps)
    # END SOLUTION 4.5


class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam``: ``weight_decay`` adds ``weight_decay * value`` to the gradient.

    :param params: the parameters to update: an iterable of Parameters (``model.parameters()``),
        or of dicts, each a parameter group with ``"params"`` and its own settings.
    :param lr: the learning rate.
    :param betas: the decay rates of the gradient's running mean and of its square's.
    :param eps: added to the denominator, for stability.
    :param weight_decay: the factor of the value added to the gradient.
    :param amsgrad: only False (torchlight has no AMSGrad variant).
    """

    # Module 3's speed, for the compiled backends: the same update in numpy, in place on the
    # storages, instead of ten tensor operations per parameter (each a kernel launch and a Python
    # call). The simple backend runs ``adam_update``, which stage 4.5 asks for; tests hold the two equal.
    fast = True
    decoupled_weight_decay = False

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
    ):
        _check_amsgrad(amsgrad, type(self).__name__)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        self.check_group(defaults)
        super().__init__(params, defaults)

    def check_group(self, group: dict) -> None:
        # Stricter than PyTorch (which allows lr=0): a learning rate of 0 never trains anything.
        if not check_number("lr", group["lr"]) > 0.0:
            raise ValueError(f"Invalid learning rate: {group['lr']} ({type(self).__name__} needs lr > 0)")
        if not check_number("eps", group["eps"]) >= 0.0:
            raise ValueError(f"Invalid epsilon value: {group['eps']}")
        betas = group["betas"]
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise TypeError(f"betas must be a pair (beta1, beta2), got {betas!r}")
        for i, beta in enumerate(betas):
            if not 0.0 <= check_number(f"betas[{i}]", beta) < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta} (expected 0 <= beta < 1)")
        if not check_number("weight_decay", group["weight_decay"]) >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {group['weight_decay']}")

    def _update(self, p: Any, value: Any, group: dict) -> None:
        lr, (beta1, beta2), eps, weight_decay = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        state = self.state.get(p)
        if state is None:
            zero = 0.0 if isinstance(value, Scalar) else value.new_zeros(value.shape)
            state = self.state[p] = {"step": 0, "exp_avg": zero, "exp_avg_sq": _zeros_like(zero)}
        state["step"] += 1
        arrays = self._arrays(value, state) if self.fast and not isinstance(value, Scalar) else None
        if arrays is not None:
            _numpy_update(*arrays, state["step"], lr, beta1, beta2, eps, weight_decay, self.decoupled_weight_decay)
            for t in (value, state["exp_avg"], state["exp_avg_sq"]):
                t._bump_version()  # written behind the Tensor's back: a saved copy must see the change
            return
        grad = value.grad
        if weight_decay != 0.0:
            if self.decoupled_weight_decay:  # value *= 1 - lr * weight_decay (without mul_, a module 5 op)
                value.sub_(_detached(value), alpha=lr * weight_decay)
            else:
                grad = grad + weight_decay * _detached(value)
        exp_avg, exp_avg_sq, direction = adam_update(
            state["exp_avg"], state["exp_avg_sq"], grad, state["step"], beta1, beta2, eps
        )
        state["exp_avg"], state["exp_avg_sq"] = exp_avg, exp_avg_sq
        value.sub_(direction, alpha=lr)

    @staticmethod
    def _arrays(value: Any, state: dict) -> Optional[Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """(value, grad, exp_avg, exp_avg_sq) as numpy arrays sharing the tensors' storages, where
        the backend is a compiled one with storage in memory; None otherwise."""
        if value.backend.name == "simple" or not isinstance(value.grad._data.storage, np.ndarray):
            return None
        v, m, s = storage_view(value), storage_view(state["exp_avg"]), storage_view(state["exp_avg_sq"])
        if v is None or m is None or s is None:
            return None
        g = storage_view(value.grad)  # (only read)
        return v, (value.grad.to_numpy() if g is None else g), m, s


class AdamW(Adam):
    """AdamW, as ``torch.optim.AdamW``: each step first multiplies the value by ``1 - lr * weight_decay``.

    :param params: the parameters to update: an iterable of Parameters (``model.parameters()``),
        or of dicts, each a parameter group with ``"params"`` and its own settings.
    :param lr: the learning rate.
    :param betas: the decay rates of the gradient's running mean and of its square's.
    :param eps: added to the denominator, for stability.
    :param weight_decay: each step first multiplies the value by ``1 - lr * weight_decay``.
    :param amsgrad: only False (torchlight has no AMSGrad variant).
    """

    decoupled_weight_decay = True

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
    ):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad)


def _check_amsgrad(amsgrad: Any, name: str) -> None:
    # PyTorch's tutorials pass amsgrad=False explicitly; the AMSGrad variant itself is not here.
    if not isinstance(amsgrad, bool):
        raise TypeError(f"{name}(amsgrad): expected True or False, got {amsgrad!r}")
    if amsgrad:
        raise NotImplementedError(f"{name}(amsgrad=True): torchlight has no AMSGrad variant; use amsgrad=False")


def _zeros_like(zero: Any) -> Any:
    return zero if isinstance(zero, float) else zero.new_zeros(zero.shape)


def _detached(value: Any) -> Any:
    return value.data if isinstance(value, Scalar) else value.detach()


def _numpy_update(
    value: np.ndarray,
    grad: np.ndarray,
    exp_avg: np.ndarray,
    exp_avg_sq: np.ndarray,
    step: int,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    decoupled: bool,
) -> None:
    """``adam_update`` and the parameter's move, in place on the arrays (the fast path)."""
    if weight_decay != 0.0:
        if decoupled:
            value -= (lr * weight_decay) * value
        else:
            grad = grad + weight_decay * value
    exp_avg *= beta1
    exp_avg += (1.0 - beta1) * grad
    exp_avg_sq *= beta2
    exp_avg_sq += (1.0 - beta2) * (grad * grad)
    denom = np.sqrt(exp_avg_sq / (1.0 - beta2**step))
    denom += eps
    value -= lr * ((exp_avg / (1.0 - beta1**step)) / denom)
