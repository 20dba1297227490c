"""Comparisons with NaN are false, as IEEE and PyTorch say (>= and <= included)."""

import math

import numpy as np
import pytest

import torchlight

pytestmark = pytest.mark.task2_3


def test_comparisons_with_nan_are_false(backend_name):
    x = torchlight.tensor([math.nan, 1.0, 0.0, -1.0], backend=backend_name)
    a = np.array([math.nan, 1.0, 0.0, -1.0])
    with np.errstate(invalid="ignore"):
        for got, want in [
            (x >= 0, a >= 0),
            (x <= 0, a <= 0),
            (x > 0, a > 0),
            (x < 0, a < 0),
            (x == 0, a == 0),
        ]:
            assert got.to_numpy().tolist() == want.astype(float).tolist()
