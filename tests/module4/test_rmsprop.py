"""Task 4.5: ``optim.RMSprop`` (issue 22), step for step against the algorithm as PyTorch documents
it (written out here in numpy) and against ``torch.optim.RMSprop`` where PyTorch is installed,
with momentum, centered and weight decay, on Tensors (both CPU backends) and Scalars."""

import numpy as np
import pytest

import torchlight
from torchlight import Scalar
from torchlight.nn import Parameter
from torchlight.optim import RMSprop

pytestmark = pytest.mark.task4_5

BACKENDS = ["simple", "fast"]

rng = np.random.default_rng(22)
W0 = rng.normal(size=(2, 3))
B0 = rng.normal(size=(3,))
X = rng.normal(size=(4, 2))
STEPS = 6

# The defaults, and settings far from them, so that a misplaced eps or a missing term shows.
SETTINGS = [
    dict(),
    dict(lr=0.05, alpha=0.9, eps=1e-3),
    dict(lr=0.03, momentum=0.9),
    dict(lr=0.02, centered=True),
    dict(lr=0.05, alpha=0.3, eps=1e-6, weight_decay=0.2, momentum=0.5, centered=True),  # (1 - alpha > 1/2)
]


def ids(settings):
    return ",".join(f"{k}={v}" for k, v in settings.items()) or "defaults"


def loss_tl(w, b):
    return ((torchlight.tensor(X, backend=w.backend) @ w + b).tanh() ** 2).sum()


def grads_np(w, b):
    """The gradient of sum(tanh(X @ w + b) ** 2), in numpy."""
    t = np.tanh(X @ w + b)
    d = 2 * t * (1 - t * t)
    return X.T @ d, d.sum(0)


def reference(settings):
    """RMSprop as PyTorch's documentation writes it, in numpy: the parameters after each step."""
    s = {**dict(lr=0.01, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False), **settings}
    params = [W0.copy(), B0.copy()]
    square = [np.zeros_like(p) for p in params]
    mean = [np.zeros_like(p) for p in params]
    buf = [np.zeros_like(p) for p in params]
    history = []
    for _ in range(STEPS):
        for i, g in enumerate(grads_np(*params)):
            g = g + s["weight_decay"] * params[i]
            square[i] = s["alpha"] * square[i] + (1 - s["alpha"]) * g * g
            v = square[i]
            if s["centered"]:
                mean[i] = s["alpha"] * mean[i] + (1 - s["alpha"]) * g
                v = v - mean[i] ** 2
            step = g / (np.sqrt(v) + s["eps"])
            if s["momentum"] > 0:
                buf[i] = s["momentum"] * buf[i] + step
                step = buf[i]
            params[i] = params[i] - s["lr"] * step
        history.append([p.copy() for p in params])
    return history


@pytest.mark.parametrize("settings", SETTINGS, ids=ids)
def test_follows_the_algorithm(settings, backend_name):
    params = [Parameter(torchlight.tensor(a, backend=backend_name)) for a in (W0, B0)]
    opt = RMSprop(params, **settings)
    for want in reference(settings):
        opt.zero_grad()
        loss_tl(params[0].value, params[1].value).backward()
        opt.step()
        for p, w in zip(params, want, strict=True):
            np.testing.assert_allclose(p.value.to_numpy(), w, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("settings", SETTINGS, ids=ids)
def test_matches_torch_step_for_step(settings, backend_name):
    torch = pytest.importorskip("torch")
    params = [Parameter(torchlight.tensor(a, backend=backend_name)) for a in (W0, B0)]
    opt = RMSprop(params, **settings)
    tparams = [torch.tensor(a, requires_grad=True) for a in (W0, B0)]
    topt = torch.optim.RMSprop(tparams, **settings)
    for _ in range(STEPS):
        opt.zero_grad()
        loss_tl(params[0].value, params[1].value).backward()
        opt.step()
        topt.zero_grad()
        (torch.tanh(torch.tensor(X) @ tparams[0] + tparams[1]) ** 2).sum().backward()
        topt.step()
        for p, tp in zip(params, tparams, strict=True):
            np.testing.assert_allclose(p.value.to_numpy(), tp.detach().numpy(), rtol=1e-13, atol=1e-15)
    # The same state, by PyTorch's names
    state, tstate = opt.state_dict()["state"], topt.state_dict()["state"]
    for i in (0, 1):
        assert set(state[i]) == set(tstate[i])
        assert state[i]["step"] == int(tstate[i]["step"])
        for key in set(state[i]) - {"step"}:
            np.testing.assert_allclose(state[i][key].to_numpy(), tstate[i][key].numpy(), rtol=1e-13, atol=1e-15)
    assert opt.state_dict()["param_groups"][0].keys() >= {"lr", "alpha", "eps", "weight_decay", "momentum", "centered"}


def test_trains_scalars():
    p = Parameter(Scalar(2.0))
    opt = RMSprop([p], lr=0.1, momentum=0.5, centered=True)
    x, square, mean, buf = 2.0, 0.0, 0.0, 0.0
    for _ in range(3):
        opt.zero_grad()
        (p.value * p.value).backward()
        g = 2 * x
        square = 0.99 * square + 0.01 * g * g
        mean = 0.99 * mean + 0.01 * g
        buf = 0.5 * buf + g / (np.sqrt(square - mean * mean) + 1e-8)
        x -= 0.1 * buf
        opt.step()
        assert p.value.data == pytest.approx(x, rel=1e-12)


def test_state_dict_round_trip_resumes_the_same_steps():
    def make():
        return [Parameter(torchlight.tensor(a)) for a in (W0, B0)]

    def train(params, opt, steps):
        for _ in range(steps):
            opt.zero_grad()
            loss_tl(params[0].value, params[1].value).backward()
            opt.step()

    settings = dict(lr=0.02, momentum=0.9, centered=True)
    straight = make()
    train(straight, RMSprop(straight, **settings), 4)
    first = make()
    opt = RMSprop(first, **settings)
    train(first, opt, 2)
    resumed = [Parameter(p.value.detach().clone()) for p in first]
    opt2 = RMSprop(resumed, **settings)
    opt2.load_state_dict(opt.state_dict())
    train(resumed, opt2, 2)
    for a, b in zip(resumed, straight, strict=True):
        np.testing.assert_allclose(a.value.to_numpy(), b.value.to_numpy(), rtol=1e-13)


def test_bad_settings_are_refused():
    params = [Parameter(torchlight.tensor(W0))]
    for bad, match in [
        (dict(lr=-1.0), "learning rate"),
        (dict(eps=-1.0), "epsilon"),
        (dict(momentum=-0.1), "momentum"),
        (dict(weight_decay=-1.0), "weight_decay"),
        (dict(alpha=-0.5), "alpha"),
    ]:
        with pytest.raises(ValueError, match=match):
            RMSprop(params, **bad)
    with pytest.raises(TypeError, match="centered"):
        RMSprop(params, centered=1)
