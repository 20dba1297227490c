"""Task 0.3: Module and Parameter, the tree that networks are built from."""

import copy

import numpy as np
import pytest

from torchlight import Scalar
from torchlight.nn import Module, Parameter

# Net (a tree of Layers and Inners) and its parameter NAMES are shared with module 1's tests,
# which take gradients through the same tree.
from .nets import NAMES, Inner, Net, values

pytestmark = [pytest.mark.task0_3]


# -- the tree -------------------------------------------------------------------------


def test_named_parameters_have_dotted_names_in_order():
    net = Net()
    assert [name for name, _ in net.named_parameters()] == NAMES
    assert all(isinstance(p, Parameter) for p in net.parameters())
    assert len(list(net.parameters())) == 7
    assert values(net)["layer1.inner.p"] == 2.0 + 3.0


def test_named_parameters_without_recursion_and_with_prefix():
    net = Net()
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["a"]
    assert [n for n, _ in net.layer1.named_parameters(prefix="x")] == ["x.weight", "x.bias", "x.inner.p"]


def test_children_and_modules():
    net = Net()
    assert list(net.children()) == [net.layer1, net.layer2]
    assert [n for n, _ in net.named_children()] == ["layer1", "layer2"]
    # modules(), as in PyTorch, is the module itself and all its descendants.
    mods = list(net.modules())
    assert mods[0] is net
    assert len(mods) == 5
    assert [n for n, _ in net.named_modules()] == ["", "layer1", "layer1.inner", "layer2", "layer2.inner"]


def test_plain_attributes_are_not_registered():
    net = Net()
    assert net.layer1.size == 2
    assert "size" not in dict(net.layer1.named_children())
    assert all("size" not in n for n, _ in net.named_parameters())


def test_shared_parameter_and_module_appear_once():
    net = Net()
    net.layer2.weight = net.layer1.weight
    net.again = net.layer1
    names = [n for n, _ in net.named_parameters()]
    assert names.count("layer1.weight") == 1 and "layer2.weight" not in names
    assert len(names) == len(set(id(p) for p in net.parameters())) == 6
    assert len(list(net.children())) == 2


def test_add_module_and_register_parameter():
    m = Module()
    child = Inner(1.0)
    m.add_module("child", child)
    p = Parameter(Scalar(3.0))
    m.register_parameter("w", p)
    assert m.child is child and m.w is p
    assert [n for n, _ in m.named_parameters()] == ["w", "child.p"]
    assert m.add_parameter("v", 4.0).value == 4.0
    assert m.v.name == "v"


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda m: m.add_module("a.b", Module()), KeyError, "contain"),
        (lambda m: m.add_module("", Module()), KeyError, "empty"),
        (lambda m: m.add_module(3, Module()), TypeError, "string"),
        (lambda m: m.add_module("x", 5), TypeError, "not a Module"),
        (lambda m: m.add_module("forward", Module()), KeyError, "already exists"),
        (lambda m: m.register_parameter("w.x", Parameter(1.0)), KeyError, "contain"),
        (lambda m: m.register_parameter("w", 1.0), TypeError, "Parameter or None"),
        (lambda m: m.register_parameter("training", Parameter(1.0)), KeyError, "already exists"),
    ],
)
def test_registration_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(Module())


def test_reassignment_moves_between_kinds():
    net = Net()
    net.layer1 = Parameter(Scalar(7.0))  # a child becomes a parameter
    assert "layer1" not in dict(net.named_children())
    assert isinstance(net.layer1, Parameter)
    net.layer2 = None  # an empty slot: the child is gone
    assert list(net.children()) == []
    assert "layer2" in repr(net)
    with pytest.raises(TypeError, match="parameter 'a'"):
        net.a = 3.0  # would silently drop the parameter
    net.a = None
    assert [n for n, _ in net.named_parameters()] == ["layer1"]


def test_delattr_unregisters():
    net = Net()
    del net.a
    del net.layer2
    assert [n for n, _ in net.named_parameters()] == ["layer1.weight", "layer1.bias", "layer1.inner.p"]
    with pytest.raises(AttributeError):
        _ = net.a


