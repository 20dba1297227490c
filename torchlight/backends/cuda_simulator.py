"""Module 3: a repair to numba's CUDA simulator, which the cuda backend's tests run in.

The simulator gives a block's threads one shared array per ``cuda.shared.array`` line: the first
thread to reach the line looks for the array, finds none and makes it; the others find it. Its
threads are Python threads, and two of them can both look before either has stored its array:
each then writes to an array of its own, and a thread reads the other's places from one nobody
wrote (a reduction loses a value, once in thousands of launches). Here the look and the store are
one step under a lock. Nothing changes on a GPU, where this module is not used.
"""

import sys
import threading
from typing import Any

import numpy as np


def lock_shared_arrays() -> None:
    """Make the simulator's ``cuda.shared.array`` give every thread of a block the same array."""
    from numba.cuda.simulator import kernelapi

    shared = kernelapi.FakeCUDAShared
    unlocked = shared.array
    if getattr(unlocked, "locked", False):
        return
    lock = threading.Lock()

    def array(self: Any, shape: Any, dtype: Any, *options: Any, **named: Any) -> np.ndarray:
        if shape == 0 or any(o is not None for o in (*options, *named.values())):
            # dynamic shared memory (one buffer, made before the threads start), or an option
            # (numba-cuda's alignment) that the simulator refuses: as the simulator does it
            return unlocked(self, shape, dtype, *options, **named)
        caller = sys._getframe(1)  # the array of this line of the kernel (as the simulator keys it)
        key = (caller.f_code.co_filename, caller.f_lineno)
        with lock:
            found = self._allocations.get(key)
            if found is None:
                found = self._allocations[key] = np.empty(shape, _numpy_dtype(dtype))
        return found

    array.locked = True  # type: ignore[attr-defined]
    shared.array = array


def _numpy_dtype(dtype: Any) -> Any:
    """numba's type (``numba.float64``) as numpy's; numpy's as it is."""
    from numba.core import types
    from numba.np import numpy_support

    return numpy_support.as_dtype(dtype) if isinstance(dtype, types.Type) else dtype
