"""Module 2: ``gradcheck``, a tensor function's analytic derivatives against central differences.

The backward pass (``backpropagate``, module 1) gives ``v . J`` for any weights ``v`` of the
outputs; central differences give ``J u`` for any direction ``u`` of the inputs; both must agree.
Module 5 adds forward-mode AD to what is checked (``check_forward_ad=True``) and second
derivatives (``gradgradcheck``, in ``functional.py``).
"""

from typing import Any, Callable, Dict, List, Optional

import numpy as np

from .graph import BackwardPass, backpropagate
from .variable import Variable

__all__ = ["GradcheckError", "gradcheck"]


class GradcheckError(RuntimeError):
    """An analytic gradient that disagrees with central differences."""


def gradcheck(
    fn: Callable[..., Any],
    inputs: Any,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    fast_mode: Optional[bool] = None,
    seed: int = 0,
    check_forward_ad: bool = False,
) -> bool:
    """Check the gradients of ``fn(*inputs)`` against central differences, in float64.

    Every tensor input with ``requires_grad=True`` is checked against every tensor output. The
    whole Jacobian is compared when it is small; otherwise (or with ``fast_mode=True``) a few
    random directions: ``v . J u`` from backward against ``v . (f(x + eps u) - f(x - eps u)) / 2 eps``.
    Returns True, or raises GradcheckError showing the mismatch (returns False if
    ``raise_exception=False``). Entries agree when ``|analytic - numeric| <= atol + rtol * |numeric|``.
    With ``check_forward_ad=True`` the Jacobian from forward-mode AD (``J @ u`` by jvp) is checked too.

    :param fn: a function of tensors returning a tensor or a tuple of them.
    :param inputs: a tensor or a tuple of them (those with requires_grad are checked).
    :param eps: the step of the central differences.
    :param atol: the absolute tolerance.
    :param rtol: the tolerance relative to the numeric value.
    :param raise_exception: raise GradcheckError on a mismatch (else return False).
    :param fast_mode: compare random directions, not whole Jacobians (default: for large ones).
    :param seed: the seed of the random directions.
    :param check_forward_ad: also check forward-mode AD's Jacobian.
    :returns: True when the gradients agree.
    :raises GradcheckError: on a mismatch, with raise_exception.
    """
    f = _Checked(fn, inputs, eps)
    if fast_mode is None:
        fast_mode = f.n_out * f.n_in > 2000
    if fast_mode:
        message = _check_directions(f, atol, rtol, check_forward_ad, np.random.default_rng(seed))
    else:
        message = _check_jacobians(f, atol, rtol, check_forward_ad)
    if message and raise_exception:
        raise GradcheckError(message)
    return not message


class _Checked:
    """The function under check at its inputs: its outputs flattened into one vector, and three
    ways to differentiate it (central differences, backward, forward mode)."""

    def __init__(self, fn: Callable[..., Any], inputs: Any, eps: float):
        self.fn, self.eps = fn, eps
        self.inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
        self.wrt = [i for i, x in enumerate(self.inputs) if isinstance(x, Variable) and x.history is not None]
        if not self.wrt:
            raise ValueError("gradcheck expects at least one input tensor with requires_grad=True")
        self.values = {i: self.inputs[i].to_numpy() for i in self.wrt}
        # The gradients are taken at fresh leaves standing for the checked inputs, so that the
        # inputs' own .grad is left alone.
        self.leaves = {i: self.inputs[i].detach().requires_grad_() for i in self.wrt}
        self.outputs = _tensors(fn(*[self.leaves.get(i, x) for i, x in enumerate(self.inputs)]))
        self.n_out = sum(o.numel() for o in self.outputs)
        self.n_in = sum(self.values[i].size for i in self.wrt)

    def evaluate(self, changed: Dict[int, np.ndarray]) -> np.ndarray:
        """fn with some inputs' values replaced; the outputs flattened into one vector."""
        args = [
            x.new_tensor(changed[i]).requires_grad_(x.requires_grad) if i in changed else x
            for i, x in enumerate(self.inputs)
        ]
        outs = _tensors(self.fn(*args))
        return np.concatenate([o.to_numpy().reshape(-1) for o in outs]) if outs else np.zeros(0)

    def numeric(self, direction: Dict[int, np.ndarray]) -> np.ndarray:
        """(f(x + eps u) - f(x - eps u)) / 2 eps for the direction u given per checked input."""
        hi = self.evaluate({i: self.values[i] + self.eps * u for i, u in direction.items()})
        lo = self.evaluate({i: self.values[i] - self.eps * u for i, u in direction.items()})
        return (hi - lo) / (2 * self.eps)

    def backward(self, weights: np.ndarray) -> List[np.ndarray]:
        """The gradient of (weights . outputs) with respect to each checked input, by backward."""
        live = [
            (o, w) for o, w in zip(self.outputs, _split(weights, self.outputs), strict=True) if o.history is not None
        ]
        if not live:
            return [np.zeros_like(self.values[i]) for i in self.wrt]
        for leaf in self.leaves.values():
            leaf.grad = None
        for o, w in live:  # the walk adds each output's share into the leaves' .grad
            backpropagate(o, o.new_tensor(w), BackwardPass.make(o, retain_graph=True))
        return [
            np.zeros_like(self.values[i]) if self.leaves[i].grad is None else self.leaves[i].grad.to_numpy()
            for i in self.wrt
        ]

    def forward_mode(self, direction: Dict[int, np.ndarray]) -> np.ndarray:
        """J @ u by forward-mode AD, u given per checked input; the outputs' tangents flattened."""
        from . import forward_ad  # (module 5's, needed only for check_forward_ad=True)

        with forward_ad.dual_level():
            args = [
                forward_ad.make_dual(x, x.new_tensor(direction[i])) if i in direction else x
                for i, x in enumerate(self.inputs)
            ]
            parts = []
            for o in _tensors(self.fn(*args)):
                t = forward_ad.unpack_dual(o).tangent
                parts.append(np.zeros(o.numel()) if t is None else t.to_numpy().reshape(-1))
        return np.concatenate(parts) if parts else np.zeros(0)

    def unit(self, i: int, j: int) -> Dict[int, np.ndarray]:
        """The direction of the j-th element of input i."""
        u = np.zeros(self.values[i].size)
        u[j] = 1.0
        return {i: u.reshape(self.values[i].shape)}


