"""The fused native apply and the walk's helpers (torchlight/_native/apply.c and walk.c, registered
by torchlight/autograd/native.py).

- Where it is built and not switched off, it is the apply that runs, and its counter moves.
- It gives the Python apply's results bit for bit: the battery in native_battery.py (values,
  gradients, graphs, Contexts, versions, tangents, error messages) runs in two fresh processes,
  TORCHLIGHT_NATIVE=1 and TORCHLIGHT_NATIVE=0, and the two outputs must be equal.
- TORCHLIGHT_NATIVE=0, or a missing build, leaves the Python apply, and ``path()`` says so.
- The Python methods whose common case apply.c, walk.c or launch.c's Op does itself are pinned
  here by their source: a change to one fails below until the C follows it (then update the pin).
- ``native.switch`` puts the Python members back, and the native ones again.
"""

import ast
import hashlib
import inspect
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

import torchlight
from torchlight.autograd import Function, function, native

ROOT = Path(__file__).resolve().parents[2]
BATTERY = Path(__file__).with_name("native_battery.py")


def _child(code_or_path, native_env, *args, timeout=300):
    env = dict(os.environ, TORCHLIGHT_NATIVE=native_env)
    cmd = (
        [sys.executable, str(code_or_path), *args]
        if isinstance(code_or_path, Path)
        else [sys.executable, "-c", code_or_path]
    )
    run = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def _compiler_available():
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(cc) is not None


native_only = pytest.mark.skipif(native.path() != "native", reason=f"the native apply is not in use: {native.reason()}")


def test_a_built_extension_is_in_use_unless_switched_off():
    if os.environ.get("TORCHLIGHT_NATIVE", "1").strip() == "0":
        assert native.path() == "python" and native.reason() == "disabled by TORCHLIGHT_NATIVE=0"
    elif _compiler_available():  # pip install -e . builds it where a compiler is found (setup.py)
        assert native.path() == "native", native.reason()


@native_only
def test_the_native_apply_is_the_one_that_runs():
    from torchlight import _native_apply

    assert Function.apply.__func__ is _native_apply.apply
    assert native.reason() == "built and enabled"
    calls, fallbacks = native.stats()
    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sigmoid().sum()
    y.backward()
    after = native.stats()
    assert after[0] >= calls + 3 and after[1] == fallbacks  # forward's three ops at least; none handed back


@native_only
@native_only
def test_the_walks_helpers_are_native_and_switch_back():
    from torchlight.autograd import History, Variable

    assert vars(History)["input_nodes"] is native._compiled.input_nodes
    assert vars(Variable)["parents"].fget is native._compiled.parents
    x = torchlight.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    assert y.history.input_nodes() == [x, x] and y.parents == [x, x]
    native.switch(False)
    try:
        assert all(vars(cls)[name] is member for cls, name, member in native._python_members)
        assert native.launches() == "python"
        assert y.history.input_nodes() == [x, x] and y.parents == [x, x]
    finally:
        native.switch(True)
    assert all(vars(cls)[name] is member for cls, name, member in native._native_members)
    assert native.launches() == "native"


def test_a_parameter_is_handed_to_the_python_apply():
    p = torchlight.nn.Parameter(torchlight.tensor([1.0, 2.0]))
    before = native.stats()[1]
    (p.value * 1.0 + p).sum().backward()  # (Tensor.__add__ lifts p: the Parameter reaches apply)
    assert native.stats()[1] >= before
    assert p.value.grad.tolist() == [2.0, 2.0]


def test_switched_off_by_the_environment():
    out = _child("import torchlight.autograd.native as n; print(n.path()); print(n.reason())", "0")
    assert out.split("\n")[:2] == ["python", "disabled by TORCHLIGHT_NATIVE=0"]
    code = (
        "import torchlight; from torchlight.autograd import Function, function; "
        "print(Function.apply.__func__ is vars(function.Function)['apply'].__func__ and "
        "type(Function.apply.__func__).__name__ == 'function')"
    )
    assert _child(code, "0").strip() == "True"


