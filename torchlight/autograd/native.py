"""Module 3: the fused native ``Function.apply``, where it is built, and the one place that says which apply runs.

``Function.apply`` (module 1, ``function.py``) is Python that a student reads: unpack the arguments,
make a Context, run forward with recording off, wrap the outputs, record their History. Every
operation pays for those steps, a couple of microseconds of interpreted code. The C extension
``torchlight._native_apply`` (source: ``torchlight/_native/apply.c``, built by ``pip install -e .``
where a C compiler is found) does the same steps in one call into C, calling the same Python
methods (forward, module 5's extension points, a Function's own overrides) wherever the Python
apply calls them. Results, graphs and error messages are the same bit for bit
(tests/module3/test_native_apply.py runs a battery both ways and compares).

This file registers it on ``Function`` (``apply`` is an extension point) when it is importable and
the environment variable ``TORCHLIGHT_NATIVE`` is not ``0``; ``import torchlight`` imports this
file. ``path()`` says which apply runs ("native" or "python") and ``reason()`` why.

It also does, in C, the helpers the backward walk calls at each node (``walk.c``:
``History.input_nodes``, ``History.backward_results``, ``Variable.parents``, all extension points);
the walk itself, ``chain_rule``, ``topological_sort`` and ``backpropagate``, stays the Python a
student writes.

The same extension launches the fast backend's small kernels (``backends/fast_launch.py``, under
the same switch): ``launches()`` says whether it does.
"""

import importlib
import itertools
import os
import types
from typing import Any, Dict, Optional, Tuple

from ..backends import fast_launch
from ..extension import extends
from ..scalar_variable import Scalar
from ..tensor import Tensor
from . import function, grad_mode
from .function import Context, Function, History
from .variable import Variable

__all__ = ["launches", "path", "reason", "stats", "switch"]

ENV = "TORCHLIGHT_NATIVE"

# The Python apply: the native one hands it the calls it leaves alone (a Parameter among the
# arguments); it runs everywhere else. (A reload of this file finds the native one registered.)
_python_apply = vars(Function)["apply"].__func__
_registered = not isinstance(_python_apply, types.FunctionType)

_compiled: Any = None
_reason: str
# The members the native layer puts in place, and both versions of each (for switch())
_SWITCHED = [(Function, "apply"), (History, "input_nodes"), (History, "backward_results"), (Variable, "parents")]
_python_members: list = []
_native_members: list = []


def _member(cls: type, name: str, module: Optional[str] = None) -> Any:
    """``cls``'s own member ``name`` (as stored: a classmethod stays one), if it is defined in ``module``."""
    member = vars(cls).get(name)
    if member is None:
        return None
    target = getattr(member, "__func__", getattr(member, "fget", member))
    if module is not None and getattr(target, "__module__", None) != module:
        return None
    return member


def _references() -> Dict[str, Any]:
    """What the native apply needs: the classes, the grad mode, and the methods whose common case
    it does itself; it checks on every call that the method in use is still the one given here."""
    refs: Dict[str, Any] = {
        "Variable": Variable,
        "Context": Context,
        "History": History,
        "Tensor": Tensor,
        "Scalar": Scalar,
        "grad_state": grad_mode._state,
        "function_globals": vars(function),
        "python_apply": _python_apply,
        "count_type": type(itertools.count()),
        "Context.__init__": _member(Context, "__init__", function.__name__),
        "History.__init__": _member(History, "__init__", function.__name__),
        "Function._record": _member(Function, "_record", function.__name__),
        "Variable._set_history": _member(Variable, "_set_history", "torchlight.autograd.variable"),
        "Tensor._forward_value": _member(Tensor, "_forward_value", "torchlight.tensor_variable"),
        "Tensor._wrap_output": _member(Tensor, "_wrap_output", "torchlight.tensor_variable"),
        "Tensor._version": _member(Tensor, "_version", "torchlight.tensor_autograd"),  # (module 5's)
        "Scalar._forward_value": _member(Scalar, "_forward_value", "torchlight.scalar_variable"),
        # module 5's versions of these two extension points (only those: apply.c does their steps)
        "Function._run_forward": _member(Function, "_run_forward", "torchlight.autograd.function_api"),
        "Function._saved_recorded": _member(Function, "_saved_recorded", "torchlight.autograd.inplace_tracking"),
    }
    return {k: v for k, v in refs.items() if v is not None}


def _walk_references() -> Dict[str, Any]:
    """What walk.c needs: Variable, the Python backward_results (for what it leaves), and the
    methods whose common case it does itself (it checks on every call that they are still these)."""
    refs = {
        "Variable": Variable,
        "History.backward_results": vars(History)["backward_results"],
        "History._check_result": _member(History, "_check_result", function.__name__),
        "History._recorded_node (module 1)": _member(History, "_recorded_node", function.__name__),
        "History._recorded_node (module 5)": _member(History, "_recorded_node", "torchlight.autograd.inplace_tracking"),
    }
    return {k: v for k, v in refs.items() if v is not None}


if os.environ.get(ENV, "1").strip() == "0":
    _reason = f"disabled by {ENV}=0"
elif _registered:
    _compiled = importlib.import_module("torchlight._native_apply")
    _reason = "built and enabled"
else:
    try:  # (the compiled module, if built: torchlight/_native_apply.*.so, made by setup.py)
        _compiled = importlib.import_module("torchlight._native_apply")
    except ImportError as e:
        _reason = f"not built (torchlight._native_apply: {e}); reinstall with a C compiler: pip install -e ."
    else:
        _compiled.init(_references())
        _python_members = [(cls, name, vars(cls)[name]) for cls, name in _SWITCHED]

        @extends(Function)
        class _NativeApply:
            apply: Any = classmethod(_compiled.apply)

        # The walk's helpers at each node (walk.c): what their C stands for, then them in its place.
        _compiled.walk_init(_walk_references())

        @extends(History)
        class _NativeWalk:
            input_nodes: Any = _compiled.input_nodes
            backward_results: Any = _compiled.backward_results

        @extends(Variable)
        class _NativeParents:
            parents: Any = property(_compiled.parents)

        _native_members = [(cls, name, vars(cls)[name]) for cls, name in _SWITCHED]
        _reason = "built and enabled"


def switch(on: bool) -> None:
    """Put the native layer in place (the apply, the walk's helpers, the kernel launch), or the
    Python it stands for: what ``TORCHLIGHT_NATIVE=0`` runs. For a benchmark that times both in
    one process (benchmarks/overhead.py); a program sets the environment variable instead."""
    if _compiled is None:
        return
    for cls, name, member in _native_members if on else _python_members:
        setattr(cls, name, member)
    fast_launch.enable(on)


def path() -> str:
    """Which ``Function.apply`` runs: "native" (the fused C apply) or "python" (function.py's)."""
    return "native" if _compiled is not None else "python"


def reason() -> str:
    """Why: "built and enabled", "disabled by TORCHLIGHT_NATIVE=0", or "not built (...)"."""
    return _reason


def launches() -> str:
    """How the fast backend launches its small kernels: "native" (from C: backends/fast_launch.py,
    the same extension) or "python" (numba's dispatcher); ``fast_launch.reason()`` says why."""
    return fast_launch.path()


def stats() -> Tuple[int, int]:
    """(calls of the native apply, calls it handed whole to the Python apply); (0, 0) on the Python path."""
    return _compiled.stats() if _compiled is not None else (0, 0)
