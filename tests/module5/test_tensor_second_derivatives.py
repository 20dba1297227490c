"""Task 5.3: second derivatives of module 2's tensor operations (moved from
tests/module2/test_autodiff.py: double backward is module 5's), on module 2's tables of
operations, against central differences of the first derivatives (gradgradcheck), on the simple
and the fast backend."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import torchlight
from torchlight import backends, scalar
from torchlight.autograd import grad, gradgradcheck
from torchlight.autograd.functions import Map

from .helpers import module2

pytestmark = [
    pytest.mark.task5_3,
    pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True"),
]
BACKENDS = ["simple", "fast"]

_autodiff = module2("test_autodiff")
_strategies = module2("strategies")
UNARY, BINARY, DIRECT = _autodiff.UNARY, _autodiff.BINARY, _autodiff.DIRECT
ids, unary_input, binary_inputs = _autodiff.ids, _autodiff.unary_input, _autodiff.binary_inputs
shapes, tensors = _strategies.shapes, _strategies.tensors


@pytest.mark.parametrize("name, fn, elements, min_dims, unique", UNARY, ids=ids(UNARY))
@settings(max_examples=5)
@given(data=st.data())
def test_unary_gradgradcheck(backend_name, name, fn, elements, min_dims, unique, data):
    a, _ = unary_input(data, backends.get(backend_name), elements, min_dims, unique, max_side=2)
    assert gradgradcheck(fn, (a,))


@pytest.mark.parametrize("name, fn, ea, eb", BINARY, ids=ids(BINARY))
@settings(max_examples=5)
@given(data=st.data())
def test_binary_gradgradcheck(backend_name, name, fn, ea, eb, data):
    (a, _), (b, _) = binary_inputs(data, backends.get(backend_name), ea, eb, max_side=2)
    assert gradgradcheck(fn, (a, b))


def test_matmul_and_gather_gradgradcheck(backend_name):
    a = torchlight.rand(2, 3, seed=1, requires_grad=True, backend=backend_name)
    b = torchlight.rand(3, 2, seed=2, requires_grad=True, backend=backend_name)
    assert gradgradcheck(lambda x, y: x @ y, (a, b))
    index = torchlight.tensor([[2.0, 0.0], [1.0, 1.0]], backend=backend_name)
    assert gradgradcheck(lambda x: x.gather(1, index) ** 2, (a,))


@pytest.mark.parametrize("name, fn, elements", DIRECT, ids=ids(DIRECT))
@settings(max_examples=10)
@given(data=st.data())
def test_functions_applied_directly_gradgradcheck(backend_name, name, fn, elements, data):
    # the Functions the Tensor methods reach only indirectly (their first derivatives: task 2.4)
    from torchlight.autograd import functions as F

    backend = backends.get(backend_name)
    shape = data.draw(shapes(max_side=2))
    a, _ = data.draw(tensors(backend, shape=shape, elements=elements, requires_grad=True))
    b, _ = data.draw(tensors(backend, shape=shape, requires_grad=True))
    assert gradgradcheck(lambda x, y: fn(F, x, y), (a, b))


def test_create_graph_gives_higher_order_gradients(backend_name):
    x = torchlight.tensor([1.0, 2.0], requires_grad=True, backend=backend_name)
    y = (x**3).sum()
    (g,) = grad(y, x, create_graph=True)
    assert g.tolist() == [3.0, 12.0] and g.grad_fn is not None
    (gg,) = grad(g.sum(), x)
    assert gg.tolist() == [6.0, 12.0]
    y2 = (x**3).sum()
    y2.backward(create_graph=True)
    assert x.grad.grad_fn is not None  # .grad itself is differentiable
    x.grad.sum().backward()
    assert x.grad.tolist() == [6.0 + 3.0, 12.0 + 12.0]


def test_map_derivative_is_first_order_only(backend_name):
    # Map's derivative is a primitive (once_differentiable): it has no derivative of its own
    x = torchlight.tensor([0.5, -1.0], requires_grad=True, backend=backend_name)
    y = Map.apply(x, scalar.sigmoid, _autodiff._sigmoid_back)
    v = torchlight.ones(2, requires_grad=True, backend=backend_name)
    (g,) = grad(y, x, grad_outputs=v, create_graph=True)
    s = y.to_numpy()
    assert g.to_numpy() == pytest.approx(s * (1 - s))
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()
