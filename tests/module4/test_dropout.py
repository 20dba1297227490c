"""Task 4.4: dropout zeroes each element with probability p and scales the rest by 1 / (1 - p).

Its mask comes from torchlight's generator, so ``torchlight.manual_seed`` repeats it (on every
backend alike); in evaluation (``training=False``) it is the identity.
"""

import re

import numpy as np
import pytest

import torchlight
import torchlight.nn.functional as F
from torchlight.autograd import gradcheck

pytestmark = pytest.mark.task4_4

BACKENDS = ["simple", "fast"]

# Enough elements for the fraction dropped to be within a few percent of p; fewer on simple
# (pure Python).
SIZE = {"simple": (20, 30), "fast": (100, 200)}


def ones(backend, shape, requires_grad=False):
    return torchlight.ones(shape, backend=backend, requires_grad=requires_grad)


@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_dropout_drops_a_fraction_p_and_scales_the_rest(backend_name, p):
    torchlight.manual_seed(0)
    shape = SIZE[backend_name]
    x = ones(backend_name, shape, requires_grad=True)
    out = F.dropout(x, p).to_numpy()
    kept = out != 0
    n = kept.size
    # the fraction dropped is p, within 4 standard deviations of a binomial count
    assert abs((1 - kept.mean()) - p) < 4 * np.sqrt(p * (1 - p) / n), (
        f"dropout(p={p}) of {n} ones dropped a fraction {1 - kept.mean():.3f} of them"
    )
    np.testing.assert_allclose(out[kept], 1 / (1 - p), rtol=1e-14)  # inverted scaling: the mean stays 1
    # the gradient goes through the kept elements only, scaled the same way
    torchlight.manual_seed(0)  # the same mask again
    F.dropout(x, p).sum().backward()
    np.testing.assert_array_equal(x.grad.to_numpy(), out)


def test_dropout_scales_any_values(backend_name):
    torchlight.manual_seed(1)
    a = np.random.default_rng(0).normal(size=(4, 5))
    out = F.dropout(torchlight.tensor(a, backend=backend_name), 0.25).to_numpy()
    kept = out != 0
    assert 0 < kept.sum() < kept.size, f"dropout(p=0.25) of 20 values kept {kept.sum()} of them"
    np.testing.assert_allclose(out[kept], a[kept] / 0.75, rtol=1e-14)


def test_dropout_is_seeded_by_manual_seed(backend_name):
    shape = SIZE[backend_name]
    x = ones(backend_name, shape)
    torchlight.manual_seed(7)
    first = F.dropout(x, 0.5).to_numpy()
    second = F.dropout(x, 0.5).to_numpy()
    torchlight.manual_seed(7)
    again = F.dropout(x, 0.5).to_numpy()
    np.testing.assert_array_equal(first, again)
    assert (first != second).any(), "two calls after one manual_seed(7) gave the same mask: draw a new one each call"
    torchlight.manual_seed(8)
    assert (F.dropout(x, 0.5).to_numpy() != first).any(), "manual_seed(8) gave manual_seed(7)'s mask"


def test_dropout_mask_is_the_same_on_every_backend():
    masks = []
    for backend in ("simple", "fast"):
        torchlight.manual_seed(3)
        masks.append(F.dropout(ones(backend, (6, 7)), 0.4).to_numpy())
    np.testing.assert_array_equal(*masks)


def test_dropout_in_evaluation_and_at_the_ends(backend_name):
    x = torchlight.tensor([[1.0, -2.0], [3.0, 4.0]], backend=backend_name, requires_grad=True)
    assert F.dropout(x, 0.5, training=False) is x, "dropout with training=False returns its input itself"
    assert F.dropout(x, 0.0) is x, "dropout with p=0 returns its input itself"
    dropped = F.dropout(x, 1.0)
    np.testing.assert_array_equal(dropped.to_numpy(), np.zeros((2, 2)))
    dropped.sum().backward()
    np.testing.assert_array_equal(x.grad.to_numpy(), np.zeros((2, 2)))


def test_dropout_gradcheck(backend_name):
    x = torchlight.tensor(np.random.default_rng(2).normal(size=(3, 4)), backend=backend_name, requires_grad=True)

    def fn(x):
        torchlight.manual_seed(5)  # the same mask at every evaluation
        return F.dropout(x, 0.3)

    assert gradcheck(fn, [x])


@pytest.mark.parametrize("p", [-0.1, 1.5, "0.5", True, None], ids=repr)
def test_dropout_rejects_a_bad_probability(p):
    with pytest.raises(ValueError, match=re.escape(f"dropout probability has to be between 0 and 1, but got {p!r}")):
        F.dropout(torchlight.tensor([1.0, 2.0]), p)


def test_dropout_needs_a_tensor():
    with pytest.raises(TypeError, match="argument 'input' must be Tensor, not list"):
        F.dropout([1.0, 2.0], 0.5)
