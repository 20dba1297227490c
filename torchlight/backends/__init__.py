"""Modules 2-3: the backends that run tensor operations, by name.

``"simple"`` (pure Python, the reference), ``"fast"`` (numba, parallel CPU) and ``"cuda"``
(numba.cuda, or its simulator with ``NUMBA_ENABLE_CUDASIM=1``). ``get(name)`` returns the
``TensorBackend``; the compiled ones are imported only when first asked for. A backend that
cannot run here raises an error saying what is missing: nothing falls back silently. ``mps``
answers PyTorch's ``torch.backends.mps.is_available()``: False, there is no Apple GPU backend.
"""

import importlib
import os
import warnings
from typing import Callable, Dict, List, Union

from . import mps
from .base import TensorBackend

__all__ = [
    "TensorBackend",
    "BackendUnavailable",
    "get",
    "names",
    "register",
    "set_default_backend",
    "default",
    "is_default",
    "mps",
]


class BackendUnavailable(RuntimeError):
    """A known backend that cannot run on this machine (missing package or hardware)."""


ENV_VAR = "TORCHLIGHT_BACKEND"  # the environment variable naming the default backend

_factories: Dict[str, Callable[[], TensorBackend]] = {}
_backends: Dict[str, TensorBackend] = {}
_default: List[str] = []  # the default backend's name, once decided


def register(name: str, factory: Callable[[], TensorBackend]) -> None:
    """Make ``get(name)`` build its backend with ``factory()`` (called once, on first use).

    :param name: the backend's name.
    :param factory: a function of no arguments that builds the TensorBackend.
    """
    _factories[name] = factory
    _backends.pop(name, None)


def names() -> List[str]:
    """The names of all known backends (whether or not they can run here)."""
    return sorted(_factories)


def get(name: Union[str, TensorBackend]) -> TensorBackend:
    """The backend called ``name`` (a TensorBackend passes through unchanged).

    :param name: a backend's name (``"simple"``, ``"fast"``, ``"cuda"``) or a TensorBackend.
    :raises ValueError: for an unknown name.
    :raises BackendUnavailable: when the backend cannot run here (no numba, no GPU).
    """
    if isinstance(name, TensorBackend):
        return name
    backend = _backends.get(name)
    if backend is None:
        factory = _factories.get(name)
        if factory is None:
            raise ValueError(f"unknown backend {name!r}; the known backends are {', '.join(map(repr, names()))}")
        backend = _backends[name] = factory()
    return backend


def default() -> TensorBackend:
    """The backend new tensors get when none is named: $TORCHLIGHT_BACKEND, else 'fast' where numba
    imports, else 'simple' (with a warning saying how to get 'fast').

    A $TORCHLIGHT_BACKEND that names no backend, or one that cannot run here, is an error naming
    the variable (raised again on every call until it is fixed: nothing falls back silently).
    """
    if not _default:
        name = os.environ.get(ENV_VAR)
        if not name:
            name = _preferred()
        elif name not in _factories:
            raise ValueError(
                f"unknown backend {name!r} in the environment variable {ENV_VAR}={name!r}; the known "
                f"backends are {', '.join(map(repr, names()))}: set {ENV_VAR} to one of them or unset it, "
                "or call torchlight.set_default_backend(name)"
            )
        else:
            try:
                get(name)
            except BackendUnavailable as e:
                raise BackendUnavailable(
                    f"the environment variable {ENV_VAR}={name!r} asks for a backend that cannot run here: {e}"
                ) from None
        _default.append(name)
    return get(_default[0])


def is_default(backend: TensorBackend) -> bool:
    """Whether ``backend`` is the default backend; False, never an error, where no default can be
    decided (a bad $TORCHLIGHT_BACKEND), so that what only asks (a tensor's repr) keeps working.

    :param backend: a TensorBackend.
    """
    try:
        return backend is default()
    except (ValueError, BackendUnavailable):
        return False


def _preferred() -> str:
    try:
        importlib.import_module("numba")
    except ImportError:
        warnings.warn(
            "numba is not installed, so tensors default to the slow 'simple' backend; "
            "pip install 'numba>=0.59' to get the 'fast' one",
            RuntimeWarning,
            stacklevel=3,
        )
        return "simple"
    return "fast"


