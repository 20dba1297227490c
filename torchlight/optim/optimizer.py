"""Modules 1, 2 and 4: what every optimizer shares, as ``torch.optim.Optimizer``.

An optimizer holds parameter groups: dicts with a ``"params"`` list and the settings for those
parameters (``lr``, ``momentum``, ...), so that parts of a model can train with different settings.
Its ``state`` keeps, per parameter, what the method carries from one step to the next (SGD's
velocity, Adam's moment estimates); ``state_dict()`` and ``load_state_dict()`` save and restore the
settings and that state, so that training can stop and resume where it was.

A parameter is a ``Parameter`` (what ``model.parameters()`` gives), or a Scalar or Tensor leaf
itself; its value is a Scalar (module 1) or a Tensor. A step changes the value in place under
``no_grad``: the model keeps the very same objects, and ``.grad`` stays until ``zero_grad()``.
"""

import numbers
from typing import Any, Dict, Iterable, List, Optional

from ..autograd.grad_mode import no_grad
from ..nn.module import Module, Parameter
from ..scalar_variable import Scalar

__all__ = ["Optimizer"]


def value_of(param: Any) -> Any:
    """The Scalar or Tensor that ``param`` (a Parameter, or the value itself) stands for."""
    return param.value if isinstance(param, Parameter) else param


