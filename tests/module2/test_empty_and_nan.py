"""Empty tensors and NaN in reductions, as numpy and PyTorch answer.

- A sum over no elements is 0 and a mean nan (0 / 0); a reduction over a dimension of size 0 keeps
  the other dimensions, whatever the layout. max has no identity: over no elements it is an error
  (PyTorch's), not -inf.
- NaN propagates through max: the maximum of a row holding NaN is NaN, its index that of the first
  NaN (numpy's argmax and PyTorch agree), and the gradient goes where PyTorch sends it.

These run again on the fast backend in tests/module3/test_fast_bad_input.py.
"""

import itertools
import math
import warnings

import numpy as np
import pytest

import torchlight

task2_3 = pytest.mark.task2_3
task2_4 = pytest.mark.task2_4

nan = math.nan

EMPTY_SHAPES = [(0,), (2, 0), (0, 3), (2, 0, 3), (0, 0)]


def _layouts(shape, backend):
    """Zeros of ``shape``: contiguous, and (2 dimensions or more) a permuted, non-contiguous view."""
    yield torchlight.zeros(*shape, backend=backend)
    if len(shape) > 1:
        order = tuple(reversed(range(len(shape))))
        yield torchlight.zeros(*reversed(shape), backend=backend).permute(*order)


def _dim_choices(n):
    return [None, *range(n), *itertools.combinations(range(n), 2)]


@task2_3
@pytest.mark.parametrize("shape", EMPTY_SHAPES, ids=str)
def test_sum_and_mean_over_empty_tensors_match_numpy(backend_name, shape):
    expected_of = {"sum": np.sum, "mean": np.mean}
    for t in _layouts(shape, backend_name):
        assert t.shape == shape
        for dim, keepdim, name in itertools.product(_dim_choices(len(shape)), (False, True), ("sum", "mean")):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # numpy warns of a mean of nothing: nan is the answer
                expected = expected_of[name](np.zeros(shape), axis=dim, keepdims=keepdim)
            got = getattr(t, name)(dim, keepdim=keepdim)
            where = f"{name}(dim={dim}, keepdim={keepdim}) of {shape} strides {t._data.strides}"
            assert got.shape == np.shape(expected), where
            np.testing.assert_array_equal(got.to_numpy(), expected, err_msg=where)


@task2_3
def test_empty_sum_is_zero_and_empty_mean_is_nan(backend_name):
    empty = torchlight.zeros(0, backend=backend_name)
    assert empty.sum().item() == 0.0 and empty.sum().shape == ()
    assert math.isnan(empty.mean().item())  # was ZeroDivisionError
    assert torchlight.zeros(2, 0, backend=backend_name).sum(1).tolist() == [0.0, 0.0]
    means = torchlight.zeros(2, 0, backend=backend_name).mean(1).tolist()
    assert len(means) == 2 and all(math.isnan(m) for m in means)


@task2_3
def test_max_of_no_elements_is_an_error(backend_name):
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified for input.numel\(\) == 0"):
        torchlight.zeros(0, backend=backend_name).max()  # was -inf
    with pytest.raises(RuntimeError, match=r"input.numel\(\) == 0"):
        torchlight.zeros(2, 0, backend=backend_name).max()
    for shape, dim in [((0, 3), 0), ((0, 3), -2), ((2, 0), 1), ((2, 0, 3), 1)]:
        with pytest.raises(
            IndexError, match=rf"max\(\): Expected reduction dim {dim % len(shape)} to have non-zero size"
        ):
            torchlight.zeros(*shape, backend=backend_name).max(dim)  # was -inf with index inf


@task2_3
def test_max_along_a_dimension_of_an_empty_tensor_keeps_the_shape(backend_name):
    for keepdim, shape in [(False, (0,)), (True, (1, 0))]:
        values, indices = torchlight.zeros(3, 0, backend=backend_name).max(0, keepdim=keepdim)
        assert values.shape == shape and indices.shape == shape


@task2_3
@pytest.mark.parametrize(
    "values", [[nan, 1.0], [1.0, nan], [nan, nan], [-math.inf, nan], [nan, math.inf, 2.0]], ids=str
)
def test_max_propagates_nan_in_any_position(backend_name, values):
    out = torchlight.tensor(values, backend=backend_name).max()
    assert math.isnan(out.item())
    # and a permuted, non-contiguous layout reaches the same answer
    grid = torchlight.tensor([values, values], backend=backend_name).permute(1, 0)
    assert math.isnan(grid.max().item())


def _with_nans(shape, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, shape).astype(float)  # small integers: ties too
    a[rng.random(shape) < 0.25] = nan
    return a


@task2_3
@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4)], ids=str)
def test_max_dim_with_nan_gives_nan_at_the_first_nan_as_numpy(backend_name, shape):
    for seed in range(3):
        a = _with_nans(shape, seed)
        t = torchlight.tensor(a, backend=backend_name)
        for dim in range(len(shape)):
            values, indices = t.max(dim)
            np.testing.assert_array_equal(values.to_numpy(), np.max(a, axis=dim), err_msg=f"dim {dim}")
            # argmax: the first maximum, or the first NaN in a row that has one (was len + 1)
            np.testing.assert_array_equal(indices.to_numpy(), np.argmax(a, axis=dim), err_msg=f"dim {dim}")


