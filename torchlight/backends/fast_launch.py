"""Module 3: the fast kernels' serial case launched from C, without numba's Python dispatcher.

A map, zip or reduce of a few elements costs some 2 microseconds of getting to the compiled code
(``fast._Kernel.__call__``, then numba's dispatcher working out the type of nine arguments) for a
few nanoseconds of arithmetic, and a training step is mostly such operations. ``native(kernel)``
wraps a ``fast._Kernel`` in a ``Launch`` of the native extension (``torchlight/_native/launch.c``,
built beside the fused apply): a call whose arguments are what the compiled part takes, and whose
size is below ``PARALLEL_THRESHOLD``, calls that same compiled part in C; every other call (the
parallel case, a reduction along long lines, an unusual array, a part that raises) goes to the
kernel, which does what it always did. Same function, same arguments: the same bits.

One step further out, ``backend.map(fn)`` and ``backend.zip(fn)`` (base.py's closures, which make
the result tensor and call the kernel) are handed out behind an ``Op`` of the same extension
(``TensorBackend._entry``, registered here): for tensors of this backend, no ``out`` and a result
of fewer than ``LONG_ROWS_MIN_SIZE`` elements, it makes the result as ``TensorData._empty`` and
``Tensor.__init__`` do and calls the Launch, in C; any other call goes to the closure.

Both are used where the extension is built and ``TORCHLIGHT_NATIVE`` is not 0 (the switch of the
whole native layer), and only after checking, once per process, that the extension reads numpy's
arrays as numpy does. ``torchlight.autograd.native.launches()`` says whether it is in use.
"""

import importlib
import os
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional

import numpy as np

from ..extension import extends
from . import base

__all__ = ["enable", "native", "path", "reason"]

ENV = "TORCHLIGHT_NATIVE"
_KINDS = {"map_part": 0, "zip_part": 1, "reduce_part": 2}


def _load() -> "tuple[Optional[Any], str]":
    """The extension module, if it can launch kernels here, and why (not)."""
    if os.environ.get(ENV, "1").strip() == "0":
        return None, f"disabled by {ENV}=0"
    try:
        compiled = importlib.import_module("torchlight._native_apply")
    except ImportError as e:
        return None, f"not built (torchlight._native_apply: {e}); reinstall with a C compiler: pip install -e ."
    if not hasattr(compiled, "Launch"):
        return None, "the built extension predates the kernel launch; reinstall: pip install -e ."
    # launch.c reads numpy's array fields without numpy's headers: check it reads them as numpy says.
    probe = np.arange(3, 10, dtype=np.float64)[1:]
    step = np.arange(8, dtype=np.int64)[::2]
    for array in (probe, step):
        expected = (array.ctypes.data, array.ndim, array.shape[0], array.strides[0])
        if tuple(compiled.fields(array)[:4]) != expected:
            return None, "the extension does not read this numpy's arrays as expected"
    return compiled, "built and enabled"


_compiled, _reason = _load()
_on = [_compiled is not None]  # enable()'s setting


def native(kernel: Any) -> Any:
    """``kernel`` (a ``fast._Kernel``) as a ``Launch`` that runs its serial case from C; the kernel
    itself where the extension is not in use or its part has no entry numba can give."""
    if _compiled is None:
        return kernel
    from . import fast

    try:
        result = kernel.part.get_compile_result(fast.PART_SIGNATURES[kernel.kind])
        address = result.library.get_pointer_to_function(result.fndesc.llvm_func_name)
    except (AttributeError, KeyError, TypeError, RuntimeError):  # not a numba dispatcher compiled so
        return kernel
    if not address:
        return kernel
    return _compiled.Launch(
        address,
        _KINDS[kernel.kind],
        kernel,
        np.ndarray,
        np.dtype(np.float64),
        np.dtype(np.int64),
        vars(fast),  # PARALLEL_THRESHOLD, LINES_MIN_LENGTH, LINES: read on each call, as _Kernel reads them
    )


def _op_refs() -> Dict[str, Any]:
    """What an Op needs: the classes and functions whose steps it takes (pinned in the tests)."""
    from .. import tensor_data
    from ..autograd.variable import Variable
    from ..tensor import _FLOAT64, Tensor

    return {
        "Tensor": Tensor,
        "TensorData": tensor_data.TensorData,
        "_Version": tensor_data._Version,
        "_contiguous_layout": tensor_data._contiguous_layout,
        "numpy.empty": np.empty,
        "Variable._next_id": Variable._next_id,
        "float64": _FLOAT64,
        "base": vars(base),
    }


if TYPE_CHECKING:
    _Backend = base.TensorBackend  # (the type checker reads the method below as TensorBackend's own)
else:
    _Backend = object


@extends(base.TensorBackend)
class _NativeEntry(_Backend):
    def _entry(self, op: Callable, kernel: Callable, arity: int) -> Callable:
        """``op`` behind a native Op where its kernel is a Launch and the backend makes its results
        as the Op does (numpy storages from ``TensorData._empty``); else ``op`` itself."""
        if (
            _compiled is None
            or type(kernel) is not _compiled.Launch
            or self.storage_type is not np.ndarray
            or self.empty != base.TensorData._empty
        ):
            return op
        return _compiled.Op(arity, op, kernel, self, _op_refs())


def enable(on: bool) -> bool:
    """Turn the native launch on or off for every Launch and Op (off: base.py's closures and numba's
    dispatcher run every call, as with ``TORCHLIGHT_NATIVE=0``); returns the previous setting. For
    benchmarks that time both (``torchlight.autograd.native.switch`` calls it)."""
    if _compiled is None:
        return False
    _on[0] = bool(on)
    return bool(_compiled.launch_enable(on))


def path() -> str:
    """How the fast backend's small kernels are launched: "native" (from C) or "python" (numba's dispatcher)."""
    return "native" if _on[0] else "python"


def reason() -> str:
    """Why: "built and enabled", "disabled by TORCHLIGHT_NATIVE=0", or "not built (...)"."""
    return _reason if _on[0] or _compiled is None else "turned off by fast_launch.enable(False)"
