"""Module 4: torchlight.optim's SGD and what every optimizer shares (parameter groups, zero_grad,
state_dict), step for step against PyTorch and against the formulas written out in numpy.

Adam's update is stage 4.5's: tests/module4/test_adam.py.
"""

import numpy as np
import pytest

import torchlight
from torchlight import Scalar
from torchlight.nn import Parameter
from torchlight.optim import SGD, Adam, AdamW

BACKENDS = ["simple", "fast"]

rng = np.random.default_rng(4)
W0 = rng.normal(size=(2, 3))
B0 = rng.normal(size=(3,))
X = rng.normal(size=(4, 2))
STEPS = 4


def loss_np(w, b):
    """The loss sum(tanh(X @ w + b) ** 2) and its gradients, in numpy (so no torch is needed)."""
    h = np.tanh(X @ w + b)
    dz = 2 * h * (1 - h * h)
    return (h * h).sum(), X.T @ dz, dz.sum(0)


def loss_tl(w, b):
    x = torchlight.tensor(X, backend=w.backend)
    h = (x @ w + b).tanh()
    return (h * h).sum()


def make_params(backend):
    return [Parameter(torchlight.tensor(W0, backend=backend)), Parameter(torchlight.tensor(B0, backend=backend))]


def run_torchlight(backend, make_opt, steps=STEPS):
    params = make_params(backend)
    opt = make_opt(params)
    for _ in range(steps):
        opt.zero_grad()
        loss_tl(params[0].value, params[1].value).backward()
        opt.step()
    return [p.value.to_numpy() for p in params], opt


def sgd_numpy(lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, steps=STEPS):
    """torch.optim.SGD's documented algorithm, written out."""
    params, bufs = [W0.copy(), B0.copy()], [None, None]
    for _ in range(steps):
        grads = loss_np(*params)[1:]
        for i, (p, g) in enumerate(zip(params, grads, strict=True)):
            g = g + weight_decay * p
            if momentum:
                bufs[i] = g.copy() if bufs[i] is None else momentum * bufs[i] + (1 - dampening) * g
                g = g + momentum * bufs[i] if nesterov else bufs[i]
            params[i] = p - lr * g
    return params


SGD_SETTINGS = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.8, dampening=0.3),
    dict(lr=0.05, momentum=0.9, nesterov=True),
    dict(lr=0.1, weight_decay=0.2),
    dict(lr=0.05, momentum=0.7, weight_decay=0.1, nesterov=True),
]


