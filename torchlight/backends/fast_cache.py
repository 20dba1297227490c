"""Module 3: the fast backend's kernels for one scalar function, compiled once and kept on disk.

Compiling a parallel kernel takes numba about a second, so ``cache=True`` matters: the second
time a program runs, the compiled code is loaded instead. But numba caches a function only when
everything it calls is a global of a real source file: a kernel that takes ``fn`` as an argument,
or finds it in a closure, is compiled afresh in every process. So for each scalar function this
module writes a small Python file in which ``fn`` is a global (imported from where the function
lives), followed by the kernel templates of ``fast.py``, and imports it. numba then caches those
kernels as it caches any function in any file.

Where things live (see ``cache_dir()``): the generated files in ``$TORCHLIGHT_CACHE_DIR``, else
``~/.cache/torchlight/fast_kernels`` (``$XDG_CACHE_HOME`` replaces ``~/.cache``); numba's compiled
code in the ``__pycache__`` beside them, or under ``$NUMBA_CACHE_DIR`` when that is set. A file's
name carries a hash of everything its code depends on (the templates, the scalar function's source
file, the index helpers, numba's version), so editing any of them makes a new file and stale code
is never loaded. Deleting the folder (``clear()``) is always safe: it is rebuilt on next use.

A function that cannot be imported by name (a lambda, a closure, a function typed into a notebook
or defined in ``__main__``) gets the same kernels, compiled in memory for this process only.
"""

import contextlib
import glob
import hashlib
import importlib
import importlib.util
import inspect
import os
import re
import shutil
import sys
import threading
import warnings
from types import ModuleType
from typing import Callable, Dict, List, Optional, Sequence

import numba

__all__ = ["cache_dir", "clear", "compile_part", "kernels_for"]

_modules: Dict[Callable, ModuleType] = {}  # fn -> its kernels, for this process
_lock = threading.RLock()
_warned: List[str] = []


