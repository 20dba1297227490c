"""torchlight.manual_seed: one generator behind rand and the layers' initial weights."""

import numpy as np
import pytest

import torchlight
from torchlight.nn import Linear


@pytest.mark.task2_1
def test_the_same_seed_gives_the_same_rand():
    torchlight.manual_seed(3)
    first = [torchlight.rand(2, 3).to_numpy(), torchlight.rand(4).to_numpy()]
    torchlight.manual_seed(3)
    again = [torchlight.rand(2, 3).to_numpy(), torchlight.rand(4).to_numpy()]
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0].reshape(-1)[:4], first[1])  # the draws go on, not restart


@pytest.mark.task2_1
def test_different_seeds_give_different_rand():
    torchlight.manual_seed(0)
    a = torchlight.rand(10).to_numpy()
    torchlight.manual_seed(1)
    b = torchlight.rand(10).to_numpy()
    assert not np.array_equal(a, b)


@pytest.mark.task2_1
def test_an_explicit_seed_or_generator_does_not_touch_torchlights_generator():
    torchlight.manual_seed(5)
    expected = torchlight.rand(3).to_numpy()
    torchlight.manual_seed(5)
    np.testing.assert_array_equal(torchlight.rand(3, seed=9).to_numpy(), torchlight.rand(3, seed=9).to_numpy())
    torchlight.rand(3, generator=np.random.default_rng(1))
    np.testing.assert_array_equal(torchlight.rand(3).to_numpy(), expected)


@pytest.mark.task2_5
def test_the_same_seed_gives_the_same_linear_weights():
    def weights(seed):
        torchlight.manual_seed(seed)
        layers = [Linear(3, 4), Linear(3, 4)]
        return [p.value.to_numpy() for layer in layers for p in layer.parameters()]

    first, again, other = weights(7), weights(7), weights(8)
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    assert all(not np.array_equal(a, c) for a, c in zip(first, other, strict=True))
    assert not np.array_equal(first[0], first[2])  # two layers made in a row get different weights


@pytest.mark.task2_1
def test_manual_seed_is_torchlights_not_numpys():
    torchlight.manual_seed(11)
    a = torchlight.rand(5).to_numpy()
    torchlight.manual_seed(11)
    np.random.seed(0)
    np.random.random(3)  # numpy's global state is another generator
    np.testing.assert_array_equal(torchlight.rand(5).to_numpy(), a)
