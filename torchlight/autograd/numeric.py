"""Numerical derivatives: the yardstick every analytic gradient is checked against."""

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from . import forward_ad
from .graph import grad
from .variable import Variable


def central_difference(f: Callable[..., Any], *vals: float, arg: int = 0, epsilon: float = 1e-6) -> float:
    """(f(.., x+eps, ..) - f(.., x-eps, ..)) / (2 eps), the derivative of f in argument ``arg``."""
    if not 0 <= arg < len(vals):
        raise IndexError(f"central_difference: arg={arg} but f was given {len(vals)} values")
    up = list(vals)
    down = list(vals)
    up[arg] = vals[arg] + epsilon
    down[arg] = vals[arg] - epsilon
    return float(_value(f(*up)) - _value(f(*down))) / (2.0 * epsilon)


def _value(x: Any) -> float:
    # f may return a Scalar (or anything with .data); compare plain floats.
    return float(getattr(x, "data", x))


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
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, Variable) and x.history is not None]
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor with requires_grad=True")
    values = {i: inputs[i].to_numpy() for i in wrt}
    outputs = _tensors(fn(*inputs))
    n_out = sum(o.numel() for o in outputs)
    n_in = sum(values[i].size for i in wrt)

    def evaluate(changed: Dict[int, np.ndarray]) -> np.ndarray:
        # fn at inputs with some values replaced; the outputs flattened into one vector
        args = [
            x.new_tensor(changed[i]).requires_grad_(x.requires_grad) if i in changed else x
            for i, x in enumerate(inputs)
        ]
        outs = _tensors(fn(*args))
        return np.concatenate([o.to_numpy().reshape(-1) for o in outs]) if outs else np.zeros(0)

    def analytic(weights: np.ndarray) -> List[np.ndarray]:
        # the gradient of (weights . outputs) with respect to each checked input
        live = [(o, w) for o, w in zip(outputs, _split(weights, outputs)) if o.history is not None]
        if not live:
            return [np.zeros_like(values[i]) for i in wrt]
        grads = grad(
            [o for o, _ in live],
            [inputs[i] for i in wrt],
            grad_outputs=[o.new_tensor(w) for o, w in live],
            retain_graph=True,
            allow_unused=True,
        )
        return [np.zeros_like(values[i]) if g is None else g.to_numpy() for i, g in zip(wrt, grads)]

    def forward_mode(tangents: Dict[int, np.ndarray]) -> np.ndarray:
        # J @ u by forward-mode AD, u given per checked input; the outputs' tangents flattened
        with forward_ad.dual_level():
            args = [
                forward_ad.make_dual(x, x.new_tensor(tangents[i])) if i in tangents else x
                for i, x in enumerate(inputs)
            ]
            parts = []
            for o in _tensors(fn(*args)):
                t = forward_ad.unpack_dual(o).tangent
                parts.append(np.zeros(o.numel()) if t is None else t.to_numpy().reshape(-1))
        return np.concatenate(parts) if parts else np.zeros(0)

    if fast_mode is None:
        fast_mode = n_out * n_in > 2000
    if not fast_mode:
        # numeric[i] and exact[i]: the Jacobian blocks (n_out, size of input i)
        numeric = {i: np.zeros((n_out, values[i].size)) for i in wrt}
        for i in wrt:
            for j in range(values[i].size):
                up, down = values[i].copy().reshape(-1), values[i].copy().reshape(-1)
                up[j] += eps
                down[j] -= eps
                hi = evaluate({i: up.reshape(values[i].shape)})
                lo = evaluate({i: down.reshape(values[i].shape)})
                numeric[i][:, j] = (hi - lo) / (2 * eps)
        exact = {i: np.zeros((n_out, values[i].size)) for i in wrt}
        for k in range(n_out):
            onehot = np.zeros(n_out)
            onehot[k] = 1.0
            for i, g in zip(wrt, analytic(onehot)):
                exact[i][k, :] = g.reshape(-1)
        for i in wrt:
            message = _compare(exact[i], numeric[i], atol, rtol, f"with respect to input {i}")
            if message:
                return _fail(message, raise_exception)
        if check_forward_ad:
            for i in wrt:
                columns = []
                for j in range(values[i].size):
                    onehot = np.zeros(values[i].size)
                    onehot[j] = 1.0
                    columns.append(forward_mode({i: onehot.reshape(values[i].shape)}))
                forward = np.stack(columns, axis=1) if columns else np.zeros((n_out, 0))
                message = _compare(forward, numeric[i], atol, rtol, f"of forward-mode AD with respect to input {i}")
                if message:
                    return _fail(message, raise_exception)
        return True

    rng = np.random.default_rng(seed)
    for trial in range(3):
        v = rng.standard_normal(n_out)
        u = {i: rng.standard_normal(values[i].shape) for i in wrt}
        hi = evaluate({i: values[i] + eps * u[i] for i in wrt})
        lo = evaluate({i: values[i] - eps * u[i] for i in wrt})
        numeric_dir = float(v @ (hi - lo)) / (2 * eps)
        exact_dir = float(sum(np.sum(g * u[i]) for i, g in zip(wrt, analytic(v))))
        message = _compare(np.array([exact_dir]), np.array([numeric_dir]), atol, rtol, f"in random direction {trial}")
        if message:
            return _fail(message, raise_exception)
        if check_forward_ad:
            forward_dir = float(v @ forward_mode(u))
            message = _compare(
                np.array([forward_dir]), np.array([numeric_dir]), atol, rtol,
                f"of forward-mode AD in random direction {trial}",
            )
            if message:
                return _fail(message, raise_exception)
    return True


def gradgradcheck(
    fn: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    seed: int = 0,
) -> bool:
    """Check second derivatives: gradcheck of the first derivatives (computed with
    ``create_graph=True``) with respect to both the inputs and the output gradients."""
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    outputs = _tensors(fn(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = [o.new_tensor(rng.standard_normal(o.shape)).requires_grad_() for o in outputs]
    grad_outputs = tuple(grad_outputs) if isinstance(grad_outputs, (tuple, list)) else (grad_outputs,)
    n = len(inputs)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, Variable) and x.history is not None]

    def first_derivatives(*args: Any) -> Tuple[Any, ...]:
        xs, gs = args[:n], args[n:]
        outs = _tensors(fn(*xs))
        live = [(o, g) for o, g in zip(outs, gs) if o.history is not None]
        grads = grad([o for o, _ in live], [xs[i] for i in wrt], [g for _, g in live], create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps, atol, rtol, raise_exception, seed=seed)


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


def _fail(message: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(message)
    return False
