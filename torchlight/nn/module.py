"""Module 0: Module and Parameter, the tree that every network is built from.

A Module owns Parameters (the values an optimizer changes) and child Modules, both found by
attribute assignment: ``self.layer1 = Linear(2, 3)`` registers a child, ``self.w =
Parameter(x)`` a parameter. Walking that tree gives dotted names (``"layer1.weight"``),
switches train/eval mode everywhere at once, and saves and restores every value.
"""

import copy
import numbers
from collections.abc import Mapping
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple

import numpy as np


class Parameter:
    """A value that a Module owns and an optimizer updates (a Scalar, or later a Tensor).

    Modules hand out the Parameter itself; the current value is ``p.value``, and
    ``p.update(x)`` replaces it.

    :param value: a Scalar or Tensor.
    :param name: a name for it (None: none).
    """

    def __init__(self, value: Any, name: Optional[str] = None):
        self.name = name
        self.value: Any = None
        self.update(value)

    def update(self, value: Any) -> None:
        """Replace the value; a Tensor is switched to ``requires_grad=True`` so it gets ``.grad``."""
        if isinstance(value, Parameter):
            raise TypeError("Parameter(...) needs a value (a Scalar or Tensor), got another Parameter; use its .value")
        if isinstance(value, Module):
            raise TypeError(f"Parameter(...) needs a value (a Scalar or Tensor), got the module {type(value).__name__}")
        # Scalars are always in the graph; a Tensor records gradients only when asked to.
        requires_grad_ = getattr(value, "requires_grad_", None)
        if requires_grad_ is not None:
            requires_grad_(True)
        self.value = value

    def __repr__(self) -> str:
        return f"Parameter({self.value!r})" if self.name is None else f"Parameter({self.value!r}, name={self.name!r})"

    def __str__(self) -> str:
        return str(self.value)

    # A Parameter stands for its value in expressions, as PyTorch's (a Tensor) does: ``self.w * x``,
    # ``self.w.shape``, ``self.w[0].item()``, ``param -= lr * param.grad``, ``param.grad = None``.
    # (Its own operators are added below the class.)

    def __getattr__(self, name: str) -> Any:
        value = self.__dict__.get("value")
        if name.startswith("_") or value is None:  # (private names: never the value's)
            raise AttributeError(f"'Parameter' object has no attribute '{name}'")
        return getattr(value, name)

    def __setattr__(self, name: str, v: Any) -> None:
        if name in _VALUE_ATTRIBUTES:
            setattr(self.value, name, v)
        else:
            object.__setattr__(self, name, v)

    def __iadd__(self, other: Any) -> "Parameter":
        self.value.add_(_value_of(other))
        return self

    def __isub__(self, other: Any) -> "Parameter":
        self.value.sub_(_value_of(other))
        return self

    def __imul__(self, other: Any) -> "Parameter":
        self.value.mul_(_value_of(other))
        return self

    def __itruediv__(self, other: Any) -> "Parameter":
        self.value.div_(_value_of(other))
        return self


_VALUE_ATTRIBUTES = ("grad", "data", "requires_grad")  # set on the value: p.grad = None clears its gradient


def _value_of(x: Any) -> Any:
    return x.value if isinstance(x, Parameter) else x


def _forwarded(op: str) -> Any:
    def method(self: Parameter, *args: Any) -> Any:
        return getattr(self.value, op)(*[_value_of(a) for a in args])

    method.__name__ = op
    return method


for _op in (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
    "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__lt__", "__gt__", "__le__", "__ge__",
    "__getitem__", "__setitem__", "__float__", "__int__", "__index__",
):  # fmt: skip
    setattr(Parameter, _op, _forwarded(_op))


