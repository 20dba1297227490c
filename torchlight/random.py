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
    """Seed torchlight's generator; everything random afterwards repeats for the same seed.

    :param seed: a 64-bit integer: from -2**63 to 2**64 - 1, a negative one counting as itself
        plus 2**64 (as PyTorch).
    :returns: the generator.
    """
    global _default
    _default = np.random.default_rng(_seed(seed, "manual_seed"))
    return _default


def _seed(seed: object, fn: str) -> int:
    """seed as the non-negative int a numpy generator takes, or a clear error (as PyTorch's)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{fn}(): the seed must be an int, got {type(seed).__name__}: {seed!r}")
    seed = int(seed)
    if not -(2**63) <= seed < 2**64:
        raise ValueError(f"{fn}(): Overflow when unpacking long long: the seed {seed} does not fit in 64 bits")
    return seed % 2**64


def generator(seed: Optional[int] = None, generator: Optional[np.random.Generator] = None) -> np.random.Generator:
    """The generator to draw from: ``generator`` if given, a new one for ``seed`` if given, else
    torchlight's own (the one ``manual_seed`` seeds)."""
    if seed is not None and generator is not None:
        raise ValueError("pass seed or generator, not both")
    if generator is not None:
        return generator
    return _default if seed is None else np.random.default_rng(_seed(seed, "seed"))