def test_unknown_attribute_raises_attribute_error():
    net = Net()
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'nothing'"):
        _ = net.nothing
    assert not hasattr(net, "nothing")
    assert getattr(net.layer1, "nothing", "default") == "default"


def test_forgetting_super_init_is_a_clear_error():
    class Forgot(Module):
        def __init__(self):
            self.w = Parameter(Scalar(1.0))

    class ForgotChild(Module):
        def __init__(self):
            self.c = Module()

    with pytest.raises(AttributeError, match=r"super\(\).__init__\(\).*Forgot"):
        Forgot()
    with pytest.raises(AttributeError, match="before Module.__init__"):
        ForgotChild()


def test_dir_lists_parameters_and_children():
    names = dir(Net())
    assert "a" in names and "layer1" in names and "forward" in names


# -- modes and calling ----------------------------------------------------------------


def test_train_and_eval_propagate():
    net = Net()
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    assert net.train() is net
    assert all(m.training for m in net.modules())
    net.layer1.eval()
    assert [m.training for m in net.modules()] == [True, False, False, True, True]
    net.train(False)
    assert not any(m.training for m in net.modules())


def test_train_needs_a_bool():
    with pytest.raises(ValueError, match="boolean"):
        Net().train("yes")


def test_call_runs_forward():
    net = Net(seed=0.0)
    # layer1: inner.p * (w x + b) = 3 * (1*2 + 2) = 12; layer2: 7 * (3*12 + 4) = 280; + a.
    assert net(2.0) == pytest.approx(280.0)  # floats in, floats out: no Scalar arithmetic (task 1.2)
    # Gradients through the tree: tests/module1/test_module_gradients.py (they need backward, task 1.4)


def test_zero_grad_clears_every_parameter():
    net = Net()
    for i, p in enumerate(net.parameters()):
        p.value.grad = float(i + 1)  # as backward would leave them
    net.zero_grad()
    assert all(p.value.grad is None for p in net.parameters())
    assert values(net) == values(Net())  # the values themselves are untouched


def test_missing_forward_names_the_class():
    class NoForward(Module):
        pass

    with pytest.raises(NotImplementedError, match=r"NoForward.*forward"):
        NoForward()(1.0)


# -- Parameter ------------------------------------------------------------------------


def test_parameter_value_update_and_repr():
    p = Parameter(Scalar(1.5))
    assert p.value.data == 1.5
    new = Scalar(2.5)
    p.update(new)
    assert p.value is new
    assert "2.5" in repr(p) and repr(p).startswith("Parameter(")
    assert str(p) == str(new)


def test_parameter_rejects_parameters_and_modules():
    with pytest.raises(TypeError, match="another Parameter"):
        Parameter(Parameter(1.0))
    with pytest.raises(TypeError, match="module"):
        Parameter(Module())


class FakeTensor:
    """The part of the Tensor protocol that Parameter and state_dict use."""

    def __init__(self, data, requires_grad=False):
        self.data = np.array(data, dtype=float)
        self.requires_grad = requires_grad
        self.grad = None

    @property
    def shape(self):
        return self.data.shape

    def requires_grad_(self, flag=True):
        self.requires_grad = flag
        return self

    def detach(self):
        return FakeTensor(self.data)  # shares nothing here, but a real detach shares storage

    def clone(self):
        return FakeTensor(self.data.copy())


def test_parameter_turns_on_requires_grad():
    t = FakeTensor([1.0, 2.0])
    assert not t.requires_grad
    p = Parameter(t)
    assert p.value is t and t.requires_grad
    u = FakeTensor([3.0])
    p.update(u)
    assert u.requires_grad


# -- state_dict -----------------------------------------------------------------------


def test_state_dict_keys_and_values():
    net = Net()
    sd = net.state_dict()
    assert list(sd) == NAMES
    assert {k: v.data for k, v in sd.items()} == values(net)


def test_state_dict_is_a_copy():
    net = Net()
    sd = net.state_dict()
    net.a.update(Scalar(99.0))
    net.layer1.weight.value.data = -5.0  # even an in-place change
    assert sd["a"].data == 1.0
    assert sd["layer1.weight"].data == 2.0


