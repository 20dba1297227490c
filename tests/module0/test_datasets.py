"""Task 0.4: the toy 2-D data sets."""

import random

import pytest

from torchlight import datasets

pytestmark = [pytest.mark.task0_4]

NAMES = ["simple", "diag", "split", "xor", "circle", "spiral"]

# The rule each uniform set labels by (spiral has its own tests).
RULES = {
    "simple": lambda x1, x2: x1 < 0.5,
    "diag": lambda x1, x2: x1 + x2 < 0.5,
    "split": lambda x1, x2: x1 < 0.2 or x1 > 0.8,
    "xor": lambda x1, x2: (x1 < 0.5) != (x2 < 0.5),
    "circle": lambda x1, x2: (x1 - 0.5) ** 2 + (x2 - 0.5) ** 2 > 0.1,
}


def test_registry():
    assert list(datasets.TOY) == NAMES
    for name in NAMES:
        assert name in datasets.__all__
        assert getattr(datasets, name) is datasets.TOY[name] is datasets.get(name)


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown data set 'moons'.*simple, diag, split, xor, circle, spiral"):
        datasets.get("moons")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", [1, 7, 100])
def test_shape_of_the_data(name, n):
    g = datasets.get(name)(n, seed=3)
    assert g.n == g.N == len(g) == n
    assert len(g.X) == len(g.y) == n
    for point in g.X:
        assert isinstance(point, tuple) and len(point) == 2
        assert all(isinstance(c, float) and 0.0 <= c <= 1.0 for c in point)
    assert all(isinstance(label, int) and label in (0, 1) for label in g.y)


@pytest.mark.parametrize("name", NAMES)
def test_deterministic_for_a_seed(name):
    fn = datasets.get(name)
    assert fn(50, seed=4) == fn(50, seed=4)
    assert fn(50) == fn(50, seed=0)


@pytest.mark.parametrize("name", NAMES)
def test_seeds_differ(name):
    fn = datasets.get(name)
    a, b = fn(50, seed=1), fn(50, seed=2)
    assert a.X != b.X
    if name != "spiral":  # spiral's labels alternate 0, 1, 0, ... whatever the seed
        assert a.y != b.y


@pytest.mark.parametrize("name", NAMES)
def test_global_random_state_untouched(name):
    random.seed(1234)
    state = random.getstate()
    datasets.get(name)(30, seed=9)
    assert random.getstate() == state


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", range(5))
def test_both_classes_present(name, seed):
    g = datasets.get(name)(100, seed=seed)
    assert 0 < sum(g.y) < 100


@pytest.mark.parametrize("name", sorted(RULES))
def test_labels_follow_the_rule(name):
    g = datasets.get(name)(200, seed=5)
    rule = RULES[name]
    assert g.y == [1 if rule(x1, x2) else 0 for x1, x2 in g.X]


@pytest.mark.parametrize("n", [1, 2, 9, 100])
def test_spiral_alternates_classes(n):
    g = datasets.spiral(n, seed=2)
    assert g.y == [i % 2 for i in range(n)]
    assert sum(g.y) == n // 2


def _nearest_label(train, point):
    x1, x2 = point
    best = min(range(train.n), key=lambda i: (train.X[i][0] - x1) ** 2 + (train.X[i][1] - x2) ** 2)
    return train.y[best]


@pytest.mark.parametrize("name", NAMES)
def test_labels_are_a_function_of_position(name):
    # A nearest-neighbour classifier fitted on one seed is accurate on another seed: the labels
    # follow the geometry of the set (for spiral: two separate arms), not chance.
    fn = datasets.get(name)
    train, test = fn(300, seed=10), fn(100, seed=11)
    correct = sum(_nearest_label(train, p) == label for p, label in zip(test.X, test.y, strict=True))
    assert correct >= 90


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "n, error", [(0, ValueError), (-3, ValueError), (2.5, TypeError), ("10", TypeError), (True, TypeError)]
)
def test_bad_n(name, n, error):
    with pytest.raises(error, match="number of points"):
        datasets.get(name)(n)


@pytest.mark.parametrize("name", NAMES)
def test_bad_seed(name):
    with pytest.raises(TypeError, match="seed must be an int"):
        datasets.get(name)(10, seed="a")
