"""Module 2: torchlight's random numbers: one generator, seeded by ``torchlight.manual_seed``.

``rand`` and the layers' initial weights draw from it (``generator()``), so that one call to
``manual_seed(seed)`` at the top of a program makes everything after it repeat exactly, as
``torch.manual_seed`` does. It is a numpy ``Generator`` that torchlight owns: numpy's global
state (``np.random.seed``) neither affects it nor is affected by it.
"""

from typing import Optional

import numpy as np

__all__ = ["generator", "manual_seed"]

_default = np.random.default_rng()  # unseeded until manual_seed: a different draw in each run


def manual_seed(seed: int) -> np.random.Generator:
    """Seed torchlight's generator; everything random afterwards repeats for the same seed. Returns it."""
    global _default
    _default = np.random.default_rng(seed)
    return _default


def generator(seed: Optional[int] = None, generator: Optional[np.random.Generator] = None) -> np.random.Generator:
    """The generator to draw from: ``generator`` if given, a new one for ``seed`` if given, else
    torchlight's own (the one ``manual_seed`` seeds)."""
    if seed is not None and generator is not None:
        raise ValueError("pass seed or generator, not both")
    if generator is not None:
        return generator
    return _default if seed is None else np.random.default_rng(seed)