def cache_dir() -> str:
    """The folder that holds the generated kernel modules (and, by default, numba's cache of them)."""
    root = os.environ.get("TORCHLIGHT_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "torchlight")
    return os.path.join(root, "fast_kernels")


def clear() -> None:
    """Delete every generated kernel module and its compiled code (rebuilt on next use)."""
    shutil.rmtree(cache_dir(), ignore_errors=True)
    _modules.clear()


def kernels_for(
    fn: Callable, templates: Sequence[Callable], helpers: Sequence[str], sources: Sequence[str]
) -> ModuleType:
    """A module whose functions are ``templates`` compiled with ``fn`` as their global ``fn``.

    ``helpers`` are the names the templates use from the templates' own module; ``sources`` are
    the files whose code ends up inside the kernels (a change to one must invalidate the cache).
    Each template becomes a disk-cached numba function, compiled on first use (``compile_part``).
    """
    module = _modules.get(fn)
    if module is None:
        with _lock:  # two threads must not import the same generated module at once
            module = _modules.get(fn)
            if module is None:
                module = _modules[fn] = _instantiate(fn, list(templates), list(helpers), list(sources))
    return module


def compile_part(part, signature, fn: Callable) -> None:
    """Compile ``part`` (or load it from the disk cache) for ``signature``, and for nothing else.

    A scalar function that numba cannot compile gets an error that says so, not numba's traceback.
    """
    with _lock:
        if tuple(signature.args) not in part.overloads:  # else compiled already (another backend asked first)
            _compile(part, signature, fn)


def _compile(part, signature, fn: Callable) -> None:
    try:
        part.compile(signature)
    except Exception as e:  # numba's typing errors, and the odd internal one for unsupported code
        name = getattr(fn, "__qualname__", repr(fn))
        detail = f"{type(e).__name__}: " + "\n".join(line for line in str(e).splitlines()[:12] if line.strip())
        raise TypeError(
            f"the 'fast' backend cannot compile {name} with numba. It lifts functions of floats written "
            "with arithmetic, comparisons, the math module and torchlight.scalar's operators (a call to "
            "any other Python function needs numba.njit on that function); use the 'simple' backend for "
            f"anything else. numba says:\n{detail}"
        ) from None
    part.disable_compile()  # other argument types raise TypeError instead of compiling anew


def _instantiate(fn: Callable, templates: List[Callable], helpers: List[str], sources: List[str]) -> ModuleType:
    home = _importable(fn)
    if home is not None:
        text = _module_text(fn, templates, helpers, home, cache=True)
        digest = hashlib.sha256(text.encode())
        for path in sources + [inspect.getsourcefile(fn) or ""]:
            with open(path, "rb") as f:
                digest.update(f.read())
        digest.update(numba.__version__.encode())
        stem = "tl_" + re.sub(r"\W", "_", f"{home[0]}.{home[1]}") + "_"
        name = stem + digest.hexdigest()[:16]
        try:
            return _import_file(_write(name, text, stem), name)
        except OSError as e:  # a read-only home, a full disk: compile without the disk cache
            _warn_once(
                f"torchlight: cannot write the fast-kernel cache in {cache_dir()} ({e}); compiling "
                "without a disk cache. Set TORCHLIGHT_CACHE_DIR to a writable folder to keep compiled kernels."
            )
    module = ModuleType(f"torchlight_fast_kernels_{getattr(fn, '__name__', 'fn')}")
    module.__dict__["_scalar_fn"] = fn
    exec(
        compile(_module_text(fn, templates, helpers, None, cache=False), f"<fast kernels for {fn!r}>", "exec"),
        module.__dict__,
    )
    return module


def _importable(fn: Callable) -> Optional[tuple]:
    """(module, qualname) when ``import module`` and attribute lookup find ``fn`` itself, else None."""
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not module or module == "__main__" or "<" in qualname:
        return None
    try:
        found = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
        source = inspect.getsourcefile(fn)
    except (ImportError, AttributeError, TypeError):
        return None
    return (module, qualname) if found is fn and source and os.path.exists(source) else None


def _module_text(
    fn: Callable, templates: List[Callable], helpers: List[str], home: Optional[tuple], cache: bool
) -> str:
    """The generated module's source: imports, ``fn`` compiled inline, the templates, their compilation."""
    home_module = templates[0].__module__
    what = f"{home[0]}.{home[1]}" if home is not None else getattr(fn, "__qualname__", "a scalar function")
    lines = [
        f'"""fast kernels for {what}, generated by torchlight.backends.fast_cache; safe to delete."""',
        "from numba import njit",
        f"from {home_module} import {', '.join(helpers)}",
    ]
    if home is not None:
        lines += [f"import {home[0]} as _home", f"_scalar_fn = _home.{home[1]}"]
    lines += [
        "# compiled here (from its Python source, if it is already a numba function); LLVM inlines it",
        'fn = njit(error_model="numpy")(getattr(_scalar_fn, "py_func", _scalar_fn))',
        "",
    ]
    for template in templates:
        lines += ["", inspect.getsource(template)]
    lines.append("")
    for template in templates:  # compiled lazily, for the signature the caller asks for
        name = template.__name__
        lines.append(f'{name} = njit(cache={cache}, error_model="numpy")({name})')
    return "\n".join(lines) + "\n"


def _write(name: str, text: str, stem: str) -> str:
    """Write ``text`` to ``<cache_dir>/<name>.py`` unless it is already there; return the path.

    Older versions of the same function's kernels (same ``stem``, another hash) are deleted with
    their compiled code: after an edit to scalar.py they would never be loaded again.
    """
    folder = cache_dir()
    path = os.path.join(folder, name + ".py")
    if not os.path.exists(path):
        os.makedirs(folder, exist_ok=True)
        stale = glob.glob(os.path.join(glob.escape(folder), glob.escape(stem) + "*.py"))
        stale += glob.glob(os.path.join(glob.escape(folder), "__pycache__", glob.escape(stem) + "*"))
        for old in stale:
            with contextlib.suppress(OSError):
                os.remove(old)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w") as f:
            f.write(text)
        os.replace(temporary, path)  # atomic: a process running alongside sees all of it or nothing
    return path


def _import_file(path: str, name: str) -> ModuleType:
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None  # a .py file path always has both
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.append(message)
        warnings.warn(message, RuntimeWarning, stacklevel=4)
