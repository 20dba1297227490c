"""Module 4: ``torchlight.nn.functional``, a network's operations as functions (``torch.nn.functional``).

Every function here is composed of tensor operations that modules 2 and 5 already differentiate
(exp, log, sum, max, mul, ...), as "softmax is exp, sum and div": none needs a Function of its own,
and each gets backward, double backward and forward mode (jvp) from the operations it is made of.

Stage 4.4 writes the numerically stable softmax family (``logsumexp``, ``softmax``,
``log_softmax``), ``dropout``, and the negative log-likelihood at the heart of ``nll_loss`` and
``cross_entropy``. The argument checks around them are given: a loss checks shapes, class indices
and ``reduction`` before computing anything.

Speed (module 4's, not a stage's): ``max_pool2d`` here and ``cross_entropy`` of scores (N, C) take
one-kernel paths where the backend has them (``ops/fused_nn.py``; the fast backend), with the
taught code's values; everywhere else, and on other backends, the taught code runs.

Names, arguments and results follow PyTorch. Deviations: ``mse_loss`` raises for a target of
another shape (PyTorch warns and broadcasts); class indices are whole-number float tensors (or
lists/arrays of ints), since torchlight holds float64 only; a loss's ``weight`` is a constant
(PyTorch gives it no gradient either, except in ``binary_cross_entropy``).
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Optional

import numpy as np

from .. import random  # noqa: F401  (dropout's code, stage 4.4, uses it)
from ..dtypes import bool_
from ..ops import fused
from ..ops.adaptive_pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
)
from ..ops.conv import conv1d, conv2d
from ..ops.fused_nn import cross_entropy_rows, max_pool2d, raise_if_stub  # (the fused paths: module 4's speed)
from ..ops.pooling import avg_pool2d, tile
from ..ops.selection import where
from ..tensor import Tensor, _check_flag
from ..tensor_data import check_storage, normalize_dim

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "avg_pool2d",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "conv1d",
    "conv2d",
    "cross_entropy",
    "dropout",
    "linear",
    "log_softmax",
    "logsumexp",
    "max_pool2d",
    "mse_loss",
    "nll_loss",
    "one_hot",
    "relu",
    "sigmoid",
    "softmax",
    "tanh",
    "tile",
]

_REDUCTIONS = ("mean", "sum", "none")


# -- argument checks ----------------------------------------------------------------------------


def _check_tensor(x: Any, fn: str, name: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(x).__name__}")


def _check_reduction(reduction: Any, fn: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}(): {reduction!r} is not a valid value for reduction: expected 'mean', 'sum' or 'none'")


def _check_ignore_index(ignore_index: Any, fn: str) -> None:
    if isinstance(ignore_index, bool) or not isinstance(ignore_index, (int, np.integer)):
        raise TypeError(f"{fn}(): argument 'ignore_index' must be int, not {type(ignore_index).__name__}")


def _check_same_shape(input: Tensor, target: Any, fn: str) -> None:
    _check_tensor(target, fn, "target")
    if target.shape != input.shape:
        raise ValueError(
            f"{fn}(): target of shape {target.shape} must have the shape of input, {input.shape} "
            "(broadcasting a target is almost always a mistake)"
        )


def _reduce(losses: Tensor, reduction: str) -> Tensor:
    """The losses averaged, summed or left as they are."""
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.mean()


def _finite(m: Tensor) -> Tensor:
    """m with its infinite (or nan) entries set to 0: shifting by an infinity gives inf - inf = nan."""
    values = m.to_numpy()
    if np.isfinite(values).all():
        return m
    return m._constant(np.where(np.isfinite(values), values, 0.0))


# -- activations and the linear map ---------------------------------------------------------------


def linear(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    """``input @ weight.T + bias``: input ``(..., in_features)``, weight ``(out_features, in_features)``.

    :param input: a tensor (..., in_features).
    :param weight: the weight (out_features, in_features).
    :param bias: one value per output feature, (out_features,) (None: none).
    """
    _check_tensor(input, "linear", "input")
    _check_tensor(weight, "linear", "weight")
    if weight.dims != 2:
        raise RuntimeError(f"linear(): weight must be 2-D (out_features, in_features), got shape {weight.shape}")
    if input.dims == 0 or input.shape[-1] != weight.shape[1]:
        raise RuntimeError(
            f"linear(): input of shape {input.shape} and weight of shape {weight.shape} cannot be multiplied: "
            f"the input's last dimension must be in_features = {weight.shape[1]}"
        )
    if bias is not None:
        _check_tensor(bias, "linear", "bias")
        if bias.shape not in ((weight.shape[0],), (), (1,)):
            raise RuntimeError(
                f"linear(): bias of shape {bias.shape} does not match out_features = {weight.shape[0]} "
                f"(weight of shape {weight.shape})"
            )
    if input.backend.name != "simple":  # module 3's fused Function, as nn.Linear uses it
        return fused.Linear.apply(input, weight, bias)
    out = input @ weight.T
    return out if bias is None else out + bias


def relu(input: Tensor) -> Tensor:
    """max(input, 0), elementwise.

    :param input: the tensor.
    """
    _check_tensor(input, "relu", "input")
    return input.relu()


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-input)), elementwise.

    :param input: the tensor.
    """
    _check_tensor(input, "sigmoid", "input")
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    """The hyperbolic tangent, elementwise.

    :param input: the tensor.
    """
    _check_tensor(input, "tanh", "input")
    return input.tanh()