def test_state_dict_round_trip():
    src, dst = Net(seed=1.0), Net(seed=10.0)
    assert values(src) != values(dst)
    sd = src.state_dict()
    result = dst.load_state_dict(sd)
    assert values(dst) == values(src)
    assert result.missing_keys == [] and result.unexpected_keys == []
    # The loaded values are fresh leaves: they get gradients and share nothing with sd.
    assert all(p.value.is_leaf() for p in dst.parameters())
    assert all(p.value is not sd[n] for n, p in dst.named_parameters())
    # (that they receive gradients: tests/module1/test_module_gradients.py, task 1.4)
    dst.a.value.data = 123.0
    assert sd["a"].data == 1.0


def test_load_accepts_plain_numbers_for_scalars():
    net = Net()
    net.load_state_dict({n: float(i) for i, n in enumerate(NAMES)})
    assert [p.value.data for p in net.parameters()] == [float(i) for i in range(7)]


def test_load_missing_and_unexpected_keys():
    net = Net()
    before = values(net)
    sd = Net(seed=5.0).state_dict()
    del sd["layer1.bias"]
    sd["layer3.weight"] = Scalar(1.0)
    with pytest.raises(RuntimeError) as err:
        net.load_state_dict(sd)
    message = str(err.value)
    assert "Error(s) in loading state_dict for Net" in message
    assert 'Missing key(s) in state_dict: "layer1.bias"' in message
    assert 'Unexpected key(s) in state_dict: "layer3.weight"' in message
    assert values(net) == before  # nothing was loaded


def test_load_non_strict_reports_and_loads_the_rest():
    net = Net()
    sd = Net(seed=5.0).state_dict()
    del sd["a"]
    sd["extra"] = Scalar(0.0)
    result = net.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["a"]
    assert result.unexpected_keys == ["extra"]
    assert net.a.value.data == 1.0
    assert net.layer1.weight.value.data == 6.0


def test_load_type_mismatch():
    net = Net()
    sd = net.state_dict()
    sd["a"] = "not a number"
    with pytest.raises(RuntimeError, match="type mismatch for a"):
        net.load_state_dict(sd)
    with pytest.raises(TypeError, match="dict-like"):
        net.load_state_dict([1, 2])


class ArrayNet(Module):
    def __init__(self, shape):
        super().__init__()
        self.w = Parameter(FakeTensor(np.arange(float(np.prod(shape))).reshape(shape)))
        self.arr = Parameter(np.zeros(shape))  # any value with a .shape works


def test_state_dict_copies_tensor_like_values():
    net = ArrayNet((2, 3))
    sd = net.state_dict()
    assert sd["w"] is not net.w.value
    net.w.value.data[0, 0] = 100.0
    net.arr.value[0, 0] = 100.0
    assert sd["w"].data[0, 0] == 0.0 and sd["arr"][0, 0] == 0.0
    other = ArrayNet((2, 3))
    other.load_state_dict(sd)
    assert np.array_equal(other.w.value.data, sd["w"].data)
    assert other.w.value is not sd["w"] and other.w.value.requires_grad


def test_load_shape_mismatch():
    sd = ArrayNet((2, 3)).state_dict()
    net = ArrayNet((3, 2))
    with pytest.raises(RuntimeError) as err:
        net.load_state_dict(sd, strict=False)  # a wrong shape is an error even when not strict
    message = str(err.value)
    assert "size mismatch for w" in message and "(2, 3)" in message and "(3, 2)" in message
    assert "size mismatch for arr" in message


# -- printing and copying --------------------------------------------------------------


def test_repr_lists_children_like_pytorch():
    text = repr(Net())
    assert text.startswith("Net(\n  (layer1): Layer(\n    size=2\n    (inner): Inner()\n  )\n")
    assert text.endswith("  (layer2): Layer(\n    size=2\n    (inner): Inner()\n  )\n)")
    assert repr(Module()) == "Module()"

    class Leaf(Module):
        def extra_repr(self):
            return "in_features=2"

    assert repr(Leaf()) == "Leaf(in_features=2)"


def test_deepcopy_is_independent():
    net = Net()
    twin = copy.deepcopy(net)
    assert values(twin) == values(net)
    twin.a.value.data = 50.0
    assert net.a.value.data == 1.0
    assert [n for n, _ in twin.named_parameters()] == NAMES
