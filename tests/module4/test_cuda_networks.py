"""Task 4.5: module 4's networks run on the cuda backend (in numba's simulator) as on fast: a small
convolutional network (Conv1d, Conv2d, max and average pooling, Linear, cross-entropy) trained for
a few steps with Adam gives fast's losses, gradients and parameters, to rounding (reductions and
matrix products add in another order on cuda). (SGD with momentum trains on cuda in
tests/module3/test_cuda_training.py; the simulator makes each step cost seconds here.)"""

import numpy as np
import pytest

import torchlight
from torchlight import nn
from torchlight.nn import functional as F
from torchlight.nn.conv import Conv1d, Conv2d
from torchlight.nn.pooling import AvgPool2d, MaxPool2d
from torchlight.optim import Adam

pytestmark = pytest.mark.task4_5


def _net2d(backend):
    return nn.Sequential(
        Conv2d(1, 2, 3, padding=1, backend=backend, seed=1),
        nn.ReLU(),
        MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(2 * 2 * 2, 3, backend=backend, seed=2),
    )


def _train(backend, make_optimizer, steps=2):
    rng = np.random.default_rng(0)
    images = torchlight.tensor(rng.standard_normal((3, 1, 4, 4)), backend=backend)
    labels = torchlight.tensor([0, 2, 1], dtype=torchlight.int64, backend=backend)
    model = _net2d(backend)
    optimizer = make_optimizer(model.parameters())
    losses, grads = [], []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        losses.append(loss.item())
        grads.append([p.grad.to_numpy() for p in model.parameters()])
        optimizer.step()
    return losses, grads, [p.value.to_numpy() for p in model.parameters()], model


def test_a_convolutional_network_trains_on_cuda_as_on_fast():
    def make_optimizer(parameters):
        return Adam(parameters, lr=0.05)

    fast_losses, fast_grads, fast_params, _ = _train("fast", make_optimizer)
    cuda_losses, cuda_grads, cuda_params, model = _train("cuda", make_optimizer)
    assert all(p.value.backend.name == "cuda" for p in model.parameters())
    np.testing.assert_allclose(cuda_losses, fast_losses, rtol=1e-12)
    for step_cuda, step_fast in zip(cuda_grads, fast_grads, strict=True):
        for g_cuda, g_fast in zip(step_cuda, step_fast, strict=True):
            np.testing.assert_allclose(g_cuda, g_fast, rtol=1e-10, atol=1e-13)
    for p_cuda, p_fast in zip(cuda_params, fast_params, strict=True):
        np.testing.assert_allclose(p_cuda, p_fast, rtol=1e-10, atol=1e-13)
    assert cuda_losses[-1] != cuda_losses[0]  # the steps changed the parameters


def test_conv1d_and_average_pooling_with_gradients_on_cuda_as_on_fast():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 2, 7))
    results = []
    for backend in ("fast", "cuda"):
        inputs = torchlight.tensor(x, backend=backend, requires_grad=True)
        conv = Conv1d(2, 2, 3, stride=2, padding=1, backend=backend, seed=3)
        y = conv(inputs).tanh()  # (2, 2, 4)
        pooled = AvgPool2d(2)(y.view(2, 2, 2, 2))
        pooled.sum().backward()
        results.append((y.to_numpy(), pooled.to_numpy(), inputs.grad.to_numpy(), conv.weight.value.grad.to_numpy()))
    for got, want in zip(results[1], results[0], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)
