"""Task 1.4: backward() through every Scalar operation, against central differences and PyTorch
(moved from test_chain_rule.py: these need backpropagation), and gradients reaching the
parameters of a tree of modules (moved from tests/module0/test_module.py)."""

import importlib.util
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from torchlight import Scalar
from torchlight.autograd import Function, central_difference

from .strategies import BINARY, UNARY, gradients_by_chain_rule, moderate_floats, small_floats

pytestmark = pytest.mark.task1_4


def ids(table):
    return [row[0] for row in table]


def check_gradients(fn, *values):
    """Backward through fn(*Scalars) gives, for every argument, the central difference."""
    leaves = [Scalar(v) for v in values]
    out = fn(*leaves)
    out.backward()
    for i, leaf in enumerate(leaves):
        expected = central_difference(lambda *vs: fn(*[Scalar(v) for v in vs]), *values, arg=i)
        assert leaf.grad is not None, f"argument {i} got no gradient"
        assert leaf.grad == pytest.approx(expected, rel=1e-5, abs=1e-5), f"argument {i}"


# -- every operation against central differences, every argument --------------------------


@pytest.mark.parametrize("name, fn, inputs", UNARY, ids=ids(UNARY))
@given(data=st.data())
def test_unary_gradients(name, fn, inputs, data):
    check_gradients(fn, data.draw(inputs))


@pytest.mark.parametrize("name, fn, inputs", BINARY, ids=ids(BINARY))
@given(data=st.data())
def test_binary_gradients(name, fn, inputs, data):
    check_gradients(fn, *data.draw(inputs))


@pytest.mark.parametrize("name, fn, inputs", BINARY, ids=ids(BINARY))
@given(data=st.data())
def test_binary_gradients_with_a_number_on_either_side(name, fn, inputs, data):
    x, y = data.draw(inputs)
    check_gradients(lambda a: fn(a, y), x)
    check_gradients(lambda b: fn(x, b), y)


@given(st.floats(0.5, 2.0), st.floats(-2.0, 2.0), st.floats(-2.0, 2.0))
def test_composite_expression(x, y, z):
    assume(abs(z - y) > 1e-3 and abs(x - y) > 1e-3)  # away from the kinks of relu and <

    def f(a, b, c):
        return ((a * b + c).sigmoid() * a.log() - (b / a) ** 2 + (c - b).relu() * 3.0).tanh() + (a < b) * c

    check_gradients(f, x, y, z)


@given(st.floats(0.5, 2.0), st.floats(-2.0, 2.0), st.floats(-2.0, 2.0), st.floats(-3.0, 3.0))
def test_backward_equals_the_chain_rule_followed_path_by_path(x, y, z, d):
    # backpropagate visits each node once, in topological order; the path-by-path walk of task
    # 1.3 visits it once per path: both must give the same numbers (up to rounding).
    def f(a, b, c):
        u = a * b + c
        return (u * u.sigmoid() - (b / a) * u + c.exp()) * a

    leaves = [Scalar(v) for v in (x, y, z)]
    out = f(*leaves)
    expected = gradients_by_chain_rule(out, d)
    out.backward(d)
    for leaf in leaves:
        assert leaf.grad == pytest.approx(expected[leaf.unique_id], rel=1e-12, abs=1e-12)


def test_relu_derivative_at_zero_is_zero():
    x = Scalar(0.0)
    x.relu().backward()
    assert x.grad == 0.0


@pytest.mark.parametrize("name, fn, inputs", UNARY + BINARY, ids=ids(UNARY + BINARY))
@given(data=st.data())
def test_gradients_match_torch(name, fn, inputs, data):
    torch = pytest.importorskip("torch")
    values = data.draw(inputs)
    values = values if isinstance(values, tuple) else (values,)
    ours = [Scalar(v) for v in values]
    fn(*ours).backward()
    theirs = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    out = fn(*theirs)
    if not out.requires_grad:
        # torch's comparisons are not differentiable; their derivative is zero where defined.
        assert [s.grad for s in ours] == [0.0] * len(ours)
        return
    out.backward()
    for s, t in zip(ours, theirs, strict=True):
        assert s.grad == pytest.approx(t.grad.item(), rel=1e-9, abs=1e-12)


# -- custom Functions through backward ------------------------------------------------------------


class Cube(Function):
    """x ** 3, legacy style: forward receives ctx."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a * a

    @staticmethod
    def backward(ctx, d):
        (a,) = ctx.saved_tensors
        return 3.0 * a * a * d


@given(small_floats)
def test_custom_function_legacy_style(x):
    check_gradients(lambda a: Cube.apply(a) + a, x)


def test_none_gradient_means_no_contribution():
    class FirstOnly(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, d):
            return d, None

    x, y = Scalar(1.0), Scalar(2.0)
    FirstOnly.apply(x, y).backward()
    assert x.grad == 1.0 and y.grad is None


# -- leaves made with requires_grad_ (moved from test_scalar_forward.py) -------------------------


def test_a_constant_made_a_leaf_receives_its_gradient():
    c = Scalar(2.0, history=None)
    assert c.requires_grad_() is c
    (c * 3.0).backward()
    assert c.grad == 3.0


# -- gradients reach the parameters of a tree of modules (moved from tests/module0) -------------

_NETS = Path(__file__).resolve().parents[1] / "module0" / "nets.py"
_spec = importlib.util.spec_from_file_location("torchlight_tests_module0_nets", _NETS)
nets = sys.modules.setdefault(_spec.name, importlib.util.module_from_spec(_spec))
if not hasattr(nets, "Net"):
    _spec.loader.exec_module(nets)


def test_call_runs_forward_and_gradients_reach_parameters():
    net = nets.Net(seed=0.0)
    x = Scalar(2.0)
    # layer1: inner.p * (w x + b) = 3 * (1*2 + 2) = 12; layer2: 7 * (3*12 + 4) = 280; + a.
    out = net(x)
    assert out.data == pytest.approx(280.0)
    out.backward()
    assert net.a.value.grad == pytest.approx(1.0)
    assert net.layer2.bias.value.grad == pytest.approx(7.0)
    assert net.layer1.weight.value.grad == pytest.approx(7.0 * 3.0 * 3.0 * 2.0)
    net.zero_grad()
    assert all(p.value.grad is None for p in net.parameters())


@given(moderate_floats)
def test_module_gradients_match_central_differences(v):
    net = nets.Net(seed=0.5)
    net(Scalar(v)).backward()
    for name, p in net.named_parameters():

        def at(value, p=p):
            saved = p.value
            p.update(Scalar(value))
            try:
                return net(Scalar(v))
            finally:
                p.update(saved)

        expected = central_difference(at, p.value.data)
        assert p.value.grad == pytest.approx(expected, rel=1e-6, abs=1e-6), name


def test_loaded_state_dict_values_receive_gradients():
    src, dst = nets.Net(seed=1.0), nets.Net(seed=10.0)
    dst.load_state_dict(src.state_dict())
    dst(Scalar(1.0)).backward()
    assert dst.a.value.grad == pytest.approx(1.0)
