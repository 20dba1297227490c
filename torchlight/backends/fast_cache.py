"""Module 3: the fast backend's kernels for one scalar function, compiled once and kept on disk.

Compiling a parallel kernel takes numba about a second, so ``cache=True`` matters: the second
time a program runs, the compiled code is loaded instead. But numba caches a function only when
everything it calls is a global of a real source file: a kernel that takes ``fn`` as an argument,
or finds it in a closure, is compiled afresh in every process. So for each scalar function this
module writes a small Python file in which ``fn`` is a global (imported from where the function
lives), followed by the kernel templates of ``fast.py``, and runs it as a module. numba then caches those
kernels as it caches any function in any file.

Where things live (see ``cache_dir()``): the generated files in ``$TORCHLIGHT_CACHE_DIR``, else
``~/.cache/torchlight/fast_kernels`` (``$XDG_CACHE_HOME`` replaces ``~/.cache``); numba's compiled
code in the ``__pycache__`` beside them, or under ``$NUMBA_CACHE_DIR`` when that is set. A file's
name carries a hash of everything its code depends on (the templates, the scalar function's source
file, the index helpers, numba's version), so editing any of them makes a new file and stale code
is never loaded. Deleting the folder (``clear()``) is always safe: it is rebuilt on next use.

A cache on disk can be damaged (a full disk, a killed process, a careless hand). Nothing here
trusts it: a generated file whose text is not what this module would write is written again, and
a compiled file that numba cannot read (``recovering``) is deleted and its kernel compiled again;
each says so with a ``KernelCacheWarning`` naming the file. Every file is written whole to a
temporary name in its folder and then renamed, so a process running alongside (or one killed
mid-write) never leaves half a file under the real name.

A function that cannot be imported by name (a lambda, a closure, a function typed into a notebook
or defined in ``__main__``) gets the same kernels, compiled in memory for this process only.

Where no folder can be written (the package folder, ``~/.cache``, ``$TORCHLIGHT_CACHE_DIR`` and
``$NUMBA_CACHE_DIR`` all read-only, as on some lab machines and containers), every kernel is compiled
in memory for this process, with one ``KernelCacheWarning``: the backend works, only slower to start.

What the cache trusts: numba reads its index and compiled files with pickle, so a file planted in
the cache can run code. Before loading anything, the cache checks the folder it loads from: it must
belong to the user running the program and be writable by no one else (no group or other write
bit), and each folder above it must belong to that user or to root and be writable by no one else
unless it has the sticky bit (as ``/tmp``). Otherwise the kernels are compiled in memory (nothing is
loaded from that folder or saved in it) and a ``KernelCacheWarning`` names the folder and why, once.
"""

import contextlib
import glob
import hashlib
import importlib
import inspect
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
import warnings
from types import ModuleType
from typing import Callable, Dict, List, Optional, Sequence

import numba
from numba.core import caching as _numba_caching
from numba.core.caching import FunctionCache, NullCache, _CacheLocator

__all__ = ["KernelCacheWarning", "cache_dir", "clear", "compile_part", "kernels_for", "recovering", "untrusted"]

_modules: Dict[Callable, ModuleType] = {}  # fn -> its kernels, for this process
_lock = threading.RLock()
_warned: List[str] = []
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # torchlight/


class KernelCacheWarning(RuntimeWarning):
    """A file of the fast backend's kernel cache was damaged, or could not be written; the kernel
    was compiled again (the program's results are not affected)."""


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
    except KernelCacheWarning:  # a damaged cache file, under warnings-as-errors: not fn's fault
        raise
    except Exception as e:  # numba's typing errors, and the odd internal one for unsupported code
        # (a damaged disk cache never gets here: ``recovering`` turns it into a cache miss)
        detail = f"{type(e).__name__}: " + "\n".join(line for line in str(e).splitlines()[:12] if line.strip())
        raise TypeError(
            f"the 'fast' backend cannot compile {_name(fn)} with numba. It lifts functions of floats written "
            "with arithmetic, comparisons, the math module and torchlight.scalar's operators (a call to "
            "any other Python function needs numba.njit on that function); use the 'simple' backend for "
            f"anything else.{_hint(fn)} numba says:\n{detail}"
        ) from None
    part.disable_compile()  # other argument types raise TypeError instead of compiling anew


