"""Module 3: ``torchlight.accelerator``, PyTorch's device-neutral questions about the accelerator,
answered for the "cuda" backend (``torchlight.cuda``).

PyTorch's tutorials pick their device with

    device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

which gives "cuda" where the "cuda" backend can run here (a GPU, or numba's simulator with
``NUMBA_ENABLE_CUDASIM=1``) and "cpu" otherwise, as it gives on PyTorch with and without a GPU.
"""

from typing import Any, Optional

from . import cuda
from .devices import device as _device

__all__ = [
    "current_accelerator",
    "current_device_index",
    "device_count",
    "is_available",
    "set_device_index",
    "synchronize",
]


def is_available() -> bool:
    """True when an accelerator (torchlight's "cuda" backend) can run here."""
    return cuda.is_available()


def device_count() -> int:
    """The number of accelerators torchlight can use: 1 when the "cuda" backend can run, else 0."""
    return cuda.device_count()


def current_accelerator(check_available: bool = False) -> Optional[_device]:
    """``device(type='cuda')`` where the "cuda" backend can run, else None (as PyTorch without an
    accelerator). The device has no index, as PyTorch's.

    :param check_available: PyTorch's; the answer is the same either way.
    """
    return _device("cuda") if cuda.is_available() else None


def current_device_index() -> int:
    """The index of the accelerator in use: 0, the one GPU torchlight addresses."""
    _require("current_device_index")
    return 0


def set_device_index(device: Any) -> None:
    """Use accelerator ``device`` (an index, "cuda:0" or a device): only 0 exists here.

    :param device: an index, ``"cuda:0"`` or a device.
    :raises RuntimeError: for any accelerator but cuda:0, or with none available.
    """
    _require("set_device_index")
    if not isinstance(device, int):
        where = _device(device)
        if where.type != "cuda":
            raise RuntimeError(f"set_device_index(): {where} is not an accelerator (torchlight's is cuda:0)")
    index = device if isinstance(device, int) else where.index
    if index not in (None, 0):
        raise RuntimeError(f"invalid device index {index}: torchlight addresses one GPU, cuda:0")


def synchronize(device: Any = None) -> None:
    """Wait for the accelerator's work to finish (torchlight's kernels return when they have).

    :param device: the accelerator (only cuda:0 here).
    :raises RuntimeError: with no accelerator available.
    """
    _require("synchronize")


def _require(fn: str) -> None:
    if not cuda.is_available():
        raise RuntimeError(f"{fn}(): Cannot access accelerator device when none is available.")
