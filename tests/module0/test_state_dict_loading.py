"""load_state_dict converts what it can and refuses the rest, naming the key, before it loads anything.

A state dict may come from elsewhere: numpy arrays (``np.load``), nested lists (JSON), tensors
saved from a model on another backend. Each value becomes what the parameter holds (a Scalar, or
a Tensor on the parameter's backend); a value that cannot is an error naming the key and what was
expected, and then no parameter has changed.

The Scalar cases are module 0's (task 0.3). The Tensor cases need tensors (module 2, where Linear
and its state dict are graded: task 2.5) and the fast backend (module 3, task 3.1), so each
carries its stage's marker: a student working in order meets each when its code exists.
"""

import numpy as np
import pytest

from torchlight.nn import Module, Parameter
from torchlight.scalar_variable import Scalar


class ScalarNet(Module):
    def __init__(self):
        super().__init__()
        self.a = Parameter(Scalar(1.0))
        self.b = Parameter(Scalar(2.0))


def scalar_values(net):
    return {name: p.value.data for name, p in net.named_parameters()}


# -- Scalars (module 0) -------------------------------------------------------------------------


@pytest.mark.task0_3
def test_scalar_parameters_take_numbers_and_0d_arrays():
    net = ScalarNet()
    net.load_state_dict({"a": np.float64(3.5), "b": np.array(-4.0)})
    assert scalar_values(net) == {"a": 3.5, "b": -4.0}
    for p in net.parameters():
        assert type(p.value) is Scalar and type(p.value.data) is float and p.value.is_leaf()


@pytest.mark.task0_3
@pytest.mark.parametrize("bad", ["1.5", [1.0], np.array([1.0]), np.array("x"), True, None], ids=repr)
def test_scalar_parameters_refuse_the_rest_and_load_nothing(bad):
    net = ScalarNet()
    with pytest.raises(RuntimeError) as err:
        net.load_state_dict({"a": 5.0, "b": bad})  # a is fine, so it is b that stops the load
    assert "type mismatch for b: expected a Scalar or a number" in str(err.value)
    assert scalar_values(net) == {"a": 1.0, "b": 2.0}


# -- Tensors on the parameter's backend (module 2) ----------------------------------------------


def linear(backend, seed=0):
    from torchlight.nn import Linear

    return Linear(3, 2, backend=backend, seed=seed)


def tensor_values(net):
    return {name: p.value.to_numpy() for name, p in net.named_parameters()}


def check_loaded(net, expected, backend):
    """Each parameter holds a fresh leaf Tensor on ``backend`` with the expected values, and the
    network runs."""
    import torchlight

    for name, p in net.named_parameters():
        value = p.value
        assert isinstance(value, torchlight.Tensor), f"{name} holds a {type(value).__name__}"
        assert value.backend is torchlight.backends.get(backend), f"{name} is on {value.backend.name}"
        assert value.requires_grad and value.is_leaf and value.grad is None
        np.testing.assert_array_equal(value.to_numpy(), np.asarray(expected[name], dtype=float))
    x = torchlight.tensor([[1.0, 2.0, 3.0]], backend=backend)
    out = net(x)
    out.sum().backward()
    assert net.weight.value.grad is not None and net.weight.value.grad.shape == (2, 3)


@pytest.mark.task2_5
def test_numpy_arrays_become_tensors_on_the_parameters_backend():
    src, dst = linear("simple", seed=0), linear("simple", seed=1)
    sd = {name: p.value.to_numpy() for name, p in src.named_parameters()}
    sd["bias"] = sd["bias"].astype(np.float32)  # any real dtype is read as float64
    dst.load_state_dict(sd)
    check_loaded(dst, sd, "simple")
    sd["weight"][0, 0] = 100.0  # the loaded value shares nothing with the array
    assert dst.weight.value.to_numpy()[0, 0] != 100.0


@pytest.mark.task2_5
def test_nested_lists_become_tensors():
    dst = linear("simple")
    sd = {"weight": [[1, 2, 3], [4, 5, 6]], "bias": (0.5, -0.5)}
    dst.load_state_dict(sd)
    check_loaded(dst, sd, "simple")


@pytest.mark.task2_5
@pytest.mark.parametrize(
    "bad, expected",
    [
        ("weights.npy", "expected a Tensor, a numpy array or nested lists of numbers with shape (2, 3), got str"),
        (None, "expected a Tensor, a numpy array or nested lists of numbers with shape (2, 3), got NoneType"),
        (Scalar(1.0), "got Scalar"),
        ([[1.0, 2.0, 3.0], [4.0, 5.0]], "cannot read list as an array"),
        (np.array([["a", "b", "c"]] * 2), "expected numbers, got ndarray of dtype <U1"),
        (np.ones((2, 3), dtype=bool), "expected numbers, got ndarray of dtype bool"),
        (np.ones((3, 2)), "size mismatch for weight: copying a param with shape (3, 2) from checkpoint"),
        ([1.0, 2.0], "size mismatch for weight: copying a param with shape (2,) from checkpoint"),
    ],
    ids=["str", "None", "Scalar", "ragged", "strings", "bools", "shape", "list-shape"],
)
def test_what_cannot_become_a_tensor_is_refused_by_key_and_nothing_loads(bad, expected):
    net = linear("simple")
    before = tensor_values(net)
    with pytest.raises(RuntimeError) as err:
        net.load_state_dict({"bias": np.zeros(2), "weight": bad})  # bias is fine: weight stops the load
    message = str(err.value)
    assert "Error(s) in loading state_dict for Linear" in message
    assert expected in message and "weight" in message
    assert "bias" not in message
    after = tensor_values(net)
    for name in before:
        np.testing.assert_array_equal(after[name], before[name])


@pytest.mark.task2_5
def test_key_errors_and_conversion_errors_are_reported_together():
    net = linear("simple")
    with pytest.raises(RuntimeError) as err:
        net.load_state_dict({"weight": "oops", "extra": np.zeros(1)})
    message = str(err.value)
    assert 'Missing key(s) in state_dict: "bias"' in message
    assert 'Unexpected key(s) in state_dict: "extra"' in message
    assert "type mismatch for weight" in message


# -- Tensors on another backend (module 3) ------------------------------------------------------


@pytest.mark.task3_1
@pytest.mark.parametrize("model_on, saved_on", [("fast", "simple"), ("simple", "fast")])
def test_tensors_from_another_backend_are_moved(model_on, saved_on):
    pytest.importorskip("numba")
    src = linear(saved_on, seed=0)
    dst = linear(model_on, seed=1)
    sd = src.state_dict()
    assert all(v.backend.name == saved_on for v in sd.values())
    dst.load_state_dict(sd)
    check_loaded(dst, {k: v.to_numpy() for k, v in sd.items()}, model_on)
    assert all(v.backend.name == saved_on for v in sd.values())  # the state dict itself is unchanged
