"""Task 2.5: Linear, the tensor layer the training script is built from: shapes, PyTorch's
initialisation, gradients against central differences and values and gradients against PyTorch."""

import math

import numpy as np
import pytest

import torchlight
from torchlight.autograd import gradcheck
from torchlight.nn import Linear, Module, Parameter

pytestmark = pytest.mark.task2_5


def as_function(layer):
    """``layer(x)`` as a function of x and of the layer's parameter values, for gradcheck."""

    def f(x, w, b=None):
        layer.weight = Parameter(w)
        if b is not None:
            layer.bias = Parameter(b)
        return layer(x)

    return f


def test_parameters_have_pytorch_shapes_and_names(backend_name):
    layer = Linear(3, 4, backend=backend_name, seed=0)
    assert [(name, p.value.shape) for name, p in layer.named_parameters()] == [("weight", (4, 3)), ("bias", (4,))]
    assert all(p.value.requires_grad and p.value.is_leaf for p in layer.parameters())
    assert all(p.value.backend.name == backend_name for p in layer.parameters())
    assert repr(layer) == "Linear(in_features=3, out_features=4, bias=True)"
    no_bias = Linear(3, 4, bias=False, seed=0)
    assert [name for name, _ in no_bias.named_parameters()] == ["weight"] and no_bias.bias is None
    assert repr(no_bias) == "Linear(in_features=3, out_features=4, bias=False)"


@pytest.mark.parametrize("in_features, out_features", [(1, 3), (16, 200)])
def test_init_is_uniform_within_one_over_sqrt_in(in_features, out_features):
    layer = Linear(in_features, out_features, seed=3)
    bound = 1.0 / math.sqrt(in_features)
    for p in layer.parameters():
        values = p.value.to_numpy()
        assert np.all(np.abs(values) < bound)
    w = layer.weight.value.to_numpy().reshape(-1)
    if w.size > 1000:  # enough draws to see the whole range, evenly used
        assert w.min() < -0.95 * bound and w.max() > 0.95 * bound
        assert abs(np.mean(w)) < 0.05 * bound
        assert np.mean(np.abs(w) < bound / 2) == pytest.approx(0.5, abs=0.05)


def test_init_is_seeded():
    values = lambda layer: [p.value.to_numpy() for p in layer.parameters()]  # noqa: E731
    a, b, c = Linear(2, 3, seed=1), Linear(2, 3, seed=1), Linear(2, 3, seed=2)
    assert all(np.array_equal(x, y) for x, y in zip(values(a), values(b), strict=True))
    assert not np.array_equal(values(a)[0], values(c)[0])
    rng = np.random.default_rng(0)  # one generator shared by two layers: each draws its own values
    first, second = Linear(2, 3, generator=rng), Linear(2, 3, generator=rng)
    assert not np.array_equal(values(first)[0], values(second)[0])


@pytest.mark.parametrize("batch", [(), (5,), (2, 3)], ids=["vector", "matrix", "batched"])
def test_forward_is_x_times_weight_transposed_plus_bias(backend_name, batch):
    layer = Linear(3, 2, backend=backend_name, seed=0)
    x = np.random.default_rng(1).standard_normal(batch + (3,))
    out = layer(torchlight.tensor(x, backend=backend_name))
    w, b = (p.value.to_numpy() for p in layer.parameters())
    assert out.shape == batch + (2,)
    np.testing.assert_allclose(out.to_numpy(), x @ w.T + b, rtol=1e-12, atol=1e-12)
    no_bias = Linear(3, 2, bias=False, backend=backend_name, seed=0)
    np.testing.assert_allclose(no_bias(torchlight.tensor(x, backend=backend_name)).to_numpy(), x @ w.T, atol=1e-12)


