"""Task 3.6: training the tensor network on the fast backend: the same numbers as on simple, and a
2 -> 100 -> 100 -> 1 network (too slow for simple) that learns the split data set."""

import numpy as np
import pytest

from project.train_tensor import train

pytestmark = pytest.mark.task3_6


def test_fast_trains_exactly_as_simple_does():
    simple = train("split", hidden=10, epochs=5, n=50, backend="simple", progress=False)
    fast = train("split", hidden=10, epochs=5, n=50, backend="fast", progress=False)
    assert fast.backend == "fast" and simple.backend == "simple"
    # Only the matrix products add in another order (blocked, vectorized): rounding, nothing more.
    np.testing.assert_allclose(fast.losses, simple.losses, rtol=1e-12)
    for (name, p_fast), (_, p_simple) in zip(
        fast.model.named_parameters(), simple.model.named_parameters(), strict=True
    ):
        np.testing.assert_allclose(
            p_fast.value.to_numpy(), p_simple.value.to_numpy(), rtol=1e-10, atol=1e-12, err_msg=name
        )


def test_a_wide_network_learns_split_on_fast():
    result = train("split", hidden=100, epochs=150, n=150, backend="fast", progress=False)
    setting = "split, 150 points, 100 hidden units, 150 epochs"
    assert result.losses[-1] < 0.25 * result.losses[0], (
        f"the loss ({setting}) went from {result.losses[0]:.4f} to {result.losses[-1]:.4f}: not a quarter of that"
    )
    assert result.accuracy >= 0.95, (
        f"accuracy after training ({setting}): {result.accuracy} of the points classified right, below 0.95"
    )