def check_number(name: str, value: Any) -> float:
    """``value`` as a float; TypeError naming ``name`` when it is not a real number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} ({value!r})")
    return float(value)


def _describe(x: Any) -> str:
    return f"{type(x).__name__} of shape {tuple(x.shape)}" if hasattr(x, "shape") else type(x).__name__


class Optimizer:
    """Base class: parameter groups, per-parameter state, ``zero_grad``, ``state_dict``.

    A subclass passes its default settings to ``__init__``, checks a group's settings in
    ``check_group`` and defines ``_update`` (one parameter's step) or ``step``.

    :param params: the parameters to update: an iterable of Parameters (``model.parameters()``),
        or of dicts, each a parameter group with ``"params"`` and its own settings.
    :param defaults: the subclass's settings, for groups that do not give their own.
    """

    def __init__(self, params: Iterable[Any], defaults: Dict[str, Any]):
        name = type(self).__name__
        if isinstance(params, (Parameter, Scalar, Module)) or hasattr(params, "_data") or isinstance(params, dict):
            raise TypeError(
                f"params argument given to the optimizer should be an iterable of Parameters or dicts, "
                f"but got {type(params).__name__}" + ("; pass model.parameters()" if isinstance(params, Module) else "")
            )
        try:
            groups = list(params)
        except TypeError:
            raise TypeError(
                f"params argument given to {name} should be an iterable of Parameters or dicts, "
                f"but got {type(params).__name__}"
            ) from None
        if not groups:
            raise ValueError(f"{name} got an empty parameter list; pass model.parameters()")
        self.defaults = dict(defaults)
        self.state: Dict[Any, Dict[str, Any]] = {}  # per parameter (a Parameter, Scalar or Tensor)
        self.param_groups: List[Dict[str, Any]] = []
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def check_group(self, group: Dict[str, Any]) -> None:
        """Raise ValueError or TypeError for a group's bad settings (each subclass checks its own)."""

    def add_param_group(self, param_group: Dict[str, Any]) -> None:
        """Add a group (``{"params": [...], "lr": ...}``); settings it leaves out take the defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, got {type(param_group).__name__}")
        if "params" not in param_group:
            raise ValueError('a parameter group needs a "params" entry (a list of parameters)')
        params = param_group["params"]
        if isinstance(params, (Parameter, Scalar)) or hasattr(params, "_data"):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but got a set")
        else:
            params = list(params)
        for i, p in enumerate(params):
            value = value_of(p)
            if not (isinstance(value, Scalar) or hasattr(value, "_data")):
                raise TypeError(
                    f"optimizer can only optimize Parameters, Scalars and Tensors, but params[{i}] is "
                    f"{type(p).__name__}" + (f" holding {type(value).__name__}" if value is not p else "")
                )
            if hasattr(value, "_data") and not value.is_leaf:
                raise ValueError(f"can't optimize a non-leaf Tensor (params[{i}], {_describe(value)})")
        ids = [id(p) for p in params]
        if len(set(ids)) != len(ids):
            raise ValueError("a parameter group contains the same parameter twice; pass each once")
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if seen & set(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        group = dict(self.defaults)
        group.update(param_group)
        group["params"] = params
        self.check_group(group)
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's gradient before the next backward: ``.grad = None``, or with
        ``set_to_none=False`` zeros in its place."""
        for group in self.param_groups:
            for p in group["params"]:
                value = value_of(p)
                if set_to_none or value.grad is None:
                    value.grad = None
                elif isinstance(value.grad, (int, float)):  # a Scalar's gradient is a float
                    value.grad = 0.0
                else:
                    with no_grad():
                        value.grad.zero_()

    def step(self) -> None:
        """Move each parameter with a gradient by one update (the subclass's ``_update``), in
        place; ``.grad`` stays. A subclass defines ``_update``, or ``step`` itself (as SGD does)."""
        if type(self)._update is Optimizer._update:
            raise NotImplementedError(f"{type(self).__name__} does not define step()")
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    value: Any = value_of(p)  # a Scalar or a Tensor
                    if value.grad is not None:
                        self._update(p, value, group)

    def _update(self, p: Any, value: Any, group: Dict[str, Any]) -> None:
        """Update one parameter: ``p`` as given, ``value`` its Scalar or Tensor (with a gradient)."""
        raise NotImplementedError

    # -- saving and restoring ------------------------------------------------------------------

    def state_dict(self) -> Dict[str, Any]:
        """The settings and state, as ``torch.optim``: ``{"state": {index: {...}}, "param_groups":
        [{..., "params": [index, ...]}]}``, parameters numbered in group order; values are copies."""
        index: Dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            saved = {k: v for k, v in group.items() if k != "params"}
            saved["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(saved)
        state = {}
        for group in self.param_groups:
            for p in group["params"]:
                if p in self.state:
                    state[index[id(p)]] = {k: _copy(v) for k, v in self.state[p].items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Restore what ``state_dict()`` gave, for the same parameters in the same groups. Every
        value is checked first: on an error nothing is loaded."""
        name = type(self).__name__
        if not isinstance(state_dict, dict) or not {"state", "param_groups"} <= set(state_dict):
            raise ValueError(
                f"{name}.load_state_dict expects a dict with 'state' and 'param_groups' (what "
                f"state_dict() gives), got {_keys(state_dict)}"
            )
        saved_groups = state_dict["param_groups"]
        if not isinstance(saved_groups, (list, tuple)) or len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"loaded state dict has a different number of parameter groups ({_len(saved_groups)}) "
                f"than the optimizer ({len(self.param_groups)})"
            )
        by_index: Dict[Any, Any] = {}
        for g, (saved, group) in enumerate(zip(saved_groups, self.param_groups, strict=True)):
            ids = saved.get("params") if isinstance(saved, dict) else None
            if not isinstance(ids, (list, tuple)) or len(ids) != len(group["params"]):
                raise ValueError(
                    f"loaded state dict contains a parameter group ({g}) that doesn't match the size of "
                    f"optimizer's group: {_len(ids)} parameters saved, {len(group['params'])} here"
                )
            by_index.update(zip(ids, group["params"], strict=True))
        new_state: Dict[Any, Dict[str, Any]] = {}
        saved_state = state_dict["state"]
        if not isinstance(saved_state, dict):
            raise ValueError(f"state_dict['state'] must be a dict, got {type(saved_state).__name__}")
        for key, entry in saved_state.items():
            if key not in by_index:
                raise ValueError(f"state_dict['state'] has an entry for parameter {key!r}, which no group lists")
            if not isinstance(entry, dict):
                raise ValueError(f"state_dict['state'][{key!r}] must be a dict, got {type(entry).__name__}")
            p = by_index[key]
            where = f"state_dict['state'][{key!r}]"
            new_state[p] = {k: _restore(v, value_of(p), f"{where}[{k!r}]") for k, v in entry.items()}
        new_groups = []
        for saved, group in zip(saved_groups, self.param_groups, strict=True):
            new_group = {k: v for k, v in saved.items() if k != "params"}
            new_group["params"] = group["params"]
            self.check_group(new_group)
            new_groups.append(new_group)
        self.state = new_state
        self.param_groups = new_groups

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join(lines) + "\n)"


def _keys(x: Any) -> str:
    return f"a dict with keys {sorted(map(str, x))}" if isinstance(x, dict) else type(x).__name__


def _len(x: Any) -> Optional[int]:
    try:
        return len(x)
    except TypeError:
        return None


def _copy(value: Any) -> Any:
    """A copy of a state value (a Tensor, or a number) that later steps leave unchanged."""
    clone = getattr(value, "clone", None)
    return clone() if clone is not None and hasattr(value, "_data") else value


def _restore(saved: Any, value: Any, where: str) -> Any:
    """A saved state value, checked against the parameter value it belongs to: a tensor must have the
    parameter's shape and is copied onto its backend; numbers stay numbers."""
    if hasattr(saved, "_data"):
        if not hasattr(value, "_data"):
            raise ValueError(f"{where} is a Tensor, but its parameter is a {type(value).__name__}")
        if tuple(saved.shape) != tuple(value.shape) and saved.shape != ():
            raise ValueError(
                f"{where} has shape {tuple(saved.shape)}, but its parameter has shape {tuple(value.shape)}"
            )
        return saved.detach().to(value.backend).clone()
    if isinstance(saved, bool) or not isinstance(saved, numbers.Real):
        raise ValueError(f"{where} must be a Tensor or a number, got {type(saved).__name__}")
    return saved