class _IncompatibleKeys(NamedTuple):
    """What ``load_state_dict(strict=False)`` could not match (as PyTorch returns it)."""

    missing_keys: List[str]
    unexpected_keys: List[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"


class Module:
    """Base class of every network piece. Subclasses call ``super().__init__()`` first,
    assign children and Parameters as attributes, and define ``forward``.
    """

    training: bool

    def __init__(self) -> None:
        # object.__setattr__: our own __setattr__ needs these dicts to exist already.
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "training", True)

    # -- registration ------------------------------------------------------------------

    def _check_name(self, kind: str, name: Any) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"cannot assign {kind} before Module.__init__() call: "
                f"call super().__init__() first in {type(self).__name__}.__init__"
            )
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string, got {type(name).__name__}")
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain ".", got "{name}"')

    def add_module(self, name: str, module: Optional["Module"]) -> None:
        """Register ``module`` as the child called ``name`` (None leaves an empty slot)."""
        self._check_name("module", name)
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    def register_parameter(self, name: str, param: Optional[Parameter]) -> None:
        """Register ``param`` as the parameter called ``name`` (None leaves an empty slot)."""
        self._check_name("parameter", name)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(torchlight.nn.Parameter or None required)"
            )
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and param.name is None:
            param.name = name
        self._parameters[name] = param

    def add_parameter(self, name: str, value: Any) -> Parameter:
        """Wrap ``value`` in a Parameter, register it as ``name`` and return it (MiniTorch's spelling)."""
        param = Parameter(value, name)
        self.register_parameter(name, param)
        return param

    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        modules = self.__dict__.get("_modules")
        if isinstance(value, Parameter):
            self._check_name("parameters", name)  # (it also checks that __init__ made the dicts)
            self.__dict__.pop(name, None)
            self.__dict__["_modules"].pop(name, None)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(torchlight.nn.Parameter or None expected)"
                )
            params[name] = None
        elif isinstance(value, Module):
            self._check_name("module", name)
            self.__dict__.pop(name, None)
            self.__dict__["_parameters"].pop(name, None)
            self.__dict__["_modules"][name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' "
                    "(torchlight.nn.Module or None expected)"
                )
            modules[name] = None
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # Only called when ordinary lookup fails: look among the registered values.
        d = self.__dict__
        if name in d.get("_parameters", ()):
            return d["_parameters"][name]
        if name in d.get("_modules", ()):
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._modules))

    # -- walking the tree --------------------------------------------------------------

    def named_children(self) -> Iterator[Tuple[str, "Module"]]:
        """The direct children as (name, module) pairs, in assignment order.

        ``self._modules`` holds them (a dict: name -> module). A slot set to None is skipped, and a
        module registered under two names is given once, under the first.
        """
        # BEGIN SOLUTION 0.3
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module
        # END SOLUTION 0.3

    def children(self) -> Iterator["Module"]:
        """The direct children."""
        # BEGIN SOLUTION 0.3
        for _, module in self.named_children():
            yield module
        # END SOLUTION 0.3

    def named_modules(self, prefix: str = "") -> Iterator[Tuple[str, "Module"]]:
        """This module (named ``prefix``) and every descendant, with dotted names, each once.

        A child's name is its parent's and its own joined by a dot (``"layer1.inner"``), or its own
        alone under a parent named ``""``.
        """
        # BEGIN SOLUTION 0.3
        seen: set[int] = set()
        stack: List[Tuple[str, Module]] = [(prefix, self)]
        # HINT: depth first, children in assignment order (the order PyTorch gives); a module
        # reached twice is given once.
        while stack:
            name, module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            yield name, module
            kids = [(f"{name}.{k}" if name else k, m) for k, m in module._modules.items() if m is not None]
            stack.extend(reversed(kids))
        # END SOLUTION 0.3

    def modules(self) -> Iterator["Module"]:
        """This module and every descendant (as PyTorch; ``children()`` gives only the direct ones)."""
        # BEGIN SOLUTION 0.3
        for _, module in self.named_modules():
            yield module
        # END SOLUTION 0.3

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[Tuple[str, Parameter]]:
        """Every Parameter with its dotted name (``"layer1.weight"``), each shared one once.

        This module's own come first (``self._parameters``: name -> Parameter, in assignment order;
        a slot set to None is skipped), then each descendant's, in ``named_modules`` order. A
        Parameter reached twice is given once, under its first name. ``prefix`` names this module
        (``prefix="x"`` gives ``"x.weight"``); ``recurse=False`` gives its own Parameters only.
        """
        # BEGIN SOLUTION 0.3
        seen: set[int] = set()
        walk = self.named_modules(prefix) if recurse else iter([(prefix, self)])
        for mod_name, module in walk:
            for name, param in module._parameters.items():
                if param is None or id(param) in seen:
                    continue
                seen.add(id(param))
                yield (f"{mod_name}.{name}" if mod_name else name), param
        # END SOLUTION 0.3

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every Parameter of this module and its descendants: ``named_parameters``'s, without names."""
        # BEGIN SOLUTION 0.3
        for _, param in self.named_parameters(recurse=recurse):
            yield param
        # END SOLUTION 0.3

    # -- modes and calling -------------------------------------------------------------

    def train(self, mode: bool = True) -> "Module":
        """Set training mode (``mode=False``: evaluation) here and in every descendant; returns self."""
        if not isinstance(mode, bool):
            raise ValueError(f"training mode is expected to be boolean, got {type(mode).__name__}")
        # BEGIN SOLUTION 0.3
        self.training = mode
        for child in self.children():
            child.train(mode)
        return self
        # END SOLUTION 0.3

    def eval(self) -> "Module":
        """Set evaluation mode here and in every descendant (``train(False)``); returns self."""
        # BEGIN SOLUTION 0.3
        return self.train(False)
        # END SOLUTION 0.3

    def zero_grad(self) -> None:
        """Clear ``.grad`` of every parameter's value (set it to None)."""
        for param in self.parameters():
            if hasattr(param.value, "grad"):
                param.value.grad = None

    def apply(self, fn: Any) -> "Module":
        """Call ``fn(module)`` on every descendant and then on this module (as PyTorch: e.g. to
        initialize weights); returns self."""
        if not callable(fn):
            raise TypeError(f"Module.apply(fn): fn must be callable, got {type(fn).__name__}")
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        """Switch gradient recording of every parameter on or off (off: frozen); returns self."""
        if not isinstance(requires_grad, bool):
            raise TypeError(f"requires_grad_(requires_grad): expected True or False, got {requires_grad!r}")
        for param in self.parameters():
            param.requires_grad = requires_grad
        return self

    def to(self, *args: Any, **kwargs: Any) -> "Module":
        """Move every parameter to a device or backend (``model.to(device)``, ``model.to("fast")``),
        in place as PyTorch does, so an optimizer made before keeps working; returns self. A dtype
        must be a floating one (float32 and float64 both compute in float64, as for tensors)."""
        moves = []
        for name, param in self.named_parameters():
            value = param.value
            if not hasattr(value, "backend"):
                raise TypeError(
                    f"Module.to: parameter '{name}' holds a {type(value).__name__}; only Tensor parameters can move"
                )
            moved = value.to(*args, **kwargs)
            if not moved.is_floating_point():
                raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired dtype={moved.dtype}")
            moves.append((param, value, moved))
        # Every argument is checked before any parameter changes.
        for param, value, moved in moves:
            if moved is not value:
                leaf = moved.detach()
                grad = value.grad
                param.update(leaf)  # a new leaf on the new backend, still the same Parameter
                if grad is not None:
                    leaf.grad = grad.to(leaf.backend)
        return self

    def cpu(self) -> "Module":
        """Every parameter on the CPU (``to("cpu")``); returns self."""
        return self.to("cpu")

    def cuda(self) -> "Module":
        """Every parameter on the GPU (``to("cuda")``; an error says why where it cannot run); returns self."""
        return self.to("cuda")

    def double(self) -> "Module":
        """Float64 parameters, which torchlight's always are; returns self."""
        return self.to(_float64())

    def float(self) -> "Module":
        """As PyTorch's float32 parameters: torchlight keeps float64 (see docs/pytorch.md); returns self."""
        return self.to(_float64())

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation; every subclass defines it."""
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward``: write ``model(x)``, never ``model.forward(x)``."""
        return self.forward(*args, **kwargs)

    # -- saving and loading ------------------------------------------------------------

    def state_dict(self) -> Dict[str, Any]:
        """Every parameter's value by dotted name, copied so that later training leaves it unchanged."""
        return {name: _snapshot(param.value) for name, param in self.named_parameters()}

    def load_state_dict(self, state_dict: Mapping, strict: bool = True) -> _IncompatibleKeys:
        """Copy values from ``state_dict`` into the parameters of the same dotted name.

        With ``strict=True`` missing and unexpected keys are an error; with ``strict=False``
        they are returned as ``(missing_keys, unexpected_keys)``. A shape or type mismatch is
        always an error. Values are converted to what each parameter holds: a number for a
        Scalar; for a Tensor, a numpy array or nested lists of numbers become a tensor on the
        parameter's backend, and a tensor on another backend is moved there. Every value is
        checked and converted before any is loaded: nothing is loaded when an error is raised.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict).__name__}.")
        params = dict(self.named_parameters())
        missing = [k for k in params if k not in state_dict]
        unexpected = [k for k in state_dict if k not in params]
        errors = []
        if strict:
            if missing:
                errors.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ".")
            if unexpected:
                errors.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ".")
        loaded = {}
        for name, param in params.items():
            if name in state_dict:
                problem = _mismatch(name, param.value, state_dict[name])
                if problem is None:
                    try:
                        loaded[name] = _loaded(param.value, state_dict[name])
                    except (TypeError, ValueError) as err:
                        problem = f"type mismatch for {name}: {err}"
                if problem:
                    errors.append(problem)
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors))
        for name, value in loaded.items():
            params[name].update(value)
        return _IncompatibleKeys(missing, unexpected)

    # -- printing ----------------------------------------------------------------------

    def extra_repr(self) -> str:
        """Settings shown inside this module's repr, e.g. ``in_features=2, out_features=3``."""
        return ""

    def __repr__(self) -> str:
        lines = [line for line in self.extra_repr().split("\n") if line]
        for name, module in self._modules.items():
            child = repr(module).replace("\n", "\n  ")
            lines.append(f"({name}): {child}")
        head = type(self).__name__ + "("
        if not lines:
            return head + ")"
        if len(lines) == 1 and not self._modules:
            return head + lines[0] + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"


