"""Module 2: PyTorch's ``torch.backends.mps`` questions, answered: torchlight has no Apple GPU backend.

PyTorch's beginner programs pick their device with ``torch.cuda.is_available()`` and then
``torch.backends.mps.is_available()`` (Apple's Metal GPUs); here both of these say what runs:
``is_available()`` and ``is_built()`` are False, so such a program goes on to "cpu". torchlight's
GPU is the cuda backend (``torchlight.cuda``, ``torchlight.accelerator``).
"""

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """Whether an MPS (Apple Metal) device can be used: never, in torchlight."""
    return False


def is_built() -> bool:
    """Whether torchlight was built with MPS support: it has none."""
    return False
