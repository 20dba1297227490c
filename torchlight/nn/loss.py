"""Module 4: the losses as layers (``criterion = CrossEntropyLoss(); loss = criterion(out, y)``),
each calling its function in ``nn.functional`` with the settings given when it was made."""

from typing import Any, Optional

from ..tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "MSELoss", "NLLLoss"]


class _Loss(Module):
    """A loss layer: ``forward(input, target)`` gives the loss, reduced as ``reduction`` says."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        F._check_reduction(reduction, type(self).__name__)
        self.reduction = reduction


class _WeightedLoss(_Loss):
    # (PyTorch keeps weight as a buffer, so it appears in its state_dict; torchlight's modules have
    # no buffers, and a loss has nothing to save: here it is a plain attribute.)
    def __init__(self, weight: Optional[Tensor] = None, reduction: str = "mean"):
        super().__init__(reduction)
        if weight is not None and not isinstance(weight, Tensor):
            raise TypeError(f"{type(self).__name__}: weight must be a Tensor or None, got {type(weight).__name__}")
        self.weight = weight


class CrossEntropyLoss(_WeightedLoss):
    """``F.cross_entropy``: scores ``(N, C, ...)`` against class indices or class probabilities.

    :param weight: a weight for each class, a tensor of C values (None: all 1).
    :param ignore_index: a target class index that adds no loss.
    :param reduction: ``"mean"``, ``"sum"`` or ``"none"`` (one loss per element).
    :param label_smoothing: the share of the target spread evenly over the classes, in [0, 1].
    """

    def __init__(
        self,
        weight: Optional[Tensor] = None,
        ignore_index: int = -100,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ):
        super().__init__(weight, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.cross_entropy(
            input,
            target,
            self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class NLLLoss(_WeightedLoss):
    """``F.nll_loss``: log-probabilities ``(N, C, ...)`` (from ``LogSoftmax``) against class indices.

    :param weight: a weight for each class, a tensor of C values (None: all 1).
    :param ignore_index: a target class index that adds no loss.
    :param reduction: ``"mean"``, ``"sum"`` or ``"none"`` (one loss per element).
    """

    def __init__(self, weight: Optional[Tensor] = None, ignore_index: int = -100, reduction: str = "mean"):
        super().__init__(weight, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class MSELoss(_Loss):
    """``F.mse_loss``: the squared error.

    :param reduction: ``"mean"``, ``"sum"`` or ``"none"`` (one loss per element).
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class BCELoss(_WeightedLoss):
    """``F.binary_cross_entropy``: probabilities in [0, 1] against targets in [0, 1].

    :param weight: a weight for each element, broadcast against the input (None: all 1).
    :param reduction: ``"mean"``, ``"sum"`` or ``"none"`` (one loss per element).
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_WeightedLoss):
    """``F.binary_cross_entropy_with_logits``: scores against targets in [0, 1], stably.

    :param weight: a weight for each element, broadcast against the input (None: all 1).
    :param reduction: ``"mean"``, ``"sum"`` or ``"none"`` (one loss per element).
    :param pos_weight: a weight for the positive targets, one per class (None: 1).
    """

    def __init__(self, weight: Optional[Tensor] = None, reduction: str = "mean", pos_weight: Optional[Tensor] = None):
        super().__init__(weight, reduction)
        self.pos_weight = pos_weight

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, reduction=self.reduction, pos_weight=self.pos_weight
        )