def _name(fn: Callable) -> str:
    """``fn`` as a user would find it: its name, and for Python code where it is defined."""
    code = getattr(getattr(fn, "py_func", fn), "__code__", None)
    name = getattr(fn, "__qualname__", None) or repr(fn)
    return f"{name} ({code.co_filename}, line {code.co_firstlineno})" if code is not None else name


def _hint(fn: Callable) -> str:
    """What is wrong with ``fn`` when it is not a function numba could compile at all."""
    if inspect.ismethod(fn):
        return (
            f" {fn.__qualname__} is a bound method: numba cannot compile the object it is bound to "
            f"(a {type(fn.__self__).__name__}); lift a plain function of floats instead."
        )
    if not (inspect.isfunction(fn) or inspect.isbuiltin(fn) or hasattr(fn, "py_func") or isinstance(fn, type)):
        return f" It is given a {type(fn).__name__} object, not a function: lift a plain function of floats instead."
    return ""


# ---------------------------------------------------------------------------------------------
# numba's disk cache, made to survive damage
# ---------------------------------------------------------------------------------------------


class _RecoveringCache(FunctionCache):
    """numba's disk cache of one function, for which a file it cannot read is a cache miss.

    numba reads its index (``.nbi``) and compiled code (``.nbc``) with pickle and lets any error
    through: an emptied or truncated file would then break every later run. Here the damaged
    entry is deleted, with a warning naming the file, and numba compiles the function again and
    saves a sound entry. numba already writes both files to a temporary name and renames them.
    """

    def load_overload(self, sig, target_context):
        if not self._trusted():
            return None
        try:
            return super().load_overload(sig, target_context)
        except Exception as e:  # emptied, truncated, garbled: numba cannot tell which
            damaged = self._damaged_file(sig, target_context)
            self._discard()
            _warn(
                f"torchlight: the kernel cache file {damaged} is damaged ({_short(e)}); deleted it and "
                "compiling the kernel again"
            )
            return None

    def save_overload(self, sig, data):
        if not self._trusted():
            return
        try:
            super().save_overload(sig, data)
        except Exception as e:  # a full disk, a folder made read-only: the kernel runs all the same
            _warn(
                f"torchlight: cannot save a compiled kernel in {self.cache_path} ({_short(e)}); it will be "
                "compiled again in the next process"
            )

    def _trusted(self) -> bool:
        """Whether this cache's folder may be read (see the module's docstring); if not, the cache
        is switched off for this function (compiled in memory) with a warning, once per folder."""
        if not self._enabled:
            return False
        problem = untrusted(self.cache_path)
        if problem is None:
            return True
        self.disable()
        _warn_once(
            f"torchlight: not using the kernel cache folder {self.cache_path}: {problem}. numba reads its files "
            "with pickle, so whoever can write there could run code in this program; compiling the kernels in "
            "memory instead. Use a folder of your own (TORCHLIGHT_CACHE_DIR, NUMBA_CACHE_DIR) that only you can write."
        )
        return False

    def _damaged_file(self, sig, target_context) -> str:
        """The file that failed to load: the index, unless it loads and names a data file."""
        files = self._cache_file
        try:
            name = files._load_index().get(self._index_key(sig, target_context.codegen()))
        except Exception:
            return files._index_path
        return files._data_path(name) if name else files._index_path

    def _discard(self) -> None:
        """Delete this function's index and every compiled file it may name."""
        index = self._cache_file._index_path
        for path in [index] + glob.glob(glob.escape(index[: -len(".nbi")]) + ".*.nbc"):
            with contextlib.suppress(OSError):
                os.remove(path)


def recovering(dispatcher):
    """``dispatcher`` (made by ``numba.njit(cache=True)``, not yet compiled), with a disk cache that
    treats a damaged file as a cache miss: deleted, warned about (``KernelCacheWarning``), rebuilt,
    and that loads nothing from a folder others can write (``untrusted``).

    A dispatcher for which no folder could be written gets no disk cache at all (compiled in
    memory, one warning per process); one without a disk cache is returned as it is.
    """
    if isinstance(dispatcher._cache, FunctionCache):
        if isinstance(dispatcher._cache._impl.locator, _InMemoryLocator):
            _warn_no_disk_cache("no folder numba can write its cache in: the package folder, NUMBA_CACHE_DIR, ~/.cache")
            dispatcher._cache = NullCache()
        else:
            dispatcher._cache = _RecoveringCache(dispatcher.py_func)
    return dispatcher


