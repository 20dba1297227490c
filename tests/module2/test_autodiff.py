"""Task 2.4: tensor autodiff. Every op's gradient against central differences (gradcheck), on
contiguous, permuted and strided inputs and with broadcasting; values and gradients against
PyTorch; and backward's semantics and errors. (Second derivatives are module 5's: the tables here
serve tests/module5/test_tensor_second_derivatives.py too.)"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import torchlight
from torchlight import backends, scalar
from torchlight.autograd import Function, GradcheckError, backpropagate, grad, gradcheck, topological_sort
from torchlight.autograd.functions import Map
from torchlight.backends import TensorBackend, simple

from .strategies import broadcast_shapes, floats, shapes, tensors

pytestmark = pytest.mark.task2_4

POSITIVE = floats(0.5, 3.0)
AWAY_FROM_ZERO = floats(away_from=0.0, gap=0.3)


def reverse(a):
    return a.permute(tuple(reversed(range(a.dim()))))


# (name, fn, elements, min_dims, unique). Each fn uses only methods that torch.Tensor has too,
# so that the same table drives gradcheck and the comparison with PyTorch.
UNARY = [
    ("neg", lambda a: -a, None, 0, False),
    ("exp", lambda a: a.exp(), None, 0, False),
    ("log", lambda a: a.log(), POSITIVE, 0, False),
    ("sigmoid", lambda a: a.sigmoid(), None, 0, False),
    ("relu", lambda a: a.relu(), AWAY_FROM_ZERO, 0, False),
    ("tanh", lambda a: a.tanh(), None, 0, False),
    ("sqrt", lambda a: a.sqrt(), POSITIVE, 0, False),
    ("abs", lambda a: a.abs(), AWAY_FROM_ZERO, 0, False),
    ("inv", lambda a: 1.0 / a, AWAY_FROM_ZERO, 0, False),
    ("square", lambda a: a**2, None, 0, False),
    ("pow_half", lambda a: a**0.5, POSITIVE, 0, False),
    ("exp2", lambda a: 2.0**a, None, 0, False),
    ("affine", lambda a: 1.5 - 3.0 * a + 0.5 / 2.0, None, 0, False),
    ("div_number", lambda a: a / 4.0, None, 0, False),
    ("sum", lambda a: a.sum(), None, 0, False),
    ("sum_dim", lambda a: a.sum(0), None, 1, False),
    ("sum_keepdim", lambda a: a.sum(-1, keepdim=True), None, 1, False),
    ("mean", lambda a: a.mean(), None, 0, False),
    ("mean_dim", lambda a: a.mean(-1), None, 1, False),
    ("max", lambda a: a.max(), None, 0, True),
    ("max_dim", lambda a: a.max(0).values, None, 1, True),
    ("max_keepdim", lambda a: a.max(-1, keepdim=True).values, None, 1, True),
    ("permute", lambda a: reverse(a) * 1.0, None, 0, False),
    ("transpose", lambda a: a.transpose(0, -1).exp(), None, 1, False),
    # a 3-cycle is not its own inverse (reversing and transposing are): backward must invert it
    ("permute_cycle", lambda a: a.permute(1, 2, 0).exp(), None, 3, False),
    ("view", lambda a: a.contiguous().view(-1), None, 0, False),
    ("reshape", lambda a: reverse(a).reshape(-1, 1), None, 0, False),
    ("expand", lambda a: a.unsqueeze(0).expand(2, *a.shape).sigmoid(), None, 0, False),
    ("index_int", lambda a: a[0], None, 1, False),
    ("index_slice", lambda a: a[..., 1:] * a[..., :1], None, 1, False),
    ("index_none", lambda a: a[None] * 2.0, None, 0, False),
    ("clone", lambda a: a.clone(), None, 0, False),
    ("squeeze", lambda a: a.unsqueeze(1).squeeze(1), None, 1, False),
]

BINARY = [
    ("add", lambda a, b: a + b, None, None),
    ("sub", lambda a, b: a - b, None, None),
    ("mul", lambda a, b: a * b, None, None),
    ("div", lambda a, b: a / b, None, AWAY_FROM_ZERO),
    ("pow", lambda a, b: a**b, POSITIVE, floats(-2.0, 2.0)),
    ("composite", lambda a, b: (a * b).sigmoid() + (a - b).tanh() * b, None, None),
]


def ids(table):
    return [row[0] for row in table]


def unary_input(data, backend, elements, min_dims, unique, max_side=3):
    shape = data.draw(shapes(min_dims=min_dims, max_side=max_side))
    return data.draw(tensors(backend, shape=shape, elements=elements, unique=unique, requires_grad=True))


def binary_inputs(data, backend, ea, eb, max_side=3):
    sa, sb = data.draw(broadcast_shapes(max_side=max_side))
    a, va = data.draw(tensors(backend, shape=sa, elements=ea, requires_grad=True))
    b, vb = data.draw(tensors(backend, shape=sb, elements=eb, requires_grad=True))
    return (a, va), (b, vb)


# -- central differences -------------------------------------------------------------------------


@pytest.mark.parametrize("name, fn, elements, min_dims, unique", UNARY, ids=ids(UNARY))
@given(data=st.data())
def test_unary_gradcheck(backend_name, name, fn, elements, min_dims, unique, data):
    a, _ = unary_input(data, backends.get(backend_name), elements, min_dims, unique)
    assert gradcheck(fn, (a,))


@pytest.mark.parametrize("name, fn, ea, eb", BINARY, ids=ids(BINARY))
@given(data=st.data())
def test_binary_gradcheck_with_broadcasting(backend_name, name, fn, ea, eb, data):
    (a, _), (b, _) = binary_inputs(data, backends.get(backend_name), ea, eb)
    assert gradcheck(fn, (a, b))


@given(data=st.data())
def test_gather_gradcheck(backend_name, data):
    backend = backends.get(backend_name)
    a, values = unary_input(data, backend, None, 1, False)
    dim = data.draw(st.integers(0, a.dims - 1))
    shape = tuple(data.draw(st.integers(1, 3)) if d == dim else n for d, n in enumerate(a.shape))
    index = np.array(
        data.draw(
            st.lists(st.integers(0, a.shape[dim] - 1), min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))
        ),
        dtype=float,
    )
    index_t = torchlight.tensor(index.reshape(shape), backend=backend)
    assert gradcheck(lambda x: x.gather(dim, index_t), (a,))


def test_gradcheck_catches_a_wrong_gradient():
    class Twice(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2.0

        @staticmethod
        def backward(ctx, g):
            return g * 3.0  # wrong on purpose

    x = torchlight.rand(2, 2, seed=0, requires_grad=True)
    with pytest.raises(
        GradcheckError, match=r"Jacobian mismatch with respect to input 0.*analytical 3.0, numerical 2.0"
    ):
        gradcheck(Twice.apply, (x,))
    assert gradcheck(Twice.apply, (x,), raise_exception=False) is False
    with pytest.raises(GradcheckError, match="random direction"):
        gradcheck(Twice.apply, (x,), fast_mode=True)


def test_gradcheck_needs_an_input_that_requires_grad():
    with pytest.raises(ValueError, match="requires_grad=True"):
        gradcheck(lambda a: a * 2.0, (torchlight.zeros(2),))


# Second derivatives (gradgradcheck, create_graph) are double backward, taught in module 5: those
# tests are in tests/module5/test_tensor_second_derivatives.py (task 5.3), on these same tables.


# -- against PyTorch ---------------------------------------------------------------------------


def torch_leaf(torch, values):
    return torch.tensor(values, dtype=torch.float64, requires_grad=True)


def compare_with_torch(torch, fn, inputs, torch_inputs, data):
    out = fn(*inputs)
    expected = fn(*torch_inputs)
    np.testing.assert_allclose(out.to_numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = data.draw(tensors(out.backend, shape=out.shape))[1]
    out.backward(out.new_tensor(g))
    expected.backward(torch.tensor(g, dtype=torch.float64))
    for x, t in zip(inputs, torch_inputs, strict=True):
        np.testing.assert_allclose(x.grad.to_numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, fn, elements, min_dims, unique", UNARY, ids=ids(UNARY))
@given(data=st.data())
def test_unary_matches_torch(backend_name, name, fn, elements, min_dims, unique, data):
    torch = pytest.importorskip("torch")
    a, values = unary_input(data, backends.get(backend_name), elements, min_dims, unique)
    compare_with_torch(torch, fn, [a], [torch_leaf(torch, values)], data)


@pytest.mark.parametrize("name, fn, ea, eb", BINARY, ids=ids(BINARY))
@given(data=st.data())
def test_binary_matches_torch(backend_name, name, fn, ea, eb, data):
    torch = pytest.importorskip("torch")
    (a, va), (b, vb) = binary_inputs(data, backends.get(backend_name), ea, eb)
    compare_with_torch(torch, fn, [a, b], [torch_leaf(torch, va), torch_leaf(torch, vb)], data)


def test_gather_and_max_indices_match_torch(backend_name):
    torch = pytest.importorskip("torch")
    values = np.array([[0.3, -1.2, 2.5], [1.1, 0.4, -0.7]])
    index = np.array([[2, 2, 0], [1, 0, 0]])
    a = torchlight.tensor(values, requires_grad=True, backend=backend_name)
    t = torch_leaf(torch, values)
    out = a.gather(1, torchlight.tensor(index, backend=backend_name))
    expected = t.gather(1, torch.tensor(index))
    np.testing.assert_array_equal(out.to_numpy(), expected.detach().numpy())
    g = np.array([[1.0, -2.0, 0.5], [3.0, 1.0, -1.0]])
    out.backward(out.new_tensor(g))
    expected.backward(torch.tensor(g))
    np.testing.assert_array_equal(a.grad.to_numpy(), t.grad.numpy())
    np.testing.assert_array_equal(a.max(1).indices.to_numpy(), t.max(1).indices.numpy())


# -- backward semantics --------------------------------------------------------------------------


def test_broadcast_gradients_are_summed_to_the_input_shape(backend_name):
    a = torchlight.rand(2, 3, seed=0, requires_grad=True, backend=backend_name)
    b = torchlight.rand(3, seed=1, requires_grad=True, backend=backend_name)
    c = torchlight.tensor(2.0, requires_grad=True, backend=backend_name)
    (a + b * c).sum().backward()
    assert a.grad.shape == (2, 3) and b.grad.shape == (3,) and c.grad.shape == ()
    np.testing.assert_allclose(b.grad.to_numpy(), [4.0, 4.0, 4.0])
    np.testing.assert_allclose(c.grad.item(), 2.0 * b.to_numpy().sum())


def test_leaf_gradients_are_fresh_contiguous_tensors(backend_name):
    a = torchlight.rand(3, seed=0, requires_grad=True, backend=backend_name)
    b = torchlight.rand(3, seed=1, requires_grad=True, backend=backend_name)
    (a + b).sum().backward()  # the same gradient tensor reaches both leaves
    assert a.grad._data.storage is not b.grad._data.storage
    assert a.grad.is_contiguous() and a.grad.tolist() == [1.0, 1.0, 1.0]
    assert a.grad.history is None


def test_a_second_backward_needs_retain_graph(backend_name):
    x = torchlight.tensor([1.0, 2.0], requires_grad=True, backend=backend_name)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]  # accumulated twice
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_backward_errors(backend_name):
    x = torchlight.tensor([1.0, 2.0], requires_grad=True, backend=backend_name)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2.0).backward()
    with pytest.raises(
        RuntimeError,
        match=r"Mismatch in shape: grad_output\[0\] has a shape of \(3,\) and output\[0\] has a shape of \(2,\)",
    ):
        (x * 2.0).backward(torchlight.ones(3, backend=backend_name))
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        torchlight.zeros(2, backend=backend_name).sum().backward()


def test_backward_of_a_one_element_tensor_and_with_a_gradient(backend_name):
    x = torchlight.tensor([[3.0]], requires_grad=True, backend=backend_name)
    (x * x).backward()
    assert x.grad.tolist() == [[6.0]]
    y = torchlight.tensor([1.0, 2.0], requires_grad=True, backend=backend_name)
    (y * 3.0).backward(torchlight.tensor([1.0, -1.0], backend=backend_name))
    assert y.grad.tolist() == [3.0, -3.0]


def test_requires_grad_is_leaf_grad_fn_detach(backend_name):
    x = torchlight.tensor([1.0, 2.0], backend=backend_name)
    assert not x.requires_grad and x.is_leaf
    assert (x * 2.0).grad_fn is None and not (x * 2.0).requires_grad
    x.requires_grad_()
    assert x.requires_grad and x.is_leaf and x.grad_fn is None
    y = x * 2.0
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name == "MulBackward"
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)
    d = y.detach()
    assert not d.requires_grad and d._data.storage is y._data.storage
    x.requires_grad = False
    assert not x.requires_grad and not (x * 2.0).requires_grad
    with torchlight.no_grad():
        z = torchlight.tensor([1.0], requires_grad=True, backend=backend_name) * 2.0
    assert not z.requires_grad


def test_comparisons_and_max_indices_have_no_gradient(backend_name):
    x = torchlight.tensor([1.0, -2.0, 3.0], requires_grad=True, backend=backend_name)
    mask = x > 0.0
    assert not mask.requires_grad
    assert not x.max(0).indices.requires_grad
    (x * mask).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]


def test_max_without_dim_shares_the_gradient_among_ties(backend_name):
    x = torchlight.tensor([2.0, 1.0, 2.0], requires_grad=True, backend=backend_name)
    x.max().backward()
    assert x.grad.tolist() == [0.5, 0.0, 0.5]  # as PyTorch


def test_zero_grad(backend_name):
    x = torchlight.tensor([1.0], requires_grad=True, backend=backend_name)
    (x * 2.0).sum().backward()
    x.zero_grad_()
    assert x.grad is None


def test_gradients_flow_through_views(backend_name):
    x = torchlight.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True, backend=backend_name)
    y = x[1, 1:].sum() + (x.permute(1, 0)[0] * 10.0).sum() + x.view(6)[0]
    y.backward()
    assert x.grad.tolist() == [[11.0, 0.0, 0.0], [10.0, 1.0, 1.0]]


def test_a_gradient_of_the_wrong_shape_names_the_function_and_shapes(backend_name):
    class Bad(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1.0

        @staticmethod
        def backward(ctx, g):
            return torchlight.ones(3, backend=g.backend)

    x = torchlight.zeros(2, 2, requires_grad=True, backend=backend_name)
    with pytest.raises(
        RuntimeError,
        match=r"Function BadBackward returned an invalid gradient at index 0 - "
        r"got \[3\] but expected shape compatible with \[2, 2\]",
    ):
        Bad.apply(x).sum().backward()
    # a gradient of a shape the input broadcasts to is summed down, as PyTorch's engine does
    leaf = torchlight.zeros(1, requires_grad=True, backend=backend_name)
    Bad.apply(leaf).sum().backward()
    assert leaf.grad.tolist() == [3.0]


def test_map_lifts_any_scalar_function_with_its_derivative(backend_name):
    x = torchlight.tensor([0.5, -1.0], requires_grad=True, backend=backend_name)
    y = Map.apply(x, scalar.sigmoid, _sigmoid_back)
    np.testing.assert_allclose(y.to_numpy(), 1.0 / (1.0 + np.exp(-x.to_numpy())))
    v = torchlight.ones(2, backend=backend_name)
    (g,) = grad(y, x, grad_outputs=v)
    s = y.to_numpy()
    np.testing.assert_allclose(g.to_numpy(), s * (1 - s))
    # that Map's derivative has no derivative of its own (once_differentiable) is task 5.3's


def _sigmoid_back(x, d):
    s = scalar.sigmoid(x)
    return d * s * (1.0 - s)


def test_to_carries_the_gradient_back():
    # (moved from test_backend_ops.py: it needs backward)
    other = TensorBackend(simple, "other")
    a = torchlight.tensor([1.0, 2.0], requires_grad=True, backend="simple")
    b = a.to(other)
    (b * b).sum().backward()
    assert a.grad.tolist() == [2.0, 4.0] and a.grad.backend is a.backend


def test_the_engine_sorts_and_backpropagates_tensors(backend_name):
    x = torchlight.tensor([1.0, 2.0], requires_grad=True, backend=backend_name)
    a = x * 2.0
    b = a.exp()
    c = (a + b).sum()
    order = topological_sort(c)
    assert order[0] is x and order[-1] is c and len(order) == 5  # x, a, b, a + b, c
    backpropagate(c, torchlight.tensor(1.0, backend=backend_name))
    np.testing.assert_allclose(x.grad.to_numpy(), 2.0 + 2.0 * np.exp(2.0 * np.array([1.0, 2.0])))


# -- the Functions themselves ------------------------------------------------------------------

CONTRACT_FUNCTIONS = (
    "Add Mul Sub Div Pow MatMul Sum Map Log Exp Sigmoid ReLU ReluBack LogBack Inv InvBack Sqrt Abs "
    "Tanh Permute BroadcastView Gather Max"
).split()


def test_the_built_in_ops_are_functions():
    from torchlight.autograd import functions as F

    for name in CONTRACT_FUNCTIONS:
        fn = getattr(F, name)
        assert issubclass(fn, Function) and fn.name == f"{name}Backward"


# Functions that the Tensor methods reach only indirectly (backward of backward), applied directly.
DIRECT = [
    ("Inv", lambda F, a, b: F.Inv.apply(a), AWAY_FROM_ZERO),
    ("InvBack", lambda F, a, b: F.InvBack.apply(a, b), AWAY_FROM_ZERO),
    ("LogBack", lambda F, a, b: F.LogBack.apply(a, b), POSITIVE),
    ("ReluBack", lambda F, a, b: F.ReluBack.apply(a, b), AWAY_FROM_ZERO),
    ("BroadcastView", lambda F, a, b: F.BroadcastView.apply(a, (2,) + a.shape) * b, None),
    ("Sum", lambda F, a, b: F.Sum.apply(a * b, tuple(range(a.dims)), True), None),
]


@pytest.mark.parametrize("name, fn, elements", DIRECT, ids=ids(DIRECT))
@settings(max_examples=10)
@given(data=st.data())
def test_functions_applied_directly(backend_name, name, fn, elements, data):
    from torchlight.autograd import functions as F

    backend = backends.get(backend_name)
    shape = data.draw(shapes(max_side=2))
    a, _ = data.draw(tensors(backend, shape=shape, elements=elements, requires_grad=True))
    b, _ = data.draw(tensors(backend, shape=shape, requires_grad=True))
    assert gradcheck(lambda x, y: fn(F, x, y), (a, b))
    # their second derivatives: test_functions_applied_directly_gradgradcheck in module 5 (task 5.3)