def test_without_the_build_the_python_apply_runs():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["torchlight._native_apply"] = None  # as if it were not built: import fails
        import torchlight
        from torchlight.autograd import native
        x = torchlight.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        print(native.path(), x.grad.tolist())
        print(native.reason())
        """
    )
    out = _child(code, "1").split("\n")
    assert out[0] == "python [2.0, 4.0]"
    assert out[1].startswith("not built (torchlight._native_apply:")


@native_only
def test_native_and_python_give_the_same_results_bit_for_bit():
    on = json.loads(_child(BATTERY, "1"))
    off = json.loads(_child(BATTERY, "0"))
    assert on["path"] == "native" and off["path"] == "python"
    assert on["stats"][0] > 100 and off["stats"] == [0, 0]
    errors = {k: v for k, v in on["cases"].items() if isinstance(v, list) and v[:1] == ["battery error"]}
    assert not errors, on.get("tracebacks")
    assert on["cases"].keys() == off["cases"].keys()
    different = [name for name in on["cases"] if on["cases"][name] != off["cases"][name]]
    assert not different, f"native and Python apply differ in: {different}"


# -- what apply.c does itself, pinned --------------------------------------------------------------

# sha256 (first 16 hex digits) of each method's code: its source, dedented, parsed, without its
# docstring (a docstring is no step apply.c takes). If one of these changes, read the change against
# apply.c (the comment at its top lists what it does for each), make apply.c do the same, then put
# the new digest here.
PINNED = {
    "autograd/function.py: Function.apply": "7d385a057b6ded0b",
    "autograd/function.py: _unpack": "00ec6dea487f7214",
    "autograd/function.py: unheld": "a15f0a8d180f3a58",
    "autograd/function.py: _wrap": "0a49aa92eb4520ef",
    "autograd/function.py: _is_one_of": "e28d1584e11ee103",
    "autograd/function.py: Function._record": "9eabf06c7f04797f",
    "autograd/function.py: Context.__init__": "8e910efc1f35cb60",
    "autograd/function.py: History.__init__": "a28d95b210b19e67",
    "autograd/variable.py: Variable._set_history": "886e13e89c9e5a55",
    "tensor_variable.py: Tensor._forward_value": "0b4e00317c7adba8",
    "tensor_variable.py: Tensor._wrap_output": "1d274a27a176e7b1",
    "tensor_autograd.py: Tensor._version": "0088c2fd5ca15e5a",
    "scalar_variable.py: Scalar._forward_value": "49c566a49f55a528",
    "autograd/function_api.py: _FunctionAPI._run_forward": "2748da56a1d1ac31",
    "autograd/inplace_tracking.py: _InplaceFunction._saved_recorded": "f29ea3d8fae28d01",
    "autograd/inplace_tracking.py: snapshot_saved": "61f3a0c5cf172aff",
    "autograd/grad_mode.py: _State.__init__": "4dcacd845bafc7e8",
    # walk.c's
    "autograd/function.py: History.input_nodes": "073deec942c5541f",
    "autograd/function.py: History.backward_results": "876e3f348546d581",
    "autograd/function.py: History._check_result": "412e17a632546521",
    "autograd/variable.py: Variable.parents": "5e9c57fea261e65d",
    "autograd/inplace_tracking.py: _InplaceHistory._recorded_node": "f37954634aecda1c",
    # launch.c's Op
    "backends/base.py: TensorBackend.map": "165686247ec97ab7",
    "backends/base.py: TensorBackend.zip": "b2a0be74e57f1459",
    "backends/base.py: _broadcast_shapes": "877e58a24d936088",
    "tensor_data.py: TensorData._empty": "7def217b98608ba9",
    "tensor_data.py: TensorData._fresh": "b586490f21482713",
    "tensor_data.py: TensorData._unchecked": "802632b2ae8f596a",
    "tensor_data.py: TensorData.kernel_args": "7287ec29b6fd6114",
    "tensor_data.py: _contiguous_layout": "ca30de97bedc032a",
    "tensor.py: Tensor.__init__": "d9b1562338febaac",
    "tensor.py: Tensor._new": "42e613f1fb7b8440",
}


def _python_member(cls, name):
    """cls's own member ``name`` as the Python defines it (the native layer may have put its own there)."""
    for owner, member_name, member in native._python_members:
        if owner is cls and member_name == name:
            return member
    return vars(cls)[name]