def _check_jacobians(f: _Checked, atol: float, rtol: float, check_forward_ad: bool) -> str:
    """Compare whole Jacobians, one block (outputs x elements of input i) per checked input."""
    exact = {i: np.zeros((f.n_out, f.values[i].size)) for i in f.wrt}
    for k in range(f.n_out):  # row k: the gradient of output element k
        for i, g in zip(f.wrt, f.backward(np.eye(f.n_out)[k]), strict=True):
            exact[i][k, :] = g.reshape(-1)
    for i in f.wrt:
        numeric = _columns(f.numeric, f, i)
        message = _compare(exact[i], numeric, atol, rtol, f"with respect to input {i}")
        if not message and check_forward_ad:
            forward = _columns(f.forward_mode, f, i)
            message = _compare(forward, numeric, atol, rtol, f"of forward-mode AD with respect to input {i}")
        if message:
            return message
    return ""


def _columns(derivative: Callable[[Dict[int, np.ndarray]], np.ndarray], f: _Checked, i: int) -> np.ndarray:
    """The Jacobian block of input i, one column per element, from a directional derivative."""
    columns = [derivative(f.unit(i, j)) for j in range(f.values[i].size)]
    return np.stack(columns, axis=1) if columns else np.zeros((f.n_out, 0))


def _check_directions(f: _Checked, atol: float, rtol: float, check_forward_ad: bool, rng: Any) -> str:
    """Compare ``v . J u`` for three random pairs of directions."""
    for trial in range(3):
        v = rng.standard_normal(f.n_out)
        u = {i: rng.standard_normal(f.values[i].shape) for i in f.wrt}
        numeric = np.array([float(v @ f.numeric(u))])
        exact = np.array([float(sum(np.sum(g * u[i]) for i, g in zip(f.wrt, f.backward(v), strict=True)))])
        message = _compare(exact, numeric, atol, rtol, f"in random direction {trial}")
        if not message and check_forward_ad:
            forward = np.array([float(v @ f.forward_mode(u))])
            message = _compare(forward, numeric, atol, rtol, f"of forward-mode AD in random direction {trial}")
        if message:
            return message
    return ""


def _tensors(out: Any) -> List[Any]:
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, Variable)]


def _split(flat: np.ndarray, outputs: List[Any]) -> List[np.ndarray]:
    parts, at = [], 0
    for o in outputs:
        parts.append(flat[at : at + o.numel()].reshape(o.shape))
        at += o.numel()
    return parts


def _compare(exact: np.ndarray, numeric: np.ndarray, atol: float, rtol: float, where: str) -> str:
    bad = ~(np.abs(exact - numeric) <= atol + rtol * np.abs(numeric))
    if not bad.any():
        return ""
    at = tuple(int(k) for k in np.argwhere(bad)[0])
    return (
        f"Jacobian mismatch {where} (atol={atol}, rtol={rtol}): {int(bad.sum())} of {bad.size} entries "
        f"differ; first at {at}: analytical {float(exact[at])}, numerical {float(numeric[at])}\n"
        f"numerical:\n{numeric}\nanalytical:\n{exact}"
    )