class _InMemoryLocator(_CacheLocator):
    """numba's last resort for torchlight's own kernels, after its own locators found no writable
    folder: instead of numba's RuntimeError ("cannot cache function ... no locator available") at
    import, a cache that ``recovering`` replaces with none (the kernel is compiled in memory)."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno

    def ensure_cache_path(self):
        raise OSError(f"no writable folder for the kernel cache of {self._py_file}")

    def get_cache_path(self):
        return os.path.join(os.path.dirname(self._py_file), "__pycache__")  # never read: see recovering

    def get_source_stamp(self):
        return None

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        path = os.path.abspath(py_file)
        for folder in (_PACKAGE, os.path.abspath(cache_dir())):
            if path.startswith(folder + os.sep):
                return cls(py_func, py_file)
        return None  # another library's function: numba's behaviour is not ours to change


_locators = getattr(_numba_caching, "CacheImpl", None) or _numba_caching._CacheImpl  # (renamed in numba 0.61)
if _InMemoryLocator not in _locators._locator_classes:
    _locators._locator_classes.append(_InMemoryLocator)


def untrusted(folder: Optional[str]) -> Optional[str]:
    """Why the kernel cache must not load from ``folder``, or None when it may.

    ``folder`` (if it exists) must belong to this user and be writable by no one else; each folder
    above it must belong to this user or to root and be writable by no one else unless it is
    sticky (as ``/tmp``: there no one can rename or delete another's entries). Otherwise someone
    else could put a file there that numba would unpickle. (Where there are no owners to check,
    as on Windows, nothing is refused.)
    """
    if folder is None or not hasattr(os, "geteuid"):
        return None
    uid = os.geteuid()
    path = os.path.realpath(folder)
    first = True
    while True:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            st = None
        if st is not None:
            writable = st.st_mode & 0o022
            if first:
                if st.st_uid != uid:
                    return f"it belongs to uid {st.st_uid}, not to this user (uid {uid})"
                if writable:
                    return f"others can write it (mode {stat.filemode(st.st_mode)})"
                first = False
            else:
                if st.st_uid not in (uid, 0):
                    return f"the folder above it, {path}, belongs to uid {st.st_uid}, neither this user nor root"
                if writable and not st.st_mode & stat.S_ISVTX:
                    return f"others can write the folder above it, {path} (mode {stat.filemode(st.st_mode)})"
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def _short(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return type(e).__name__ + (f": {text[0][:200]}" if text else "")


def _warn(message: str) -> None:
    warnings.warn(KernelCacheWarning(message), stacklevel=2)


# ---------------------------------------------------------------------------------------------
# The generated modules
# ---------------------------------------------------------------------------------------------


def _instantiate(fn: Callable, templates: List[Callable], helpers: List[str], sources: List[str]) -> ModuleType:
    home = _importable(fn)
    if home is not None:
        text = _module_text(fn, templates, helpers, home, cache=True)
        digest = hashlib.sha256(text.encode())
        source = _source_file(fn)
        for path in sources + ([source] if source else []):
            with open(path, "rb") as f:
                digest.update(f.read())
        digest.update(numba.__version__.encode())
        stem = "tl_" + re.sub(r"\W", "_", f"{home[0]}.{home[1]}") + "_"
        name = stem + digest.hexdigest()[:16]
        try:
            path, fresh = _write(name, text)
            if fresh:  # older versions of this function's kernels will never be loaded again
                _remove_stale(os.path.dirname(path), stem, name)
            module = _load(path, name, text)
            parts = [recovering(getattr(module, template.__name__)) for template in templates]
            if fresh:
                _remove_stale(parts[0]._cache.cache_path, stem, name)
            return module
        except OSError as e:  # a read-only home, a full disk: compile without the disk cache
            _warn_no_disk_cache(f"cannot write the fast-kernel cache in {cache_dir()} ({e})")
    module = ModuleType(f"torchlight_fast_kernels_{getattr(fn, '__name__', 'fn')}")
    module.__dict__["_scalar_fn"] = fn
    exec(
        compile(_module_text(fn, templates, helpers, None, cache=False), f"<fast kernels for {fn!r}>", "exec"),
        module.__dict__,
    )
    return module


def _source_file(fn: Callable) -> Optional[str]:
    """The file ``fn`` (or a numba function's Python function) is defined in; None for a builtin."""
    try:
        return inspect.getsourcefile(getattr(fn, "py_func", fn))
    except TypeError:  # a builtin (math.exp) or an object that is no function
        return None


def _importable(fn: Callable) -> Optional[tuple]:
    """(module, qualname) when ``import module`` and attribute lookup find ``fn`` itself, else None.

    ``fn`` must also be defined in a source file that exists, or be a builtin (``math.exp``),
    so that its kernels can be compiled from a file of their own and cached.
    """
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not module or module == "__main__" or "<" in qualname:
        return None
    try:
        found = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError, TypeError):
        return None
    if found is not fn:
        return None
    source = _source_file(fn)
    return (module, qualname) if inspect.isbuiltin(fn) or (source and os.path.exists(source)) else None


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
    if inspect.isfunction(getattr(fn, "py_func", fn)):
        lines += [
            "# compiled here (from its Python source, if it is already a numba function); LLVM inlines it",
            'fn = njit(error_model="numpy")(getattr(_scalar_fn, "py_func", _scalar_fn))',
        ]
    else:  # math.exp, abs, a method, a callable object: numba compiles a call to what it knows
        lines += ['@njit(error_model="numpy")', "def fn(*args):", "    return _scalar_fn(*args)"]
    lines.append("")
    for template in templates:
        lines += ["", inspect.getsource(template)]
    lines.append("")
    for template in templates:  # compiled lazily, for the signature the caller asks for
        name = template.__name__
        lines.append(f'{name} = njit(cache={cache}, error_model="numpy")({name})')
    return "\n".join(lines) + "\n"


def _write(name: str, text: str) -> tuple:
    """(path, fresh): ``<cache_dir>/<name>.py`` holds ``text``, written now if it did not (fresh
    when there was no such file at all).

    The name is a hash of the text's inputs, so any other content there is damage: it is
    replaced, with a warning.
    """
    folder = cache_dir()
    path = os.path.join(folder, name + ".py")
    try:
        with open(path, encoding="utf-8") as f:
            found: Optional[str] = f.read()
    except FileNotFoundError:
        found = None
    except ValueError:  # bytes that are not UTF-8: damaged
        found = ""
    if found == text:
        return path, False
    os.makedirs(folder, exist_ok=True)
    _write_atomically(path, text)
    if found is not None:  # (warned after the repair: under -W error the next run then works)
        _warn(
            f"torchlight: the generated kernel module {path} was damaged (its text was not what torchlight "
            "writes); wrote it again"
        )
    return path, found is None


def _write_atomically(path: str, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it: a process reading
    ``path`` meanwhile (or after a crash) sees the old file whole or the new one, never a part."""
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise


def _remove_stale(folder: str, stem: str, name: str) -> None:
    """Delete the files in ``folder`` of the same function's other versions (``stem`` with
    another hash: after an edit to scalar.py they would never be loaded again). Only that exact
    pattern: ``log``'s stem is a prefix of ``log_back``'s names."""
    stale = re.compile(re.escape(stem) + r"[0-9a-f]{16}\.")
    with contextlib.suppress(OSError):
        for entry in os.listdir(folder):
            if stale.match(entry) and not entry.startswith(name + "."):
                with contextlib.suppress(OSError):
                    os.remove(os.path.join(folder, entry))


def _load(path: str, name: str, text: str) -> ModuleType:
    """The module ``name`` made by running ``text`` as the file ``path`` (which holds it).

    Run from the text already read and checked, not imported: no bytecode file is written, and
    there is none that could be damaged. numba finds the functions' source file by ``path``.
    """
    module = sys.modules.get(name)
    if module is None:
        module = ModuleType(name)
        module.__file__ = path
        sys.modules[name] = module  # numba finds a cached function's globals through it
        try:
            exec(compile(text, path, "exec"), module.__dict__)
        except BaseException:
            del sys.modules[name]
            raise
    return module


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.append(message)
        warnings.warn(KernelCacheWarning(message), stacklevel=4)


def _warn_no_disk_cache(why: str) -> None:
    """One warning per process that kernels are compiled in memory, whatever the first reason."""
    if "no disk cache" not in _warned:
        _warned.append("no disk cache")
        warnings.warn(
            KernelCacheWarning(
                f"torchlight: {why}; compiling the fast backend's kernels in memory, for this process only "
                "(they are compiled again in the next one). Set TORCHLIGHT_CACHE_DIR (and NUMBA_CACHE_DIR) "
                "to a folder of your own that you can write, to keep compiled kernels."
            ),
            stacklevel=4,
        )