@pytest.mark.parametrize("settings", SGD_SETTINGS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
def test_sgd_follows_its_formula(settings, backend_name):
    got, _ = run_torchlight(backend_name, lambda ps: SGD(ps, **settings))
    for a, b in zip(got, sgd_numpy(**settings), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("settings", SGD_SETTINGS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
def test_sgd_matches_torch_step_for_step(settings):
    torch = pytest.importorskip("torch")
    params = make_params("simple")
    opt = SGD(params, **settings)
    tw, tb = (torch.tensor(a, requires_grad=True) for a in (W0, B0))
    topt = torch.optim.SGD([tw, tb], **settings)
    for _ in range(STEPS):
        opt.zero_grad()
        loss_tl(params[0].value, params[1].value).backward()
        opt.step()
        topt.zero_grad()
        (torch.tanh(torch.tensor(X) @ tw + tb) ** 2).sum().backward()
        topt.step()
        np.testing.assert_allclose(params[0].value.to_numpy(), tw.detach().numpy(), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(params[1].value.to_numpy(), tb.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_sgd_trains_scalars_with_momentum_and_weight_decay():
    # Module 1's parameters are Scalars (their .grad a float); the same step applies.
    p = Parameter(Scalar(1.0))
    opt = SGD([p], lr=0.1, momentum=0.5, weight_decay=0.5, nesterov=True)
    v, x = None, 1.0
    for _ in range(3):
        opt.zero_grad()
        (p.value * p.value).backward()
        g = 2 * x + 0.5 * x
        v = g if v is None else 0.5 * v + g
        x -= 0.1 * (g + 0.5 * v)
        opt.step()
        assert p.value.data == pytest.approx(x, rel=1e-14)


def test_step_updates_in_place_and_bumps_the_version():
    params = make_params("simple")
    w = params[0].value
    opt = SGD(params, lr=0.1)
    loss_tl(w, params[1].value).backward()
    version = w._version
    opt.step()
    assert params[0].value is w and w.is_leaf and w.requires_grad
    assert w._version > version
    assert w.grad is not None  # step leaves .grad alone


def test_momentum_buffer_is_not_the_gradient():
    # zero_grad(set_to_none=False) zeros .grad in place: a buffer sharing it would be zeroed too.
    p = Parameter(torchlight.tensor([1.0, 2.0], backend="simple"))
    opt = SGD([p], lr=0.1, momentum=0.9)
    (p.value * 3.0).sum().backward()
    opt.step()
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(p.value.grad.to_numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(opt.state[p]["momentum_buffer"].to_numpy(), [3.0, 3.0])
    opt.step()  # gradient 0: the velocity alone moves it, by 0.1 * 0.9 * 3
    np.testing.assert_allclose(p.value.to_numpy(), [1.0 - 0.3 - 0.27, 2.0 - 0.3 - 0.27], rtol=1e-14)


def test_zero_grad_sets_to_none_or_zeros():
    params = make_params("simple")
    opt = SGD(params, lr=0.1)
    loss_tl(params[0].value, params[1].value).backward()
    opt.zero_grad()
    assert all(p.value.grad is None for p in params)
    loss_tl(params[0].value, params[1].value).backward()
    grad = params[0].value.grad
    opt.zero_grad(set_to_none=False)
    assert params[0].value.grad is grad and not grad.to_numpy().any()
    s = Parameter(Scalar(2.0))
    opt = SGD([s], lr=0.1)
    (s.value * 3.0).backward()
    opt.zero_grad(set_to_none=False)
    assert s.value.grad == 0.0


def test_parameter_groups_have_their_own_settings():
    params = make_params("simple")
    opt = SGD([{"params": [params[0]]}, {"params": [params[1]], "lr": 0.5, "momentum": 0.9}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[0]["momentum"] == 0.0 and opt.param_groups[1]["momentum"] == 0.9
    loss, gw, gb = loss_np(W0, B0)
    loss_tl(params[0].value, params[1].value).backward()
    opt.step()
    np.testing.assert_allclose(params[0].value.to_numpy(), W0 - 0.1 * gw, rtol=1e-13)
    np.testing.assert_allclose(params[1].value.to_numpy(), B0 - 0.5 * gb, rtol=1e-13)
    # a group added later takes the defaults
    extra = Parameter(torchlight.tensor([1.0], backend="simple"))
    opt.add_param_group({"params": extra})
    assert opt.param_groups[2]["lr"] == 0.1 and opt.param_groups[2]["params"] == [extra]


def test_plain_tensors_and_scalars_are_accepted():
    w = torchlight.tensor([1.0, -1.0], backend="simple", requires_grad=True)
    opt = SGD([w], lr=0.5)
    (w * w).sum().backward()
    opt.step()
    np.testing.assert_allclose(w.to_numpy(), [0.0, 0.0])


@pytest.mark.parametrize(
    "make, error, message",
    [
        (lambda ps: SGD(ps, lr=-1.0), ValueError, "Invalid learning rate: -1.0"),
        (lambda ps: SGD(ps, lr=0.0), ValueError, "Invalid learning rate"),
        (lambda ps: SGD(ps, lr="0.1"), TypeError, "lr must be a number, got str"),
        (lambda ps: SGD(ps, lr=0.1, momentum=-0.5), ValueError, "Invalid momentum value: -0.5"),
        (lambda ps: SGD(ps, lr=0.1, weight_decay=-1), ValueError, "Invalid weight_decay value: -1"),
        (lambda ps: SGD(ps, lr=0.1, nesterov=True), ValueError, "Nesterov momentum requires a momentum"),
        (lambda ps: SGD(ps, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), ValueError, "zero dampening"),
        (lambda ps: SGD(ps, lr=0.1, nesterov=1), TypeError, "nesterov must be True or False"),
        (lambda ps: SGD([], lr=0.1), ValueError, "empty parameter list"),
        (lambda ps: SGD(ps[0], lr=0.1), TypeError, "iterable of Parameters or dicts, but got Parameter"),
        (lambda ps: SGD([1.0], lr=0.1), TypeError, r"params\[0\] is float"),
        (lambda ps: SGD([ps[0], ps[0]], lr=0.1), ValueError, "same parameter twice"),
        (lambda ps: SGD([{"params": ps}, {"params": ps[:1]}], lr=0.1), ValueError, "more than one parameter group"),
        (lambda ps: SGD([{"lr": 0.1}], lr=0.1), ValueError, '"params" entry'),
        (lambda ps: SGD([{"params": ps, "lr": -2.0}], lr=0.1), ValueError, "Invalid learning rate: -2.0"),
        (lambda ps: SGD([{"params": set(ps)}], lr=0.1), TypeError, "ordered collections"),
        (lambda ps: SGD([ps[0].value * 2.0], lr=0.1), ValueError, "non-leaf Tensor"),
    ],
)
def test_bad_arguments_are_named(make, error, message):
    with pytest.raises(error, match=message):
        make(make_params("simple"))


def test_a_module_instead_of_its_parameters_is_named():
    from torchlight.nn import Linear

    with pytest.raises(TypeError, match=r"model.parameters\(\)"):
        SGD(Linear(2, 3, backend="simple"), lr=0.1)


# -- state_dict ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, keys",
    [
        (lambda ps: SGD(ps, lr=0.05, momentum=0.9), {"momentum_buffer"}),
        (lambda ps: Adam(ps, lr=0.05), {"step", "exp_avg", "exp_avg_sq"}),
        (lambda ps: AdamW(ps, lr=0.05, weight_decay=0.1), {"step", "exp_avg", "exp_avg_sq"}),
    ],
)
def test_state_dict_resumes_training_exactly(make, keys, backend_name):
    straight, _ = run_torchlight(backend_name, make, steps=4)
    first, opt = run_torchlight(backend_name, make, steps=2)
    sd = opt.state_dict()
    assert sorted(sd) == ["param_groups", "state"] and sorted(sd["state"]) == [0, 1]
    assert set(sd["state"][0]) == keys and sd["param_groups"][0]["params"] == [0, 1]
    params = make_params(backend_name)
    for p, values in zip(params, first, strict=True):
        p.value = torchlight.tensor(values, backend=backend_name, requires_grad=True)
    resumed = make(params)
    resumed.param_groups[0]["lr"] = 123.0  # restored from the state dict below
    resumed.load_state_dict(sd)
    assert resumed.param_groups[0]["lr"] == 0.05
    for _ in range(2):
        resumed.zero_grad()
        loss_tl(params[0].value, params[1].value).backward()
        resumed.step()
    for p, expected in zip(params, straight, strict=True):
        np.testing.assert_array_equal(p.value.to_numpy(), expected)


def test_state_dict_is_a_copy():
    _, opt = run_torchlight("simple", lambda ps: SGD(ps, lr=0.05, momentum=0.9), steps=1)
    sd = opt.state_dict()
    before = sd["state"][0]["momentum_buffer"].to_numpy()
    opt.step()
    np.testing.assert_array_equal(sd["state"][0]["momentum_buffer"].to_numpy(), before)
    sd["param_groups"][0]["lr"] = 9.0
    assert opt.param_groups[0]["lr"] == 0.05


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda sd: sd.pop("state"), "'state' and 'param_groups'"),
        (lambda sd: sd["param_groups"].append({"params": []}), "different number of parameter groups"),
        (lambda sd: sd["param_groups"][0]["params"].pop(), "doesn't match the size"),
        (lambda sd: sd["state"].update({7: {}}), "parameter 7, which no group lists"),
        (lambda sd: sd["state"][0].update(momentum_buffer=torchlight.zeros(5)), r"shape \(5,\), but its parameter"),
        (lambda sd: sd["state"][0].update(momentum_buffer="x"), "must be a Tensor or a number"),
        (lambda sd: sd["param_groups"][0].update(lr=-1.0), "Invalid learning rate"),
    ],
)
def test_load_state_dict_checks_everything_before_loading(change, message):
    _, opt = run_torchlight("simple", lambda ps: SGD(ps, lr=0.05, momentum=0.9), steps=1)
    sd = opt.state_dict()
    change(sd)
    before = {k: v["momentum_buffer"].to_numpy() for k, v in opt.state_dict()["state"].items()}
    with pytest.raises(ValueError, match=message):
        opt.load_state_dict(sd)
    after = opt.state_dict()
    assert after["param_groups"][0]["lr"] == 0.05
    for k, v in after["state"].items():
        np.testing.assert_array_equal(v["momentum_buffer"].to_numpy(), before[k])


def test_optimizer_state_survives_save_and_load(tmp_path):
    from torchlight.serialization import load, save

    _, opt = run_torchlight("simple", lambda ps: Adam(ps, lr=0.05, betas=(0.8, 0.9)), steps=2)
    save(opt.state_dict(), tmp_path / "opt.npz")
    sd = load(tmp_path / "opt.npz", backend="simple")
    assert sd["param_groups"][0]["betas"] == (0.8, 0.9) and sd["state"][1]["step"] == 2
    fresh = Adam(make_params("simple"))
    fresh.load_state_dict(sd)
    for k, v in opt.state_dict()["state"].items():
        got = fresh.state_dict()["state"][k]
        assert got["step"] == v["step"]
        np.testing.assert_array_equal(got["exp_avg_sq"].to_numpy(), v["exp_avg_sq"].to_numpy())
