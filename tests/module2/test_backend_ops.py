"""Task 2.3: tensor operations through a backend: map, zip, reduce, and the Tensor methods built
on them, against numpy on contiguous, permuted and strided inputs."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import torchlight
from torchlight import backends, scalar
from torchlight.backends import TensorBackend, simple

from .strategies import arrays, broadcast_shapes, floats, shapes, tensors

pytestmark = pytest.mark.task2_3


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# (scalar function, numpy reference, elements the inputs are drawn from)
MAPS = [
    (scalar.neg, np.negative, floats()),
    (scalar.id, lambda x: x, floats()),
    (scalar.exp, np.exp, floats()),
    (scalar.sigmoid, sigmoid, floats(-30, 30)),
    (scalar.relu, lambda x: np.maximum(x, 0.0), floats()),
    (scalar.tanh, np.tanh, floats()),
    (scalar.abs, np.abs, floats()),
    (scalar.sign, np.sign, floats()),
    (scalar.log, np.log, floats(0.01, 5.0)),
    (scalar.inv, lambda x: 1.0 / x, floats(away_from=0.0)),
    (scalar.sqrt, np.sqrt, floats(0.0, 5.0)),
]

ZIPS = [
    (scalar.add, np.add, floats()),
    (scalar.sub, np.subtract, floats()),
    (scalar.mul, np.multiply, floats()),
    (scalar.div, np.divide, floats(away_from=0.0)),
    (scalar.max, np.maximum, floats()),
    (scalar.lt, lambda a, b: (a < b).astype(float), floats()),
    (scalar.gt, lambda a, b: (a > b).astype(float), floats()),
    (scalar.eq, lambda a, b: (a == b).astype(float), st.sampled_from([0.0, 1.0, 2.0])),
    (scalar.pow, np.power, floats(0.1, 3.0)),
    (scalar.log_back, lambda a, d: d / a, floats(0.1, 3.0)),
    (scalar.relu_back, lambda a, d: np.where(a > 0, d, 0.0), floats()),
]

REDUCES = [
    (scalar.add, 0.0, np.sum),
    (scalar.mul, 1.0, np.prod),
    (scalar.max, -math.inf, np.max),
]


def names(table):
    return [row[0].__name__ for row in table]


@pytest.mark.parametrize("fn, reference, elements", MAPS, ids=names(MAPS))
@given(data=st.data())
def test_map_matches_numpy(backend_name, fn, reference, elements, data):
    backend = backends.get(backend_name)
    a, values = data.draw(tensors(backend, elements=elements))
    out = backend.map(fn)(a)
    assert out.shape == values.shape and out.backend is backend and out.history is None
    np.testing.assert_allclose(out.to_numpy(), reference(values), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("fn, reference, elements", ZIPS, ids=names(ZIPS))
@given(data=st.data())
def test_zip_matches_numpy(backend_name, fn, reference, elements, data):
    backend = backends.get(backend_name)
    sa, sb = data.draw(broadcast_shapes())
    a, va = data.draw(tensors(backend, shape=sa, elements=elements))
    b, vb = data.draw(tensors(backend, shape=sb, elements=elements))
    out = backend.zip(fn)(a, b)
    np.testing.assert_allclose(out.to_numpy(), reference(va, vb), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("fn, start, reference", REDUCES, ids=names(REDUCES))
@given(data=st.data())
def test_reduce_matches_numpy_and_keeps_the_dim(backend_name, fn, start, reference, data):
    backend = backends.get(backend_name)
    a, values = data.draw(tensors(backend, shape=data.draw(shapes(min_dims=1))))
    dim = data.draw(st.integers(-values.ndim, values.ndim - 1))
    out = backend.reduce(fn, start)(a, dim)
    np.testing.assert_allclose(out.to_numpy(), reference(values, axis=dim, keepdims=True), rtol=1e-12)


@given(data=st.data())
def test_map_writes_into_a_strided_out(backend_name, data):
    backend = backends.get(backend_name)
    shape = data.draw(shapes(min_dims=1))
    a, values = data.draw(tensors(backend, shape=shape))
    target = torchlight.zeros(*[2 * n for n in shape], backend=backend)
    window = target[tuple(slice(1, None, 2) for _ in shape)]
    backend.map(scalar.neg)(a, out=window)
    expected = np.zeros(target.shape)
    expected[tuple(slice(1, None, 2) for _ in shape)] = -values
    np.testing.assert_array_equal(target.to_numpy(), expected)


@given(data=st.data())
def test_map_broadcasts_its_input_into_a_larger_out(backend_name, data):
    # out= may be larger than the input, as numpy's out= of a ufunc: the input is broadcast to it
    backend = backends.get(backend_name)
    small, other = data.draw(broadcast_shapes())
    big = tuple(np.broadcast_shapes(small, other))
    a, values = data.draw(tensors(backend, shape=small))
    out = torchlight.zeros(*big, backend=backend)
    backend.map(scalar.neg)(a, out=out)
    np.testing.assert_array_equal(out.to_numpy(), -np.broadcast_to(values, big))


def test_out_of_the_wrong_shape_is_an_error(backend_name):
    backend = backends.get(backend_name)
    a = torchlight.zeros(2, 3, backend=backend)
    with pytest.raises(RuntimeError, match=r"result of shape \(2, 3\) does not fit out= of shape \(3,\)"):
        backend.map(scalar.neg)(a, out=torchlight.zeros(3, backend=backend))


def test_the_built_operation_is_cached_per_function(backend_name):
    backend = backends.get(backend_name)
    assert backend.zip(scalar.mul) is backend.zip(scalar.mul)
    assert backend.reduce(scalar.add, 0.0) is backend.reduce(scalar.add, 0)
    assert backend.map(scalar.neg) is not backend.map(scalar.exp)


# -- Tensor methods built on the primitives ---------------------------------------------------

UNARY_METHODS = [
    ("exp", np.exp, floats()),
    ("log", np.log, floats(0.1, 5.0)),
    ("sigmoid", sigmoid, floats()),
    ("relu", lambda x: np.maximum(x, 0.0), floats()),
    ("tanh", np.tanh, floats()),
    ("sqrt", np.sqrt, floats(0.0, 5.0)),
    ("abs", np.abs, floats()),
]


@pytest.mark.parametrize("name, reference, elements", UNARY_METHODS, ids=[r[0] for r in UNARY_METHODS])
@given(data=st.data())
def test_elementwise_methods(backend_name, name, reference, elements, data):
    a, values = data.draw(tensors(backends.get(backend_name), elements=elements))
    np.testing.assert_allclose(getattr(a, name)().to_numpy(), reference(values), rtol=1e-12, atol=1e-15)


@given(data=st.data())
def test_sum_mean_and_max_match_numpy(backend_name, data):
    a, values = data.draw(tensors(backends.get(backend_name), unique=True))
    keepdim = data.draw(st.booleans())
    dim = None
    if values.ndim:
        dim = data.draw(st.none() | st.integers(-values.ndim, values.ndim - 1))
    s = a.sum(dim, keepdim)
    np.testing.assert_allclose(s.to_numpy(), np.sum(values, axis=dim, keepdims=keepdim), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        a.mean(dim, keepdim).to_numpy(), np.mean(values, axis=dim, keepdims=keepdim), rtol=1e-12, atol=1e-12
    )
    if dim is None:
        m = a.max()
        assert m.shape == () and m.item() == values.max()
    else:
        values_, indices = a.max(dim, keepdim)
        np.testing.assert_array_equal(values_.to_numpy(), np.max(values, axis=dim, keepdims=keepdim))
        np.testing.assert_array_equal(indices.to_numpy(), np.argmax(values, axis=dim, keepdims=keepdim))


def test_sum_over_several_dims(backend_name):
    values = np.arange(24.0).reshape(2, 3, 4)
    a = torchlight.tensor(values, backend=backend_name)
    np.testing.assert_array_equal(a.sum((0, 2)).to_numpy(), values.sum(axis=(0, 2)))
    np.testing.assert_array_equal(a.sum((0, -1), keepdim=True).to_numpy(), values.sum(axis=(0, 2), keepdims=True))
    assert a.sum().shape == () and a.sum().item() == values.sum()


def test_max_indices_are_the_first_maximum(backend_name):
    a = torchlight.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], backend=backend_name)
    values, indices = a.max(1)
    assert values.tolist() == [3.0, 2.0] and indices.tolist() == [1.0, 0.0]
    assert a.max(dim=0, keepdim=True).indices.tolist() == [[1.0, 0.0, 0.0]]


def test_all_and_is_close(backend_name):
    a = torchlight.tensor([[1.0, 0.0], [2.0, 3.0]], backend=backend_name)
    assert a.all().item() == 0.0 and (a + 1.0).all().item() == 1.0
    assert a.all(1).tolist() == [0.0, 1.0]
    b = a + torchlight.tensor([[0.001, 0.5], [0.0, -0.005]], backend=backend_name)
    assert a.is_close(b).tolist() == [[1.0, 0.0], [1.0, 1.0]]


@given(data=st.data())
def test_gather_matches_numpy_take_along_axis(backend_name, data):
    backend = backends.get(backend_name)
    a, values = data.draw(tensors(backend, shape=data.draw(shapes(min_dims=1))))
    dim = data.draw(st.integers(0, values.ndim - 1))
    n = values.shape[dim]
    index_shape = tuple(data.draw(st.integers(1, 3)) if d == dim else m for d, m in enumerate(values.shape))
    index = data.draw(arrays(index_shape, elements=st.integers(0, n - 1).map(float)))
    out = a.gather(dim, torchlight.tensor(index, backend=backend))
    np.testing.assert_array_equal(out.to_numpy(), np.take_along_axis(values, index.astype(int), axis=dim))


def test_gather_with_an_index_smaller_than_the_input(backend_name):
    a = torchlight.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], backend=backend_name)
    assert a.gather(1, torchlight.tensor([[2.0, 0.0]], backend=backend_name)).tolist() == [[3.0, 1.0]]


def test_gather_errors(backend_name):
    a = torchlight.zeros(2, 3, backend=backend_name)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 1 with size 3"):
        a.gather(1, torchlight.tensor([[3.0], [0.0]], backend=backend_name))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        a.gather(1, torchlight.tensor([0.0], backend=backend_name))
    with pytest.raises(RuntimeError, match="whole numbers"):
        a.gather(1, torchlight.tensor([[0.5], [0.0]], backend=backend_name))
    with pytest.raises(RuntimeError, match=r"Size does not match at dimension 0"):
        a.gather(1, torchlight.zeros(3, 1, backend=backend_name))


# -- backends by name ---------------------------------------------------------------------------


def test_unknown_backend_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown backend 'gpu'.*'cuda', 'fast', 'simple'"):
        backends.get("gpu")


def test_mixing_backends_is_an_error_naming_both():
    other = TensorBackend(simple, "other")
    a = torchlight.zeros(2, backend="simple")
    b = torchlight.zeros(2, backend=other)
    with pytest.raises(RuntimeError, match=r"'simple' backend.*'other' backend.*\.to\('simple'\)"):
        a + b
    with pytest.raises(RuntimeError, match="'other' backend"):
        a @ b


def test_to_moves_between_backends():
    other = TensorBackend(simple, "other")
    a = torchlight.tensor([1.0, 2.0], requires_grad=True, backend="simple")
    b = a.to(other)
    assert b.backend is other and b.tolist() == [1.0, 2.0] and a.to("simple") is a
    assert "backend='other'" in repr(b)
    # that the gradient comes back through .to() is tested in test_autodiff.py (task 2.4)


def test_set_default_backend():
    other = TensorBackend(simple, "other")
    before = backends.default()
    try:
        torchlight.set_default_backend(other)
        assert torchlight.zeros(1).backend is other
        assert backends.get("other") is other
        torchlight.set_default_backend("simple")
        assert torchlight.zeros(1).backend is backends.get("simple")
        with pytest.raises(ValueError, match="unknown backend"):
            torchlight.set_default_backend("nope")
    finally:
        torchlight.set_default_backend(before)


def test_default_backend_comes_from_the_environment():
    # (the default backend itself, not a tensor on it: this check needs no tensor code of its own)
    code = "import torchlight; print(torchlight.backends.default().name)"
    env = dict(os.environ, TORCHLIGHT_BACKEND="nope")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert run.returncode != 0 and "unknown backend 'nope'" in run.stderr
    env["TORCHLIGHT_BACKEND"] = "simple"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert run.stdout.strip() == "simple"