def _float64() -> Any:
    from .. import dtypes  # (here, not at the top: module 0 runs before tensors exist)

    return dtypes.float64


def _holds_a_number(value: Any) -> bool:
    """True for a value that holds one number in ``.data`` and has no shape: module 1's Scalar.
    (Recognised by what it has, not by its class: Module is module 0's, and Scalar arrives with
    module 1.)"""
    return isinstance(getattr(value, "data", None), numbers.Real) and not hasattr(value, "shape")


def _snapshot(value: Any) -> Any:
    """A copy of value that later updates to the original cannot change."""
    if _holds_a_number(value):
        return value.detach()  # a Scalar's detach is a new constant: its float shares nothing
    detach = getattr(value, "detach", None)
    if detach is not None:
        # A Tensor: drop its history, then copy its storage (detach alone would share it).
        value = detach()
        clone = getattr(value, "clone", None)
        if clone is not None:
            return clone()
    return copy.deepcopy(value)


def _shape(value: Any) -> Optional[Tuple[int, ...]]:
    shape = getattr(value, "shape", None)
    return None if shape is None else tuple(shape)


def _is_tensor(value: Any) -> bool:
    # Imported here: Module is module 0's, and Tensor arrives only with module 2.
    from ..tensor import Tensor

    return isinstance(value, Tensor)


