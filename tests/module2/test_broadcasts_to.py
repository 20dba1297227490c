"""Task 2.2: ``broadcasts_to(shape, target)``, the one test of whether a shape broadcasts to another."""

import numpy as np
import pytest
from hypothesis import given

from torchlight.tensor_data import broadcasts_to

from .strategies import broadcast_shapes, shapes

pytestmark = pytest.mark.task2_2


def _numpy_says(shape, target):
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


@given(shapes(max_dims=4), shapes(max_dims=4))
def test_broadcasts_to_agrees_with_numpy(shape, target):
    assert broadcasts_to(shape, target) == _numpy_says(shape, target)


@given(broadcast_shapes())
def test_each_of_two_broadcast_shapes_broadcasts_to_their_result(pair):
    a, b = pair
    out = np.broadcast_shapes(a, b)
    assert broadcasts_to(a, out) and broadcasts_to(b, out)


@pytest.mark.parametrize(
    "shape, target, expected",
    [
        ((), (2, 3), True),
        ((3,), (2, 3), True),
        ((2, 1), (2, 3), True),
        ((2, 3), (3,), False),
        ((3,), (1,), False),
        ((1,), (), False),
        ((0,), (0,), True),
        ((1,), (0,), True),
        ((2,), (0,), False),
    ],
    ids=lambda v: str(v),
)
def test_broadcasts_to_examples(shape, target, expected):
    assert broadcasts_to(shape, target) is expected, f"broadcasts_to({shape}, {target}) should be {expected}"
