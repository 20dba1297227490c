"""Module 3: running a compiled *part* function on all of numba's threads (and on odd arrays).

Every fast kernel is written as a part function, ``part(p, parts, ...)``, which does part ``p`` of
``parts`` of the work and is an ordinary serial numba function. Small tensors call it once,
``part(0, 1, ...)``; large ones call a *launcher*:

    for p in prange(parts):
        part(p, parts, ...)

numba compiles a ``prange`` loop into a separate multi-threaded function, which is slow to compile
(a second or more). A launcher here receives the part as a *value* (a numba first-class function,
typed by its signature alone), so one compiled launcher, cached on disk, serves every part with
that signature: the map parts of all scalar functions share one, and so on.

Threads: numba runs a ``prange`` loop on its *threading layer*, the first of TBB, OpenMP and its
own "workqueue" that is installed (``numba.threading_layer()`` says which, after the first
parallel run; ``NUMBA_THREADING_LAYER`` chooses). TBB and OpenMP may be entered from several
Python threads at once; workqueue may not: it aborts the whole process ("Concurrent access has
been detected"). So every launch goes through ``launch``, which lets launches take turns (a lock)
until the first one has shown which layer is in use, and for good when that layer is workqueue.
"""

import threading
from typing import Callable, Dict, Sequence

import numba
import numpy as np
from numba import njit, types
from numba.core.typing.templates import Signature

from . import fast_cache

__all__ = [
    "PartPointer",
    "launch",
    "launcher",
    "launcher_signature",
    "raise_if_stub",
    "run_on_plain_arrays",
    "serializes_launches",
]

_compiled: Dict[Callable, Callable] = {}
_lock = threading.Lock()

# The threading layers that several Python threads may enter at once (numba's documentation).
THREAD_SAFE_LAYERS = ("tbb", "omp")
_launch_lock = threading.Lock()
_layer_known = False  # set by the first launch, once numba has picked its layer
_thread_safe = False  # whether that layer is one of THREAD_SAFE_LAYERS


def launcher(template: Callable, signature: Signature) -> Callable:
    """``template`` (a module-level function of ``prange`` loops over parts) compiled for ``signature``.

    Compiled, or loaded from numba's disk cache, on first use.
    """
    compiled = _compiled.get(template)
    if compiled is None:
        with _lock:  # once, whatever the threads
            compiled = _compiled.get(template)
            if compiled is None:
                compiled = fast_cache.recovering(njit(parallel=True, cache=True)(template))
                compiled.compile(signature)
                compiled.disable_compile()
                _compiled[template] = compiled
    return compiled


def launch(compiled: Callable, *args) -> None:
    """``compiled(*args)`` for a launcher: at once where numba's threading layer is thread-safe,
    else one launch at a time, so that threads calling the fast backend together cannot abort the
    process (on workqueue, large operations from two threads then take turns, each on all of
    numba's threads)."""
    global _layer_known, _thread_safe
    if _thread_safe:  # the common case: no lock
        compiled(*args)
        return
    with _launch_lock:
        compiled(*args)
        if not _layer_known:
            try:
                layer = numba.threading_layer()
            except ValueError:  # no parallel region has run yet: ask again after the next launch
                return
            _layer_known, _thread_safe = True, layer in THREAD_SAFE_LAYERS


def serializes_launches() -> bool:
    """True while parallel launches take turns: before the first one, and for good where numba's
    threading layer is not thread-safe (workqueue)."""
    return not _thread_safe


def launcher_signature(part_signature: Signature) -> Signature:
    """The signature of a launcher of one part: the part itself, then the part's arguments after ``p``."""
    return types.void(types.FunctionType(part_signature), *part_signature.args[1:])


class PartPointer:
    """A compiled part function as a value that numba passes to a launcher.

    This is numba's "wrapper address protocol": the object says its numba type and where the
    compiled function is. (Passing the function object itself works too, but numba then works out
    its type afresh on every call, which costs some 200 microseconds.)
    """

    def __init__(self, part: Callable, signature: Signature):
        from numba.experimental.function_type import _get_wrapper_address

        self._numba_type_ = types.FunctionType(signature)
        self._signature = signature
        self._address = _get_wrapper_address(part, signature)

    def __wrapper_address__(self) -> int:
        return self._address

    def signature(self) -> Signature:
        return self._signature


def raise_if_stub(function: Callable, *args) -> None:
    """Call ``function(*args)`` once in plain Python and re-raise a student edition's stub.

    In the student edition an unwritten function is ``raise NotImplementedError("Task N.K: ...")``,
    which returns nothing. Compiled into a kernel that uses its result, it makes numba spend
    seconds failing to type the kernel, and the error then says "cannot compile" rather than what
    to write. Called here first (a numba function through its Python source), it raises its own
    message at once. Any other exception is ignored: it is numba's and the kernel's to meet (a
    domain error on the sample arguments, say), and the caller does this once per function.
    """
    try:
        getattr(function, "py_func", function)(*args)
    except NotImplementedError as e:
        if str(e).startswith("Task "):
            raise
    except Exception:  # not a stub: compiling will say what it is, if anything
        pass


def run_on_plain_arrays(function: Callable, args: Sequence, out: int) -> None:
    """``function(*args)`` on contiguous, writable copies of the array arguments, then ``args[out]``
    updated from its copy: for the rare storage the compiled signatures do not take (a strided or
    read-only array that a TensorData was made from by hand). Re-raises numba's TypeError when
    every array was fine, since then the error is another one."""
    if all(
        not isinstance(x, np.ndarray)
        or (x.flags.c_contiguous and x.flags.writeable and x.dtype in (np.float64, np.int64))
        for x in args
    ):
        raise
    fixed = [
        np.array(x, dtype=np.float64 if x.dtype.kind == "f" else np.int64) if isinstance(x, np.ndarray) else x
        for x in args
    ]
    function(*fixed)
    args[out][...] = fixed[out]