def set_default_backend(name: Union[str, TensorBackend]) -> None:
    """Make ``name`` the backend of new tensors created without ``backend=``.

    :param name: a backend's name (``"simple"``, ``"fast"``, ``"cuda"``) or a TensorBackend.
    :raises ValueError: for an unknown name.
    :raises BackendUnavailable: when the backend cannot run here.
    """
    backend = get(name)  # fails now, with the reason, if it cannot run here
    if _backends.get(backend.name) is not backend:  # a TensorBackend built by hand: remember it
        _factories[backend.name] = lambda: backend
        _backends[backend.name] = backend
    _default[:] = [backend.name]


def _simple() -> TensorBackend:
    from . import simple

    return TensorBackend(simple, "simple")


def _compiled(name: str, module: str, needs: str) -> Callable[[], TensorBackend]:
    """A factory importing ``torchlight.backends.<module>`` only when the backend is first used.

    The module provides ``make_backend()``, which returns the TensorBackend (or raises
    BackendUnavailable saying what is missing).
    """

    def factory() -> TensorBackend:
        try:
            importlib.import_module("numba")
        except ImportError:
            raise BackendUnavailable(
                f"the {name!r} backend needs numba, which is not installed: pip install 'numba>=0.59'"
            ) from None
        try:
            mod = importlib.import_module(f"{__name__}.{module}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{module}":
                raise
            raise BackendUnavailable(
                f"the {name!r} backend ({__name__}.{module}) is not part of this installation of "
                f"torchlight; use 'simple' or reinstall torchlight"
            ) from None
        return mod.make_backend()

    factory.__doc__ = needs
    return factory


SIMULATOR_VAR = "NUMBA_ENABLE_CUDASIM"  # =1: numba runs CUDA kernels in its simulator, on the CPU

_CUDA_WAYS = (
    "Either install numba-cuda and the CUDA libraries it needs on a machine with an NVIDIA GPU and "
    "its driver: pip install -e '.[cuda]' in torchlight's checkout (the cuda extra), or pip install "
    "'numba-cuda[cu12]>=0.30'; or run the cuda kernels on "
    f"the CPU in numba's simulator (slow, for learning and testing): set {SIMULATOR_VAR}=1 in the "
    "environment before Python starts (or in os.environ before the 'cuda' backend is first used)"
)


def _cuda() -> TensorBackend:
    """The 'cuda' backend, or BackendUnavailable saying what is missing and the two ways forward."""
    import sys

    try:
        from numba.core import config
    except ImportError:
        raise BackendUnavailable(
            f"the 'cuda' backend needs numba, which is not installed: pip install 'numba>=0.59'. {_CUDA_WAYS}"
        ) from None
    wanted = os.environ.get(SIMULATOR_VAR, "0") not in ("", "0")
    if wanted and not config.ENABLE_CUDASIM and "numba.cuda" not in sys.modules:
        # numba read its settings when it was first imported, before the variable was set: numba.cuda
        # (which decides between GPU and simulator when it is imported) is not imported yet, so it
        # is not too late. (numba-cuda reads the variable itself, at its import.)
        config.reload_config()
    try:
        from numba import cuda
    except ImportError as e:
        raise BackendUnavailable(f"the 'cuda' backend could not import numba.cuda ({e}). {_CUDA_WAYS}") from None
    simulated = "simulator" in cuda.device_array.__module__
    if wanted and not simulated:
        raise BackendUnavailable(
            f"{SIMULATOR_VAR}=1 is set, but numba.cuda was imported for a GPU before it was: numba "
            "chooses between GPU and simulator once per process. Start Python again with the variable set"
        )
    if not cuda.is_available():
        raise BackendUnavailable(f"the 'cuda' backend cannot run here: {_cuda_missing(cuda)}. {_CUDA_WAYS}")
    return _compiled("cuda", "cuda", "numba.cuda")()


def _cuda_missing(cuda) -> str:
    """What keeps numba.cuda from finding a GPU, in words."""
    try:
        from numba.cuda.cudadrv.driver import driver

        error = getattr(driver, "initialization_error", None)
    except Exception:  # (a numba.cuda laid out otherwise: say only what is known)
        error = None
    if error:
        detail = " ".join(str(error).split())
        return f"numba.cuda found no usable NVIDIA driver ({detail})"
    return "numba.cuda found no CUDA GPU (numba.cuda.is_available() is False; numba.cuda.detect() says more)"


register("simple", _simple)
register("fast", _compiled("fast", "fast", "numba"))
register("cuda", _cuda)
