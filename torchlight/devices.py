"""Module 2: devices, PyTorch's names for where a tensor lives, mapped onto torchlight's backends.

PyTorch has devices ("cpu", "cuda"); torchlight has backends, which say both where a tensor lives
and which kernels compute with it: "simple" (pure Python) and "fast" (numba) on the CPU, "cuda"
on the GPU. A tensor's ``device`` follows its backend, and a device given to ``to()`` or to a
creation function chooses a backend: "cuda" the cuda backend, "cpu" the default backend if it
runs on the CPU, else "fast" (or "simple" without numba). Backend names are accepted too.
``set_default_device`` chooses the default backend by device, as PyTorch's chooses the device.
"""

from typing import Any, Optional, Union

from . import backends

__all__ = ["device", "of_backend", "backend_for", "set_default_device", "get_default_device"]

_TYPES = ("cpu", "cuda")


class device:
    """Where a tensor lives: ``device("cpu")``, ``device("cuda")``, ``device("cuda:0")``.

    :param type: ``"cpu"``, ``"cuda"`` or ``"cuda:0"`` (or a device).
    :param index: the device's index (only 0 for cuda).
    """

    __slots__ = ("type", "index")

    type: str
    index: Optional[int]

    def __init__(self, type: Union[str, "device"], index: Optional[int] = None):
        spec = str(type) if isinstance(type, device) else type
        if not isinstance(spec, str):
            raise TypeError(f"device(): expected a string such as 'cpu' or 'cuda', got {spec!r}")
        name, _, number = spec.partition(":")
        if name not in _TYPES:
            raise RuntimeError(
                f"Expected one of {', '.join(_TYPES)} device type at start of device string: {spec} "
                "(torchlight's devices are cpu and cuda; its backends 'simple' and 'fast' run on the cpu)"
            )
        if number:
            if not number.isdigit() or index is not None:
                raise RuntimeError(f"Invalid device string: '{spec}'")
            index = int(number)
        if index is not None and ((name == "cpu" and index != 0) or index < 0):
            raise RuntimeError(f"Invalid device index {index} for device type {name}")
        self.type = name
        self.index = index if name == "cuda" else None

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"


_CPU = device("cpu")
_CUDA = device("cuda", 0)


def of_backend(backend: backends.TensorBackend) -> device:
    """The device of a tensor on ``backend``: cuda:0 for "cuda", cpu for every other backend."""
    return _CUDA if backend.name == "cuda" else _CPU


def backend_for(
    where: Union[str, device, backends.TensorBackend], current: Optional[backends.TensorBackend] = None
) -> backends.TensorBackend:
    """The backend for a device or a backend name; ``current`` (a tensor's backend) is kept when it
    is already on that device, so ``t.to("cpu")`` leaves a tensor on "simple" where it is."""
    if isinstance(where, backends.TensorBackend):
        return where
    if isinstance(where, str) and where in backends.names():
        return backends.get(where)  # a backend name ("cuda" is both: the same backend)
    if not isinstance(where, (str, device)):
        raise TypeError(
            f"expected a device ('cpu', 'cuda', torchlight.device) or a backend name "
            f"({', '.join(map(repr, backends.names()))}), got {where!r}"
        )
    wanted = device(where)
    if current is not None and of_backend(current).type == wanted.type:
        return current
    if wanted.type == "cuda":
        return backends.get("cuda")  # raises BackendUnavailable, saying why, where it cannot run
    default = backends.default()
    if of_backend(default).type == "cpu":
        return default
    try:
        return backends.get("fast")
    except backends.BackendUnavailable:
        return backends.get("simple")


def set_default_device(where: Union[str, device, backends.TensorBackend, None]) -> None:
    """Make new tensors (made without ``device=`` or ``backend=``) live on ``where``, a device or a
    backend name, as PyTorch's ``set_default_device``; None means the CPU. This sets the default
    backend: "cuda" for the GPU, and for "cpu" the default backend if it runs on the CPU already.

    :param where: a device, ``"cpu"``, ``"cuda"``, a backend or its name; None means the CPU.
    """
    backends.set_default_backend(backend_for("cpu" if where is None else where, backends.default()))


def get_default_device() -> device:
    """The device of new tensors: that of the default backend (cpu, or cuda:0 for "cuda")."""
    return of_backend(backends.default())