def _pinned_objects():
    import importlib

    from torchlight import scalar_variable, tensor_data
    from torchlight.autograd import function_api, grad_mode, inplace_tracking, variable
    from torchlight.backends import base
    from torchlight.tensor_data import TensorData

    tensor = importlib.import_module("torchlight.tensor")  # (torchlight.tensor is also a function)

    return {
        "autograd/function.py: Function.apply": native._python_apply,
        "autograd/function.py: _unpack": function._unpack,
        "autograd/function.py: unheld": function.unheld,
        "autograd/function.py: _wrap": function._wrap,
        "autograd/function.py: _is_one_of": function._is_one_of,
        "autograd/function.py: Function._record": vars(function.Function)["_record"].__func__,
        "autograd/function.py: Context.__init__": function.Context.__init__,
        "autograd/function.py: History.__init__": function.History.__init__,
        "autograd/variable.py: Variable._set_history": variable.Variable._set_history,
        "tensor_variable.py: Tensor._forward_value": tensor.Tensor._forward_value,
        "tensor_variable.py: Tensor._wrap_output": vars(tensor.Tensor)["_wrap_output"].__func__,
        "tensor_autograd.py: Tensor._version": vars(tensor.Tensor)["_version"].fget,
        "scalar_variable.py: Scalar._forward_value": scalar_variable.Scalar._forward_value,
        "autograd/function_api.py: _FunctionAPI._run_forward": vars(function_api._FunctionAPI)["_run_forward"].__func__,
        "autograd/inplace_tracking.py: _InplaceFunction._saved_recorded": vars(inplace_tracking._InplaceFunction)[
            "_saved_recorded"
        ].__func__,
        "autograd/inplace_tracking.py: snapshot_saved": inplace_tracking.snapshot_saved,
        "autograd/grad_mode.py: _State.__init__": grad_mode._State.__init__,
        "autograd/function.py: History.input_nodes": _python_member(function.History, "input_nodes"),
        "autograd/function.py: History.backward_results": _python_member(function.History, "backward_results"),
        "autograd/function.py: History._check_result": vars(function.History)["_check_result"],
        "autograd/variable.py: Variable.parents": _python_member(variable.Variable, "parents").fget,
        "autograd/inplace_tracking.py: _InplaceHistory._recorded_node": vars(inplace_tracking._InplaceHistory)[
            "_recorded_node"
        ],
        "backends/base.py: TensorBackend.map": base.TensorBackend.map,
        "backends/base.py: TensorBackend.zip": base.TensorBackend.zip,
        "backends/base.py: _broadcast_shapes": base._broadcast_shapes.__wrapped__,
        "tensor_data.py: TensorData._empty": vars(TensorData)["_empty"].__func__,
        "tensor_data.py: TensorData._fresh": vars(TensorData)["_fresh"].__func__,
        "tensor_data.py: TensorData._unchecked": vars(TensorData)["_unchecked"].__func__,
        "tensor_data.py: TensorData.kernel_args": TensorData.kernel_args,
        "tensor_data.py: _contiguous_layout": tensor_data._contiguous_layout.__wrapped__,
        "tensor.py: Tensor.__init__": tensor.Tensor.__init__,
        "tensor.py: Tensor._new": tensor.Tensor._new,
    }


def _digest(fn):
    (node,) = ast.parse(textwrap.dedent(inspect.getsource(fn))).body
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        node.body = body[1:] or [ast.Pass()]
    return hashlib.sha256(ast.dump(node).encode()).hexdigest()[:16]


def test_the_steps_apply_c_does_itself_are_unchanged():
    changed = {}
    for name, fn in _pinned_objects().items():
        if _digest(fn) != PINNED[name]:
            changed[name] = _digest(fn)
    assert not changed, (
        "these methods changed since torchlight/_native/apply.c (or walk.c, or launch.c's Op) was written "
        "to do the same "
        f"steps; make it follow them, then update PINNED: {changed}"
    )
