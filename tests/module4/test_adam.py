"""Task 4.5: Adam's update (``adam_update`` in torchlight/optim/adam.py), and the Adam and AdamW
optimizers built on it, step for step against the published algorithm (written out here in numpy)
and against torch.optim where PyTorch is installed.

On the simple backend the optimizers run ``adam_update``; on the compiled ones, a numpy version of
the same update (module 3's kind of speed-up), which must agree with it.
"""

import numpy as np
import pytest

import torchlight
from torchlight import Scalar
from torchlight.nn import Parameter
from torchlight.optim import Adam, AdamW
from torchlight.optim.adam import adam_update

pytestmark = pytest.mark.task4_5

BACKENDS = ["simple", "fast"]

rng = np.random.default_rng(45)
W0 = rng.normal(size=(2, 3))
B0 = rng.normal(size=(3,))
X = rng.normal(size=(4, 2))
STEPS = 4

# Settings far from the defaults, so that a misplaced eps or a missing bias correction shows.
SETTINGS = [
    dict(lr=0.1, betas=(0.5, 0.7), eps=0.1),
    dict(lr=0.05, betas=(0.9, 0.999), eps=1e-8),
    dict(lr=0.05, betas=(0.6, 0.8), eps=1e-3, weight_decay=0.3),
]


def ids(settings):
    return ",".join(f"{k}={v}" for k, v in settings.items())


def reference(m, v, g, t, beta1, beta2, eps):
    """Kingma and Ba's Algorithm 1, one step (PyTorch's Adam without weight decay)."""
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    m_hat, v_hat = m / (1 - beta1**t), v / (1 - beta2**t)
    return m, v, m_hat / (np.sqrt(v_hat) + eps)


@pytest.mark.parametrize("settings", SETTINGS[:2], ids=ids)
def test_adam_update_follows_the_algorithm(settings):
    beta1, beta2 = settings["betas"]
    grads = rng.normal(size=(STEPS, 2, 3)) * np.array([[1e-3], [10.0]])  # small and large gradients
    m, v = np.zeros((2, 3)), np.zeros((2, 3))
    tm, tv = (torchlight.tensor(a, backend="simple") for a in (m, v))
    for t, g in enumerate(grads, start=1):
        tm, tv, direction = adam_update(
            tm, tv, torchlight.tensor(g, backend="simple"), t, beta1, beta2, settings["eps"]
        )
        m, v, expected = reference(m, v, g, t, beta1, beta2, settings["eps"])
        np.testing.assert_allclose(tm.to_numpy(), m, rtol=1e-13)
        np.testing.assert_allclose(tv.to_numpy(), v, rtol=1e-13)
        np.testing.assert_allclose(direction.to_numpy(), expected, rtol=1e-12)


def test_adam_update_on_numbers():
    # A Scalar parameter's gradient and averages are floats: the same arithmetic serves.
    m = v = 0.0
    em = ev = 0.0
    for t, g in enumerate([0.5, -2.0, 3.0], start=1):
        m, v, direction = adam_update(m, v, g, t, 0.8, 0.9, 0.01)
        em, ev, expected = reference(em, ev, g, t, 0.8, 0.9, 0.01)
        assert (m, v) == pytest.approx((em, ev), rel=1e-14)
        assert direction == pytest.approx(expected, rel=1e-13)


def test_first_step_moves_by_about_lr_whatever_the_gradient_scale():
    # Bias correction: at step 1, m_hat = g and v_hat = g * g, so the direction is g / (|g| + eps).
    g = torchlight.tensor([1e-4, -3.0, 250.0], backend="simple")
    zeros = torchlight.zeros(3, backend="simple")
    _, _, direction = adam_update(zeros, zeros, g, 1, 0.9, 0.999, 1e-8)
    np.testing.assert_allclose(
        direction.to_numpy(), [1e-4 / (1e-4 + 1e-8), -3 / (3 + 1e-8), 1 / (1 + 4e-11)], rtol=1e-12
    )


def loss_np(w, b):
    h = np.tanh(X @ w + b)
    dz = 2 * h * (1 - h * h)
    return X.T @ dz, dz.sum(0)


def loss_tl(w, b):
    h = (torchlight.tensor(X, backend=w.backend) @ w + b).tanh()
    return (h * h).sum()


def run(opt_class, settings, backend, steps=STEPS):
    params = [Parameter(torchlight.tensor(a, backend=backend)) for a in (W0, B0)]
    opt = opt_class(params, **settings)
    for _ in range(steps):
        opt.zero_grad()
        loss_tl(params[0].value, params[1].value).backward()
        opt.step()
    return [p.value.to_numpy() for p in params]


