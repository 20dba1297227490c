"""Module 3: ``torchlight.cuda``, PyTorch's questions about the GPU, answered for the "cuda" backend."""

from . import backends

__all__ = ["is_available", "device_count"]


def is_available() -> bool:
    """True when the "cuda" backend can run here (a GPU, or numba's simulator with NUMBA_ENABLE_CUDASIM=1)."""
    try:
        backends.get("cuda")
    except (backends.BackendUnavailable, ImportError):
        return False
    return True


def device_count() -> int:
    """The number of GPUs torchlight can use: 1 when the "cuda" backend can run, else 0."""
    return 1 if is_available() else 0