def _as_array(new: Any, shape: Tuple[int, ...]) -> np.ndarray:
    """``new`` (a numpy array, nested lists of numbers or a number) as a float64 array for a
    Tensor parameter of ``shape``; TypeError saying why when it is none of these."""
    if not (
        isinstance(new, (np.ndarray, list, tuple)) or (isinstance(new, numbers.Real) and not isinstance(new, bool))
    ):
        raise TypeError(
            f"expected a Tensor, a numpy array or nested lists of numbers with shape {shape}, got {type(new).__name__}"
        )
    try:
        array = np.asarray(new)
    except ValueError as err:  # ragged nested lists
        raise TypeError(f"cannot read {type(new).__name__} as an array ({err})") from None
    if array.dtype.kind not in "fiu":
        raise TypeError(f"expected numbers, got {type(new).__name__} of dtype {array.dtype}")
    return array.astype(np.float64)


def _mismatch(name: str, current: Any, new: Any) -> Optional[str]:
    """Why ``new`` cannot replace the parameter value ``current`` (None if it can)."""
    if _holds_a_number(current):
        if _holds_a_number(new) or (isinstance(new, numbers.Real) and not isinstance(new, bool)):
            return None
        if isinstance(new, np.ndarray) and new.shape == () and new.dtype.kind in "fiu":
            return None
        return f"type mismatch for {name}: expected a Scalar or a number, got {type(new).__name__}"
    if _is_tensor(current) and not _is_tensor(new):
        try:
            new = _as_array(new, current.shape)
        except TypeError as err:
            return f"type mismatch for {name}: {err}"
    a, b = _shape(current), _shape(new)
    if a is not None and b is not None and a != b:
        return (
            f"size mismatch for {name}: copying a param with shape {b} from checkpoint, "
            f"the shape in current model is {a}."
        )
    if a is not None and b is None:
        return f"type mismatch for {name}: expected a value with shape {a}, got {type(new).__name__}"
    return None


def _loaded(current: Any, new: Any) -> Any:
    """The value a parameter holds after loading ``new``: a fresh leaf, sharing nothing with ``new``,
    converted to what ``current`` is (a Scalar, or a Tensor on ``current``'s backend)."""
    if _holds_a_number(current):
        return type(current)(float(new.data if _holds_a_number(new) else new))  # a new leaf Scalar
    if _is_tensor(current):
        if not _is_tensor(new):
            return current.new_tensor(np.array(new, dtype=np.float64))  # a copy: shares nothing
        return _snapshot(new.detach().to(current.backend))
    return _snapshot(new)