def expected(decoupled, lr, betas, eps, weight_decay=0.0, steps=STEPS):
    params, state = [W0.copy(), B0.copy()], [(0.0, 0.0), (0.0, 0.0)]
    for t in range(1, steps + 1):
        grads = loss_np(*params)
        for i, g in enumerate(grads):
            p = params[i]
            if decoupled:
                p = p * (1 - lr * weight_decay)
            else:
                g = g + weight_decay * p
            m, v, direction = reference(*state[i], g, t, *betas, eps)
            state[i] = (m, v)
            params[i] = p - lr * direction
    return params


@pytest.mark.parametrize("settings", SETTINGS, ids=ids)
@pytest.mark.parametrize("opt_class", [Adam, AdamW])
def test_adam_and_adamw_follow_the_algorithm(opt_class, settings, backend_name):
    got = run(opt_class, settings, backend_name)
    defaults = {"weight_decay": 1e-2 if opt_class is AdamW else 0.0}  # PyTorch's: tested below
    want = expected(opt_class is AdamW, **{**defaults, **settings})
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("settings", SETTINGS, ids=ids)
@pytest.mark.parametrize("opt_class", ["Adam", "AdamW"])
def test_matches_torch_step_for_step(opt_class, settings, backend_name):
    torch = pytest.importorskip("torch")
    params = [Parameter(torchlight.tensor(a, backend=backend_name)) for a in (W0, B0)]
    opt = getattr(torchlight.optim, opt_class)(params, **settings)
    tparams = [torch.tensor(a, requires_grad=True) for a in (W0, B0)]
    topt = getattr(torch.optim, opt_class)(tparams, **settings)
    for _ in range(STEPS):
        opt.zero_grad()
        loss_tl(params[0].value, params[1].value).backward()
        opt.step()
        topt.zero_grad()
        (torch.tanh(torch.tensor(X) @ tparams[0] + tparams[1]) ** 2).sum().backward()
        topt.step()
        for p, tp in zip(params, tparams, strict=True):
            np.testing.assert_allclose(p.value.to_numpy(), tp.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_fast_path_computes_what_adam_update_does(monkeypatch):
    # On "fast" the numpy path runs; switched off, the same backend runs adam_update.
    for settings in SETTINGS:
        fast = run(AdamW, settings, "fast")
        monkeypatch.setattr(Adam, "fast", False)
        taught = run(AdamW, settings, "fast")
        monkeypatch.setattr(Adam, "fast", True)
        for a, b in zip(fast, taught, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def test_adam_trains_scalars():
    p = Parameter(Scalar(2.0))
    opt = Adam([p], lr=0.1, betas=(0.5, 0.7), eps=0.1)
    x, m, v = 2.0, 0.0, 0.0
    for t in range(1, 4):
        opt.zero_grad()
        (p.value * p.value).backward()
        m, v, direction = reference(m, v, 2 * x, t, 0.5, 0.7, 0.1)
        x -= 0.1 * direction
        opt.step()
        assert p.value.data == pytest.approx(x, rel=1e-13)


def test_step_changes_values_in_place(backend_name):
    params = [Parameter(torchlight.tensor(a, backend=backend_name)) for a in (W0, B0)]
    w = params[0].value
    version = w._version
    opt = Adam(params, lr=0.1)
    loss_tl(w, params[1].value).backward()
    opt.step()
    assert params[0].value is w and w.is_leaf and w.requires_grad and w.grad is not None
    assert w._version > version
    assert not np.array_equal(w.to_numpy(), W0)


def test_parameters_without_gradient_are_left_alone():
    used = Parameter(torchlight.tensor([1.0], backend="simple"))
    unused = Parameter(torchlight.tensor([5.0], backend="simple"))
    opt = Adam([used, unused], lr=0.1)
    (used.value * 2.0).sum().backward()
    opt.step()
    assert unused.value.item() == 5.0 and unused not in opt.state
    assert used.value.item() == pytest.approx(0.9, rel=1e-7)  # first step: lr * g / (|g| + eps)


@pytest.mark.parametrize(
    "settings, error, message",
    [
        (dict(lr=-1.0), ValueError, "Invalid learning rate: -1.0"),
        (dict(eps=-1e-8), ValueError, "Invalid epsilon value: -1e-08"),
        (dict(betas=(1.0, 0.999)), ValueError, "Invalid beta parameter at index 0: 1.0"),
        (dict(betas=(0.9, -0.1)), ValueError, "Invalid beta parameter at index 1: -0.1"),
        (dict(betas=0.9), TypeError, "betas must be a pair"),
        (dict(weight_decay=-0.1), ValueError, "Invalid weight_decay value: -0.1"),
        (dict(lr=None), TypeError, "lr must be a number, got NoneType"),
    ],
)
def test_bad_settings_are_named(settings, error, message):
    for opt_class in (Adam, AdamW):
        with pytest.raises(error, match=message):
            opt_class([Parameter(torchlight.tensor([1.0], backend="simple"))], **settings)


def test_defaults_are_pytorchs():
    p = [Parameter(torchlight.tensor([1.0], backend="simple"))]
    assert Adam(p).defaults == dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    assert AdamW(p).defaults == dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2)
