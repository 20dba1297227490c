"""Module 5: derivatives of whole functions: ``jvp``, ``vjp`` and ``hvp``; ``gradgradcheck``.

These take a function of tensors and return its value together with a product of one of its
derivative matrices with a vector, as ``torch.func.jvp`` and ``torch.autograd.functional``:

- ``jvp(f, primals, tangents)``: J @ tangents, by forward-mode AD (one pass, see forward_ad.py);
- ``vjp(f, inputs, v)``: v @ J, by reverse-mode AD (one backward);
- ``hvp(f, inputs, v)``: H @ v for a scalar f, forward mode over reverse mode: the gradient is
  computed inside a dual level, so every operation of the backward pass carries tangents too.

``primals``, ``inputs``, ``tangents`` and ``v`` are a tensor or a tuple of tensors; results come
back in the same form as the function's output (a tensor, or a tuple).

``gradgradcheck`` checks second derivatives: ``gradcheck`` of the first derivatives, computed
with ``create_graph=True``.
"""

from typing import Any, Callable, List, Sequence, Tuple

import numpy as np

from . import forward_ad
from .engine import grad
from .function import History
from .gradcheck import _tensors, gradcheck
from .variable import Variable

__all__ = ["jvp", "vjp", "hvp", "gradgradcheck"]


def jvp(func: Callable[..., Any], primals: Any, tangents: Any) -> Tuple[Any, Any]:
    """``(func(*primals), J @ tangents)``: the Jacobian-vector product by forward-mode AD.

    Outputs that do not depend on the primals get zero tangents.

    :param func: a function of tensors returning a tensor or a tuple of them.
    :param primals: the point: a tensor or a tuple of them.
    :param tangents: the direction: one per primal, shaped like it.
    """
    primals_t = _tuple(primals, "primals")
    tangents_t = _tuple(tangents, "tangents")
    _same_structure(primals_t, tangents_t, "tangents", "primals")
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(p, t) for p, t in zip(primals_t, tangents_t, strict=True)]
        out = func(*duals)
        outs = _outputs(out, "jvp")
        jvps = [_or_zeros(forward_ad.unpack_dual(o).tangent, o) for o in outs]
    return _like(out, outs), _like(out, jvps)  # the outputs' tangents lapse with the level


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False) -> Tuple[Any, Any]:
    """``(func(*inputs), v @ J)``: the vector-Jacobian product by reverse-mode AD.

    ``v`` (one per output, shaped like it) may be left out when func returns one element.
    Inputs that the output does not depend on get zero gradients. With ``create_graph=True`` the
    result can be differentiated again.

    :param func: a function of tensors returning a tensor or a tuple of them.
    :param inputs: the point: a tensor or a tuple of them.
    :param v: one per output, shaped like it (None for a one-element output).
    :param create_graph: record the computation, to differentiate the result again.
    """
    inputs_t = _tuple(inputs, "inputs")
    xs = _grad_inputs(inputs_t, create_graph)
    out = func(*xs)
    outs = _outputs(out, "vjp")
    vs = None if v is None else list(_tuple(v, "v"))
    if vs is not None:
        _same_structure(tuple(outs), tuple(vs), "v", "outputs")
    live = [i for i, o in enumerate(outs) if o.history is not None]
    if not live:
        grads: Sequence[Any] = [None] * len(xs)
    else:
        grads = grad(
            [outs[i] for i in live],
            xs,
            None if vs is None else [vs[i] for i in live],
            create_graph=create_graph,
            allow_unused=True,
        )
    values = outs if create_graph else [_constant(o) for o in outs]
    result = [_or_zeros(g, x) for g, x in zip(grads, inputs_t, strict=True)]
    return _like(out, values), _like(inputs, result)


def hvp(func: Callable[..., Any], inputs: Any, v: Any) -> Tuple[Any, Any]:
    """``(func(*inputs), H @ v)`` for a function with one-element output: a Hessian-vector product.

    Forward mode over reverse mode: the gradient is computed with the inputs carrying ``v`` as
    tangents, so its tangent is the derivative of the gradient along v, which is H @ v.

    :param func: a function of tensors returning a one-element tensor.
    :param inputs: the point: a tensor or a tuple of them.
    :param v: the direction: one per input, shaped like it.
    """
    inputs_t = _tuple(inputs, "inputs")
    vs = _tuple(v, "v")
    _same_structure(inputs_t, vs, "v", "inputs")
    out, hvps = _forward_over_reverse(func, _grad_inputs(inputs_t, False), vs)
    return _constant(out), _like(inputs, hvps)