@task2_3
def test_max_dim_with_nan_matches_pytorch(backend_name):
    torch = pytest.importorskip("torch")
    a = np.array([[1.0, nan, 3.0, nan], [2.0, 5.0, 5.0, -1.0], [nan, nan, nan, nan], [-math.inf, nan, math.inf, 0.0]])
    for dim in (0, 1):
        values, indices = torchlight.tensor(a, backend=backend_name).max(dim)
        expected = torch.tensor(a).max(dim)
        np.testing.assert_array_equal(values.to_numpy(), expected.values.numpy())
        np.testing.assert_array_equal(indices.to_numpy(), expected.indices.numpy())


def _grad(backend, values, f):
    x = torchlight.tensor(values, backend=backend, requires_grad=True)
    f(x).sum().backward()
    return x.grad.to_numpy()


@task2_4
def test_max_gradient_with_nan_goes_to_the_nans(backend_name):
    # The maximum of all elements shares the gradient evenly among its positions, and with NaN the
    # NaNs are those positions (was nan everywhere: 0 / 0).
    cases = [
        ([1.0, nan, nan, 3.0], [0.0, 0.5, 0.5, 0.0]),
        ([1.0, nan, math.inf, 3.0], [0.0, 1.0, 0.0, 0.0]),
        ([1.0, 3.0, 3.0], [0.0, 0.5, 0.5]),
    ]
    for values, expected in cases:
        np.testing.assert_array_equal(_grad(backend_name, values, lambda x: x.max()), expected)


@task2_4
def test_max_dim_gradient_with_nan_goes_to_the_first_nan(backend_name):
    a = [[1.0, nan, nan, 3.0], [nan, 2.0, nan, 0.0], [4.0, 4.0, -1.0, 0.0]]
    expected = [[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]]
    np.testing.assert_array_equal(_grad(backend_name, a, lambda x: x.max(1).values), expected)
    np.testing.assert_array_equal(_grad(backend_name, a, lambda x: x.max(1, keepdim=True).values), expected)


@task2_4
def test_max_gradients_with_nan_match_pytorch(backend_name):
    torch = pytest.importorskip("torch")
    a = [[1.0, nan, nan, 3.0], [nan, 2.0, -math.inf, math.inf], [4.0, 4.0, -1.0, 0.0]]
    for ours, theirs in [
        (lambda x: x.max(), lambda x: x.max()),
        (lambda x: x.max(1).values, lambda x: x.max(1).values),
        (lambda x: x.max(0).values, lambda x: x.max(0).values),
    ]:
        x = torch.tensor(a, dtype=torch.float64, requires_grad=True)
        theirs(x).sum().backward()
        np.testing.assert_array_equal(_grad(backend_name, a, ours), x.grad.numpy())


@task2_4
def test_gradients_of_empty_reductions_are_empty(backend_name):
    for f in (lambda x: x.sum(), lambda x: x.mean(), lambda x: x.sum(1), lambda x: x.mean(0)):
        x = torchlight.zeros(2, 0, backend=backend_name, requires_grad=True)
        f(x).sum().backward()
        assert x.grad.shape == (2, 0)


# -- gradients that are numbers where the textbook formula gives nan (PyTorch's answers) ----------


@task2_4
def test_gradient_of_a_zeroth_power_is_zero_even_at_zero(backend_name):
    x = torchlight.tensor([0.0, 2.0, -1.5], backend=backend_name, requires_grad=True)
    (x**0.0).sum().backward()
    assert x.grad.to_numpy().tolist() == [0.0, 0.0, 0.0], "d/dx x ** 0 is 0 for every x, 0 included"
    x = torchlight.tensor([0.0, 2.0, -1.5], backend=backend_name, requires_grad=True)
    (x**2.0).sum().backward()  # and other exponents keep b * x ** (b - 1)
    assert x.grad.to_numpy().tolist() == [0.0, 4.0, -3.0]


def test_std_of_constant_values_has_a_zero_gradient(backend_name):
    x = torchlight.tensor([[1.5, 1.5, 1.5], [1.0, 2.0, 4.0]], backend=backend_name, requires_grad=True)
    x.std(1).sum().backward()
    g = x.grad.to_numpy()
    assert g[0].tolist() == [0.0, 0.0, 0.0], f"constant values: the gradient is 0 (PyTorch's), got {g[0]}"
    deviation = np.array([1.0, 2.0, 4.0]) - 7.0 / 3.0
    np.testing.assert_allclose(g[1], deviation / (2.0 * np.sqrt((deviation**2).sum() / 2.0)), rtol=1e-12)


def test_clamp_with_a_nan_bound_gives_nan_as_pytorch(backend_name):
    x = torchlight.tensor([1.0, nan, -3.0], backend=backend_name, requires_grad=True)
    for kwargs in ({"min": nan}, {"max": nan}, {"min": 0.0, "max": nan}):
        assert np.isnan(torchlight.clamp(x, **kwargs).to_numpy()).all(), kwargs
    bound = torchlight.tensor([nan, 0.0, 0.0], backend=backend_name)
    got = torchlight.clamp(x, min=bound).to_numpy()
    assert np.isnan(got[:2]).all() and got[2] == 0.0, got
    torchlight.clamp(x, min=nan).sum().backward()
    assert x.grad.to_numpy().tolist() == [0.0, 0.0, 0.0]