# -- the softmax family: stable through a shift by the maximum ------------------------------------


def _dim(input: Any, dim: Any, fn: str) -> int:
    _check_tensor(input, fn, "input")
    if dim is None:
        raise TypeError(f"{fn}(): dim must be given (an int: the dimension the probabilities run along)")
    return normalize_dim(dim, input.dims)  # IndexError "Dimension out of range ..." as PyTorch


def logsumexp(input: Tensor, dim: int, keepdim: bool = False) -> Tensor:
    """log(sum(exp(input), dim)), finite wherever the answer is (as ``torch.logsumexp``); -inf
    along a dimension of size 0 (the log of an empty sum, as PyTorch).

    :param input: the tensor.
    :param dim: the dimension summed over.
    :param keepdim: keep it, with size 1.
    """
    dim = _dim(input, dim, "logsumexp")
    _check_flag(keepdim, "logsumexp", "keepdim")
    if _no_elements_along(input, dim):  # (no maximum to shift by)
        out = input.exp().sum(dim, keepdim=True).log()
    else:
        out = _logsumexp_kept(input, dim)
    return out if keepdim or input.dims == 0 else out.squeeze(dim)


def _logsumexp_kept(input: Tensor, dim: int) -> Tensor:
    """log(sum(exp(input), dim)) with ``dim`` kept, of size 1 (``keepdim=True``), for a valid ``dim``."""
    # BEGIN SOLUTION 4.4: log(sum(exp(input))) along dim, kept, without overflow
    # HINT: exp overflows past 709, and inputs of 1000 must work. Subtracting a constant c from every
    # HINT: element along dim changes log(sum(exp(...))) in a simple way: which, and which c makes
    # HINT: the largest term exp(0)? c needs no gradient of its own (take it from input.detach()), and
    # HINT: _finite(c) turns an infinite one (a row of -inf, or of +inf) into 0.
    m = _finite(input.detach().max(dim, keepdim=True).values)
    return (input - m).exp().sum(dim, keepdim=True).log() + m
    # END SOLUTION 4.4


def _no_elements_along(input: Tensor, dim: int) -> bool:
    """True where ``dim`` (valid) has size 0: a softmax along it has nothing to normalize, and
    its result is input's empty shape (PyTorch's), not the error of a maximum over nothing."""
    return input.dims > 0 and input.shape[dim] == 0


def softmax(input: Tensor, dim: int) -> Tensor:
    """exp(input) / sum(exp(input), dim): probabilities along ``dim`` (as ``F.softmax``).

    :param input: the scores.
    :param dim: the dimension that sums to 1.
    """
    dim = _dim(input, dim, "softmax")
    if _no_elements_along(input, dim):
        return input.clone()
    # BEGIN SOLUTION 4.4: exp, sum and divide, without overflow
    # HINT: softmax(x) = softmax(x - c) for any c constant along dim: pick one that keeps exp
    # below its overflow (inputs of 1000 must work), as _logsumexp_kept does.
    e = (input - input.detach().max(dim, keepdim=True).values).exp()
    return e / e.sum(dim, keepdim=True)
    # END SOLUTION 4.4