def _forward_over_reverse(func: Callable[..., Any], xs: List[Any], vs: Tuple[Any, ...]) -> Tuple[Any, List[Any]]:
    """``func(*xs)`` and the blocks of H @ v, one per x (zeros where func does not use x): the
    tangents, along ``vs``, of the gradient of func's one-element output."""
    # HINT: inside forward_ad.dual_level(), make each x dual with its v, call func, take
    # HINT: grad(out, duals, allow_unused=True): each gradient's tangent is a block of H @ v.
    # HINT: _or_zeros(t, x) gives zeros shaped like x where t is None (func does not use x).
    # BEGIN SOLUTION 5.4: forward mode over reverse mode
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(x, t) for x, t in zip(xs, vs, strict=True)]
        out = func(*duals)
        if not isinstance(out, Variable) or out.history is None:
            raise RuntimeError("hvp: func must return a single tensor that depends on the inputs")
        grads = grad(out, duals, allow_unused=True)
        hvps = [
            _or_zeros(None if g is None else forward_ad.unpack_dual(g).tangent, x)
            for g, x in zip(grads, xs, strict=True)
        ]
    return out, hvps
    # END SOLUTION 5.4


# -- helpers ---------------------------------------------------------------------------------


def _tuple(x: Any, name: str) -> Tuple[Any, ...]:
    xs = tuple(x) if isinstance(x, (tuple, list)) else (x,)
    for i, t in enumerate(xs):
        if not isinstance(t, Variable):
            raise TypeError(f"{name} must be a tensor or a tuple of tensors, but element {i} is a {type(t).__name__}")
    return xs


def _same_structure(xs: Tuple[Any, ...], ys: Tuple[Any, ...], name: str, other: str) -> None:
    if len(xs) != len(ys):
        raise RuntimeError(f"expected one entry of {name} per entry of {other}: got {len(ys)} for {len(xs)}")
    for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
        if x._grad_meta() != y._grad_meta():
            raise RuntimeError(
                f"entry {i} of {name} must have the shape of entry {i} of {other}: got a {y._describe()} "
                f"for a {x._describe()}"
            )


def _outputs(out: Any, name: str) -> List[Any]:
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    for i, o in enumerate(outs):
        if not isinstance(o, Variable):
            raise TypeError(f"{name}: the function must return tensors, but output {i} is a {type(o).__name__}")
    return outs


def _grad_inputs(inputs: Tuple[Any, ...], create_graph: bool) -> List[Any]:
    """Leaves to differentiate with respect to: the inputs themselves where they are already
    in the graph and the result should stay differentiable, else new leaves sharing their data."""
    xs = []
    for x in inputs:
        if create_graph and x.history is not None:
            xs.append(x)
        else:
            leaf = x._alias()
            leaf._set_history(History(), 0)
            xs.append(leaf)
    return xs


def _constant(x: Any) -> Any:
    """x without history (the same data)."""
    return x._alias() if x.history is not None else x


def _or_zeros(t: Any, like: Any) -> Any:
    return like._zero_grad(like._grad_meta()) if t is None else t


def _like(template: Any, values: List[Any]) -> Any:
    """values as a tuple if template is a tuple or list, else the one value."""
    return tuple(values) if isinstance(template, (tuple, list)) else values[0]


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
    ``create_graph=True``) with respect to both the inputs and the output gradients.

    :param fn: a function of tensors returning a tensor or a tuple of them.
    :param inputs: a tensor or a tuple of them (those with requires_grad are checked).
    :param grad_outputs: the output gradients (default: random, from seed).
    :param eps: the step of the central differences.
    :param atol: the absolute tolerance.
    :param rtol: the tolerance relative to the numeric value.
    :param raise_exception: raise GradcheckError on a mismatch (else return False).
    :param seed: the seed of the random output gradients.
    :returns: True when the second derivatives agree.
    """
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
        live = [(o, g) for o, g in zip(outs, gs, strict=True) if o.history is not None]
        grads = grad(
            [o for o, _ in live], [xs[i] for i in wrt], [g for _, g in live], create_graph=True, allow_unused=True
        )
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps, atol, rtol, raise_exception, seed=seed)