def test_gradients_match_central_differences(backend_name):
    layer = Linear(3, 2, backend=backend_name, seed=0)
    x = torchlight.rand(4, 3, seed=1, backend=backend_name, requires_grad=True)
    w = layer.weight.value.detach().requires_grad_()
    b = layer.bias.value.detach().requires_grad_()
    assert gradcheck(as_function(layer), (x, w, b))
    no_bias = Linear(3, 2, bias=False, backend=backend_name, seed=0)
    assert gradcheck(as_function(no_bias), (x, w))


def test_backward_fills_parameter_grads(backend_name):
    layer = Linear(2, 3, backend=backend_name, seed=0)
    x = torchlight.tensor([[1.0, 2.0], [3.0, -1.0]], backend=backend_name)
    layer(x).sum().backward()
    # d/dW of sum(x W^T + b) is the column sums of x, for every output row; d/db is the batch size.
    np.testing.assert_allclose(layer.weight.value.grad.to_numpy(), [[4.0, 1.0]] * 3)
    np.testing.assert_allclose(layer.bias.value.grad.to_numpy(), [2.0, 2.0, 2.0])


def test_matches_torch_linear(backend_name):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    layer = Linear(4, 3, backend=backend_name, seed=5)
    x_np, g_np = rng.standard_normal((6, 4)), rng.standard_normal((6, 3))
    x = torchlight.tensor(x_np, backend=backend_name, requires_grad=True)
    out = layer(x)
    out.backward(torchlight.tensor(g_np, backend=backend_name))

    tx = torch.tensor(x_np, requires_grad=True)
    tw = torch.tensor(layer.weight.value.to_numpy(), requires_grad=True)
    tb = torch.tensor(layer.bias.value.to_numpy(), requires_grad=True)
    expected = torch.nn.functional.linear(tx, tw, tb)
    expected.backward(torch.tensor(g_np))
    np.testing.assert_allclose(out.to_numpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-12)
    for ours, theirs in [(x, tx), (layer.weight.value, tw), (layer.bias.value, tb)]:
        np.testing.assert_allclose(ours.grad.to_numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_state_dict_round_trip():
    a, b = Linear(2, 3, seed=0), Linear(2, 3, seed=1)
    x = torchlight.rand(4, 2, seed=2)
    assert not np.allclose(a(x).to_numpy(), b(x).to_numpy())
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(a(x).to_numpy(), b(x).to_numpy())
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        Linear(3, 3).load_state_dict(a.state_dict())


def test_layers_compose_in_a_module():
    class Two(Module):
        def __init__(self):
            super().__init__()
            self.hidden = Linear(2, 4, seed=0)
            self.out = Linear(4, 1, seed=1)

        def forward(self, x):
            return self.out(self.hidden(x).relu())

    net = Two()
    assert [name for name, _ in net.named_parameters()] == ["hidden.weight", "hidden.bias", "out.weight", "out.bias"]
    assert net(torchlight.rand(5, 2, seed=0)).shape == (5, 1)


@pytest.mark.parametrize(
    "args, kwargs, error, message",
    [
        ((0, 3), {}, ValueError, "in_features must be a positive int"),
        ((2, -1), {}, ValueError, "out_features must be a positive int"),
        ((2.5, 3), {}, ValueError, "in_features"),
        ((2, 3), {"seed": 0, "generator": np.random.default_rng(0)}, ValueError, "seed or generator"),
        ((2, 3), {"backend": "nope"}, ValueError, "unknown backend 'nope'"),
    ],
    ids=str,
)
def test_bad_settings_are_errors(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        Linear(*args, **kwargs)


def test_bad_inputs_are_errors():
    layer = Linear(3, 2, seed=0)
    with pytest.raises(RuntimeError, match=r"got an input of shape \(4, 2\): its last dimension must be 3"):
        layer(torchlight.rand(4, 2, seed=0))
    with pytest.raises(RuntimeError, match="last dimension must be 3"):
        layer(torchlight.tensor(1.0))
    with pytest.raises(TypeError, match="Linear expects a Tensor input, got list"):
        layer([[1.0, 2.0, 3.0]])