def log_softmax(input: Tensor, dim: int) -> Tensor:
    """log(softmax(input, dim)), finite even where softmax underflows to 0 (as ``F.log_softmax``).

    :param input: the scores.
    :param dim: the dimension softmax normalizes over.
    """
    dim = _dim(input, dim, "log_softmax")
    if _no_elements_along(input, dim):
        return input.clone()
    # BEGIN SOLUTION 4.4: (input - m) - log(sum(exp(input - m))), m the maximum along dim
    # HINT: as logsumexp, but subtract the maximum before adding anything to it: for logits of 1e16,
    # HINT: 1e16 - (1e16 + log 3) rounds to -2.0 or 0.0, where (x - m) - log(3) is exact.
    shifted = input - _finite(input.detach().max(dim, keepdim=True).values)
    return shifted - shifted.exp().sum(dim, keepdim=True).log()
    # END SOLUTION 4.4


# -- dropout --------------------------------------------------------------------------------------


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Each element zeroed with probability ``p``, the rest scaled by ``1 / (1 - p)`` so that the
    expected value is unchanged ("inverted" dropout); the identity when not ``training``.

    The mask is drawn from torchlight's generator (``torchlight.manual_seed``).

    :param input: the tensor.
    :param p: the probability of zeroing an element, in [0, 1].
    :param training: drop (else return input unchanged).
    :param inplace: accepted for PyTorch's programs (the result is a new tensor).
    """
    _check_tensor(input, "dropout", "input")
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p!r}")
    _check_flag(training, "dropout", "training")
    if not training or p == 0.0:
        return input
    if p == 1.0:  # everything dropped (1 / (1 - p) would divide by zero)
        scaled_mask = np.zeros(input.shape)
    else:
        # BEGIN SOLUTION 4.4: a random mask keeping each element with probability 1 - p, scaled
        # HINT: random.generator() is torchlight's numpy Generator: draw once per call, input.shape
        # HINT: values. scaled_mask is a numpy array of input's shape: 1 / (1 - p) where an element
        # is kept, 0 where it is dropped; the lines below multiply input by it.
        keep = random.generator().random(input.shape) >= p
        scaled_mask = keep / (1.0 - p)
        # END SOLUTION 4.4
    mask = input._constant(scaled_mask)
    return input.mul_(mask) if inplace else input * mask


# -- class targets --------------------------------------------------------------------------------


def _class_dim(input: Any, fn: str) -> int:
    """The dimension of the classes: 1 for ``(N, C, d1, ...)``, 0 for one unbatched ``(C,)``."""
    _check_tensor(input, fn, "input")
    if input.dims == 0:
        raise ValueError(f"{fn}(): input must have a class dimension, (C,) or (N, C, d1, ...), got a 0-d tensor")
    return 1 if input.dims >= 2 else 0


def _class_weights(weight: Any, n_classes: int, fn: str) -> np.ndarray:
    """The per-class weights as an array (ones when weight is None)."""
    if weight is None:
        return np.ones(n_classes)
    _check_tensor(weight, fn, "weight")
    if weight.shape != (n_classes,):
        raise RuntimeError(
            f"{fn}(): weight should be defined either for all {n_classes} classes or no classes, "
            f"but got weight of shape {weight.shape}"
        )
    return weight.to_numpy()


def _along(values: np.ndarray, cdim: int, dims: int) -> np.ndarray:
    """values (one per class) shaped to broadcast along the class dimension of a ``dims``-d input."""
    shape = [1] * dims
    shape[cdim] = values.size
    return values.reshape(shape)


def _class_indices(input: Tensor, target: Any, cdim: int, ignore_index: int, fn: str) -> np.ndarray:
    """The target's class indices as an int array of input's shape without the class dimension."""
    expected = input.shape[:cdim] + input.shape[cdim + 1 :]
    values = target.to_numpy() if isinstance(target, Tensor) else np.asarray(target)
    if (target.dtype if isinstance(target, Tensor) else None) is bool_ or values.dtype.kind == "b":
        raise RuntimeError(
            f"{fn}(): expected target dtype to be Long (class indices), but got Bool: convert it with .long()"
        )
    if values.dtype.kind not in "fiub" or values.shape != expected:
        what = f"shape {values.shape}" if values.dtype.kind in "fiub" else f"{type(target).__name__} {target!r}"
        raise ValueError(
            f"{fn}(): target of {what} does not fit input of shape {input.shape}: expected class "
            f"indices of shape {expected}"
            + (f" or class probabilities of shape {input.shape}" if fn == "cross_entropy" else "")
        )
    whole = values == np.round(values)
    if not whole.all():
        raise RuntimeError(f"{fn}(): target must hold class indices (whole numbers), got {float(values[~whole][0])}")
    indices = values.astype(np.int64)
    n_classes = input.shape[cdim]
    bad = (indices != ignore_index) & ((indices < 0) | (indices >= n_classes))
    if bad.any():
        raise IndexError(
            f"{fn}(): Target {indices[bad][0]} is out of bounds: input has {n_classes} classes, "
            f"so class indices run from 0 to {n_classes - 1}"
        )
    return indices


def _targets(input: Tensor, indices: np.ndarray, cdim: int, ignore_index: int) -> np.ndarray:
    """A bool array of input's shape: True at each target's class (nowhere for a target equal to
    ignore_index)."""
    classes = _along(np.arange(input.shape[cdim]), cdim, input.dims)
    # (ignore_index may be a real class, e.g. a padding class: its targets still pick nothing)
    return (np.expand_dims(indices, cdim) == classes) & np.expand_dims(indices != ignore_index, cdim)


def _picks(input: Tensor, indices: np.ndarray, cdim: int, weights: np.ndarray, ignore_index: int) -> np.ndarray:
    """An array of input's shape: each target's class weight at its class, 0 elsewhere (and 0 for
    a target equal to ignore_index)."""
    return _targets(input, indices, cdim, ignore_index) * _along(weights, cdim, input.dims)


def _on_support(log_probs: Tensor, support: Optional[np.ndarray]) -> Tensor:
    """log_probs with 0 wherever ``support`` (a bool array, or None: everywhere) is False.

    A class the target never picks must count for nothing, even where its log-probability is
    -inf (a masked logit): ``-inf * 0`` would be nan, in the loss and in its gradient. PyTorch's
    ``nll_loss`` picks ``input[i, target[i]]`` and never multiplies the others.
    """
    if support is None or support.all():
        return log_probs
    return where(log_probs._constant(support.astype(np.float64)), log_probs, 0.0)


def _nll(log_probs: Tensor, dist: Any, cdim: int, reduction: str, total_weight: float) -> Tensor:
    """The negative log-likelihood of each sample, ``-sum(dist * log_probs)`` over the classes,
    reduced: "none" keeps one per sample, "sum" adds them, "mean" divides that sum by
    ``total_weight`` (the number of samples, or the weight of their targets, as PyTorch).
    ``dist`` is a Tensor of log_probs' shape (class probabilities may require grad); ``cdim`` is
    the class dimension."""
    # BEGIN SOLUTION 4.4: each sample's -sum(dist * log_probs) over the class dimension, reduced
    losses = -(log_probs * dist).sum(cdim)
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.sum() / total_weight
    # END SOLUTION 4.4


def _total(weight: float) -> float:
    # PyTorch's mean over nothing (every target ignored) is nan: 0 / 0, not an error.
    return weight if weight != 0.0 else math.nan


# -- losses ---------------------------------------------------------------------------------------


def nll_loss(
    input: Tensor,
    target: Any,
    weight: Optional[Tensor] = None,
    *,
    ignore_index: int = -100,
    reduction: str = "mean",
) -> Tensor:
    """The negative log-likelihood loss: ``-input[i, target[i]]``, from log-probabilities ``input``
    of shape ``(N, C)``, ``(N, C, d1, ...)`` or ``(C,)`` and class indices ``target`` of shape
    ``(N,)``, ``(N, d1, ...)`` or ``()`` (as ``F.nll_loss``).

    ``weight`` (C,) scales each class; "mean" divides by the total weight of the targets. Targets
    equal to ``ignore_index`` count for nothing.

    :param input: log-probabilities (N, C), (N, C, d1, ...) or (C,).
    :param target: class indices (N,), (N, d1, ...) or ().
    :param weight: a weight for each class, (C,) (None: all 1); "mean" divides by the targets' total weight.
    :param ignore_index: a target class index that adds no loss.
    :param reduction: ``"mean"``, ``"sum"`` or ``"none"`` (one loss per element).
    """
    _check_reduction(reduction, "nll_loss")
    _check_ignore_index(ignore_index, "nll_loss")
    cdim = _class_dim(input, "nll_loss")
    weights = _class_weights(weight, input.shape[cdim], "nll_loss")
    indices = _class_indices(input, target, cdim, ignore_index, "nll_loss")
    picks = _picks(input, indices, cdim, weights, ignore_index)
    log_probs = _on_support(input, _targets(input, indices, cdim, ignore_index))
    return _nll(log_probs, input._constant(picks), cdim, reduction, _total(float(picks.sum())))


def cross_entropy(
    input: Tensor,
    target: Any,
    weight: Optional[Tensor] = None,
    *,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """The cross-entropy between softmax(input) along the class dimension and the target (as
    ``F.cross_entropy``): ``nll_loss(log_softmax(input, class_dim), target)``.

    ``input`` holds unnormalized scores of shape ``(N, C)``, ``(N, C, d1, ...)`` or ``(C,)``.
    ``target`` is either class indices (input's shape without C; ``weight``, ``ignore_index``
    and "mean" as in ``nll_loss``) or class probabilities of input's shape ("mean" divides by the
    number of samples). ``label_smoothing`` in [0, 1] mixes the target with the uniform
    distribution over the C classes.

    :param input: unnormalized scores (N, C), (N, C, d1, ...) or (C,).
    :param target: class indices (input's shape without C) or class probabilities (input's shape).
    :param weight: a weight for each class, (C,) (None: all 1).
    :param ignore_index: a target class index that adds no loss (with class indices).
    :param reduction: ``"mean"``, ``"sum"`` or ``"none"`` (one loss per element).
    :param label_smoothing: in [0, 1]: how much of the target is mixed with the uniform distribution.
    """
    _check_reduction(reduction, "cross_entropy")
    _check_ignore_index(ignore_index, "cross_entropy")
    cdim = _class_dim(input, "cross_entropy")
    n_classes = input.shape[cdim]
    weights = _class_weights(weight, n_classes, "cross_entropy")
    if isinstance(label_smoothing, bool) or not isinstance(label_smoothing, numbers.Real):
        raise TypeError(f"cross_entropy(): label_smoothing must be a number, got {type(label_smoothing).__name__}")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy(): label_smoothing must be between 0.0 and 1.0, got {label_smoothing}")
    smoothing = float(label_smoothing)
    dist: Any
    support: Optional[np.ndarray] = None  # where the target puts weight (None: soft targets, everywhere)
    if isinstance(target, Tensor) and target.shape == input.shape:  # class probabilities
        if not target.dtype.is_floating_point:
            raise RuntimeError(
                f"cross_entropy(): Expected floating point type for target with class probabilities, got "
                f"{target.dtype} (class indices have input's shape without its class dimension)"
            )
        dist = target if smoothing == 0.0 else target * (1.0 - smoothing) + smoothing / n_classes
        if weight is not None:
            dist = dist * input._constant(_along(weights, cdim, input.dims))
        total = _total(float(input.numel() // n_classes))
    else:  # class indices
        indices = _class_indices(input, target, cdim, ignore_index, "cross_entropy")
        support = _targets(input, indices, cdim, ignore_index)
        picks = support * _along(weights, cdim, input.dims)  # (_picks, from the targets at hand)
        if smoothing:
            # every class of every sample not ignored gets smoothing / C of its class weight
            kept = np.expand_dims(indices != ignore_index, cdim)
            support = np.broadcast_to(kept, input.shape)
            spread = kept * _along(weights, cdim, input.dims) * (smoothing / n_classes)
            dist = input._constant((1.0 - smoothing) * picks + spread)
        else:
            dist = input._constant(picks)
        total = _total(float(picks.sum()))
    if input.dims == 2 and input.backend.fused_kernel("cross_entropy_kernel") is not None:
        # the library's one-kernel loss (ops/fused_nn.py), the same values; the taught code first
        # runs once on a tiny input, so that in the student edition a stub still says what to write
        raise_if_stub("cross_entropy", _taught_cross_entropy)
        fused = cross_entropy_rows(input, dist, support, reduction, total)
        if fused is not None:
            return fused
    return _nll(_on_support(log_softmax(input, cdim), support), dist, cdim, reduction, total)


def _taught_cross_entropy() -> None:
    """The taught log_softmax and _nll on a tiny input (the simple backend)."""
    x = Tensor.from_numpy(np.array([[0.5, -0.5]]), "simple")
    _nll(_on_support(log_softmax(x, 1), None), x._constant(np.array([[1.0, 0.0]])), 1, "mean", 1.0)


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """The squared error ``(input - target) ** 2``, reduced (as ``F.mse_loss``).

    :param input: the predictions.
    :param target: the values, input's shape.
    :param reduction: ``"mean"``, ``"sum"`` or ``"none"`` (one loss per element).
    """
    _check_reduction(reduction, "mse_loss")
    _check_tensor(input, "mse_loss", "input")
    _check_same_shape(input, target, "mse_loss")
    diff = input - target
    return _reduce(diff * diff, reduction)


# PyTorch's floor for q * (1 - q) in the gradient of binary_cross_entropy: 1e-12 held as a float32
_BCE_EPS = float(np.float32(1e-12))


def binary_cross_entropy(
    input: Tensor, target: Tensor, weight: Optional[Tensor] = None, reduction: str = "mean"
) -> Tensor:
    """``-(target * log(input) + (1 - target) * log(1 - input))`` for probabilities ``input`` in
    [0, 1], each log at least -100, times ``weight`` (broadcast), reduced (as ``F.binary_cross_entropy``).

    The gradient is PyTorch's, ``(input - target) / max(input * (1 - input), 1e-12)``: a sure wrong
    answer (input exactly 0 or 1) gets a large gradient towards the target, not 0 or nan. Where
    ``input * (1 - input) >= 1e-12`` this is the derivative of the formula above, computed as it
    is; elsewhere (saturated probabilities) the loss is the clamped value, a constant, plus a term
    worth 0 whose derivatives are PyTorch's. Deviation: where input is exactly 0 or 1 a target that
    requires a gradient gets the clamped ``log(1 - input) - log(input)`` (100 in size) where PyTorch
    gives inf.

    :param input: probabilities in [0, 1].
    :param target: values in [0, 1], input's shape.
    :param weight: a weight for each element, broadcast against input (None: all 1).
    :param reduction: ``"mean"``, ``"sum"`` or ``"none"`` (one loss per element).
    """
    _check_reduction(reduction, "binary_cross_entropy")
    _check_tensor(input, "binary_cross_entropy", "input")
    _check_same_shape(input, target, "binary_cross_entropy")
    values = input.to_numpy()
    outside = ~((values >= 0.0) & (values <= 1.0))
    if outside.any():
        raise RuntimeError(
            f"binary_cross_entropy(): all elements of input should be between 0 and 1 (probabilities), "
            f"got {float(values[outside][0])}; for scores use binary_cross_entropy_with_logits"
        )
    inside = (1.0 - values) * values >= _BCE_EPS
    if inside.all():
        losses = -(target * input.log() + (1.0 - target) * (1.0 - input).log())
    else:
        keep = input._constant(inside.astype(np.float64))
        q = where(keep, input, 0.5)  # (0.5 where saturated: no log(0), whose gradient would be nan)
        exact = -(target * q.log() + (1.0 - target) * (1.0 - q).log())
        with np.errstate(divide="ignore"):
            log_q, log_1mq = np.log(values), np.log1p(-values)
        # the target's gradient, log(1 - q) - log(q): PyTorch's where finite, clamped where q is 0 or 1
        slope = log_1mq - log_q
        slope = np.where(np.isfinite(slope), slope, np.maximum(log_1mq, -100.0) - np.maximum(log_q, -100.0))
        q0, t0 = input.detach(), target.detach()
        clamped = -(
            t0 * input._constant(np.maximum(log_q, -100.0)) + (1.0 - t0) * input._constant(np.maximum(log_1mq, -100.0))
        )
        saturated = clamped + (target - t0) * input._constant(slope) + (input - q0) * ((q0 - t0) / _BCE_EPS)
        losses = where(keep, exact, saturated)
    if weight is not None:
        losses = losses * weight
    return _reduce(losses, reduction)


def _softplus(x: Tensor) -> Tensor:
    """log(1 + exp(x)) = m + log(exp(-m) + exp(x - m)) with m = max(x, 0) a constant: no overflow,
    and exact derivatives of every order (m cancels), even at x = 0 where max has a kink."""
    m = x.detach().relu()
    return m + ((-m).exp() + (x - m).exp()).log()


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    pos_weight: Optional[Tensor] = None,
) -> Tensor:
    """``binary_cross_entropy(sigmoid(input), target)`` computed from the scores ``input`` without
    overflow for any size of score, times ``weight``; ``pos_weight`` scales the positive term
    (as ``F.binary_cross_entropy_with_logits``).

    :param input: scores (logits).
    :param target: values in [0, 1], input's shape.
    :param weight: a weight for each element, broadcast against input (None: all 1).
    :param reduction: ``"mean"``, ``"sum"`` or ``"none"`` (one loss per element).
    :param pos_weight: a weight for the positive term, one per class (None: 1).
    """
    _check_reduction(reduction, "binary_cross_entropy_with_logits")
    _check_tensor(input, "binary_cross_entropy_with_logits", "input")
    _check_same_shape(input, target, "binary_cross_entropy_with_logits")
    # -log(sigmoid(x)) = softplus(-x) and -log(1 - sigmoid(x)) = x + softplus(-x)
    if pos_weight is None:
        losses = (1.0 - target) * input + _softplus(-input)
    else:
        _check_tensor(pos_weight, "binary_cross_entropy_with_logits", "pos_weight")
        losses = (1.0 - target) * input + (1.0 + (pos_weight - 1.0) * target) * _softplus(-input)
    if weight is not None:
        losses = losses * weight
    return _reduce(losses, reduction)


def one_hot(tensor: Any, num_classes: int = -1) -> Tensor:
    """``tensor``'s class indices as one-hot vectors: shape ``tensor.shape + (num_classes,)``,
    1.0 at each index and 0.0 elsewhere (``num_classes=-1``: the largest index + 1), as ``F.one_hot``
    (floats: torchlight holds float64 only).

    :param tensor: class indices (whole numbers).
    :param num_classes: the vectors' length (-1: the largest index + 1).
    """
    values = tensor.to_numpy() if isinstance(tensor, Tensor) else np.asarray(tensor)
    if values.dtype.kind not in "fiub":
        raise TypeError(f"one_hot(): expected a tensor of class indices, got {type(tensor).__name__}")
    if (tensor.dtype if isinstance(tensor, Tensor) else None) is bool_ or values.dtype.kind == "b":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor (got a bool tensor)")
    if not isinstance(num_classes, (int, np.integer)) or isinstance(num_classes, bool):
        raise TypeError(f"one_hot(): num_classes must be an int, got {type(num_classes).__name__}")
    whole = values == np.round(values)
    if not whole.all():
        raise RuntimeError(f"one_hot(): class values must be whole numbers, got {float(values[~whole][0])}")
    indices = values.astype(np.int64)
    if indices.size and indices.min() < 0:
        raise RuntimeError(f"one_hot(): Class values must be non-negative, got {indices.min()}")
    if num_classes == -1:
        if not indices.size:
            raise RuntimeError("one_hot(): Can not infer total number of classes from empty tensor (give num_classes)")
        num_classes = int(indices.max()) + 1
    elif num_classes < 0:
        raise RuntimeError(f"one_hot(): num_classes must be -1 (inferred) or a non-negative int, got {num_classes}")
    elif indices.size and indices.max() >= num_classes:
        raise RuntimeError(
            f"one_hot(): Class values must be smaller than num_classes: num_classes={num_classes}, "
            f"largest class value {indices.max()}"
        )
    check_storage(indices.shape + (num_classes,))
    encoded = (indices[..., None] == np.arange(num_classes)).astype(np.float64)
    if isinstance(tensor, Tensor):
        return tensor._constant(encoded)
    return Tensor.from_numpy(encoded)
