"""Module 4: generated 1-D signals for conv1d, noisy waveforms of four shapes.

Every signal is ``amplitude * wave(frequency * t + phase) + noise`` sampled at ``length`` points
``t = 0, 1/length, ..., (length - 1)/length``, where the wave is one of four periodic shapes
(its class) and frequency, phase and amplitude are drawn at random. What tells the classes apart
is the local shape of the curve (smooth, jumps, corners, ramps with drops), not where it sits in
the window, which is what a convolution's shared filters detect.
"""

import numbers
from typing import List

import numpy as np

from .base import ArrayDataset, Transform

# the random ranges: cycles per window, amplitude (peak value)
_FREQUENCY = (1.0, 4.0)
_AMPLITUDE = (0.5, 1.0)


def _wave(kind: int, cycles: np.ndarray) -> np.ndarray:
    """Shape ``kind`` (0 sine, 1 square, 2 triangle, 3 sawtooth) at ``cycles`` (time in periods), in [-1, 1]."""
    frac = cycles - np.floor(cycles)  # position within the period, in [0, 1)
    if kind == 0:
        return np.sin(2.0 * np.pi * cycles)
    if kind == 1:
        return np.where(frac < 0.5, 1.0, -1.0)
    if kind == 2:
        return 4.0 * np.abs(frac - 0.5) - 1.0
    return 2.0 * frac - 1.0


class Waveforms(ArrayDataset):
    """Seeded noisy waveforms to classify by shape: 0 sine, 1 square, 2 triangle, 3 sawtooth.

    ``.data`` (n, length) float64, ``.targets`` (n,) int64 with the four classes equally often
    (counts differ by at most one), in random order, and items ``(signal tensor (1, length), int
    label)``. Each signal has a random frequency (1 to 4 cycles per window), phase and amplitude
    (0.5 to 1), plus Gaussian noise. The same arguments give the same signals on every machine; the
    training and test sets of one seed are drawn independently.

    :param n: how many signals.
    :param length: the samples in each.
    :param train: the training set (True) or the test set (False).
    :param seed: the seed the signals are drawn with.
    :param noise: the standard deviation of the noise.
    :param transform: a function applied to each signal tensor as it is read (None: none).
    :param target_transform: a function applied to each int label (None: none).
    """

    classes = ["sine", "square", "triangle", "sawtooth"]

    def __init__(
        self,
        n: int = 1000,
        length: int = 64,
        train: bool = True,
        seed: int = 0,
        noise: float = 0.1,
        transform: Transform = None,
        target_transform: Transform = None,
    ):
        for arg, value, low in (("n", n, 1), ("length", length, 2)):
            if not isinstance(value, numbers.Integral) or isinstance(value, bool):
                raise TypeError(f"Waveforms({arg}=...): expected an int, got {type(value).__name__} {value!r}")
            if value < low:
                raise ValueError(f"Waveforms({arg}=...): expected at least {low}, got {value}")
        if not isinstance(train, bool):
            raise TypeError(f"Waveforms(train=...): expected True (training set) or False (test set), got {train!r}")
        if not isinstance(seed, numbers.Integral) or isinstance(seed, bool):
            raise TypeError(f"Waveforms(seed=...): expected an int, got {type(seed).__name__} {seed!r}")
        if not 0 <= seed < 2**32:
            raise ValueError(f"Waveforms(seed=...): expected 0 <= seed < 2**32, got {seed}")
        if not isinstance(noise, numbers.Real) or isinstance(noise, bool):
            raise TypeError(f"Waveforms(noise=...): expected a number, got {type(noise).__name__} {noise!r}")
        if not noise >= 0:  # also catches nan
            raise ValueError(f"Waveforms(noise=...): expected a standard deviation >= 0, got {noise}")
        self.train: bool = train
        self.seed: int = int(seed)
        # RandomState, not default_rng: numpy freezes its streams (NEP 19), so the data never
        # changes with the numpy version. Train and test draw from two different streams.
        rng = np.random.RandomState([self.seed, 0 if train else 1])
        labels = rng.permutation(np.arange(n) % len(self.classes))
        frequency = rng.uniform(*_FREQUENCY, size=(n, 1))
        phase = rng.uniform(0.0, 1.0, size=(n, 1))
        amplitude = rng.uniform(*_AMPLITUDE, size=(n, 1))
        cycles = frequency * (np.arange(length) / length) + phase
        signals = np.empty((n, length))
        for kind in range(len(self.classes)):
            rows = labels == kind
            signals[rows] = amplitude[rows] * _wave(kind, cycles[rows])
        signals += rng.normal(0.0, float(noise), size=(n, length))
        super().__init__(signals, labels, transform, target_transform)

    def _describe(self) -> List[str]:
        return [f"Split: {'Train' if self.train else 'Test'}", f"Seed: {self.seed}"]
