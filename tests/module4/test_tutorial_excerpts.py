"""Task 4.5: small programs in the style of PyTorch's beginner tutorials ("Learn the Basics", the
60-minute blitz, "Learning PyTorch with Examples", "What is torch.nn really?"), written here, run
on torchlight by the one change ``import torchlight as torch`` (issue 22). Each uses what those
pages use (picking the device with ``torch.accelerator``, ``out=``, ``Tensor.mul``/``matmul``,
``np.asarray``, ``history.next_functions``, ``backward(gradient)``, indexing by a range and a
tensor, ``AdaptiveAvgPool2d``, ``RMSprop``, ``set_default_device``) and checks that it does what
the tutorial says it does. Where PyTorch is installed, the same program runs on it as well."""

import math

import numpy as np
import pytest

import torchlight
from torchlight import backends

pytestmark = pytest.mark.task4_5


def node(t):
    """The graph node that made t: PyTorch's ``grad_fn``; in torchlight ``history``, because the
    course contract makes ``grad_fn`` the Function class (docs/pytorch.md)."""
    return t.history if isinstance(t, torchlight.Tensor) else t.grad_fn


@pytest.fixture(params=["torchlight", "torch"])
def torch(request, monkeypatch):
    """The library the excerpt runs on, imported as ``torch``: torchlight on the CPU (the tests'
    CUDA simulator would make the accelerator 'available', and slow), or PyTorch in float64."""
    if request.param == "torch":
        lib = pytest.importorskip("torch")
        old = lib.get_default_dtype()
        lib.set_default_dtype(lib.float64)
        yield lib
        lib.set_default_dtype(old)
        lib.set_default_device(None)
        return
    monkeypatch.setattr(torchlight.cuda, "is_available", lambda: False)
    name = backends.default().name
    yield torchlight
    backends.set_default_backend(name)


def test_tensors(torch):
    # Tensors: create, describe, move, index, join, compute, bridge to numpy.
    data = [[1.0, 2.0], [3.0, 4.0]]
    x_data = torch.tensor(data)
    x_ones = torch.ones_like(x_data)
    x_rand = torch.rand_like(x_data, dtype=torch.float)
    assert x_ones.shape == x_rand.shape == (2, 2)

    tensor = torch.rand(3, 4)
    if torch.accelerator.is_available():
        tensor = tensor.to(torch.accelerator.current_accelerator())
    assert tensor.device.type == "cpu"

    tensor = torch.ones(4, 4)
    tensor[:, 1] = 0
    assert tensor[..., -1].tolist() == [1.0] * 4
    t1 = torch.cat([tensor, tensor, tensor], dim=1)
    assert t1.shape == (4, 12)

    y1 = tensor @ tensor.T
    y2 = tensor.matmul(tensor.T)
    y3 = torch.rand_like(y1)
    torch.matmul(tensor, tensor.T, out=y3)
    assert y1.tolist() == y2.tolist() == y3.tolist()

    z1 = tensor * tensor
    z2 = tensor.mul(tensor)
    z3 = torch.rand_like(tensor)
    torch.mul(tensor, tensor, out=z3)
    assert z1.tolist() == z2.tolist() == z3.tolist()

    agg = tensor.sum()
    assert agg.item() == 12.0
    tensor.add_(5)
    assert tensor[0].tolist() == [6.0, 5.0, 6.0, 6.0]

    t = torch.ones(5)
    n = t.numpy()
    t.add_(1)
    assert n.tolist() == [2.0] * 5
    n = np.ones(5)
    t = torch.from_numpy(n)
    np.add(n, 1, out=n)
    assert t.tolist() == [2.0] * 5
    assert np.asarray(t).tolist() == [2.0] * 5


def test_autograd(torch):
    # Automatic differentiation: a one-layer network, its graph, its gradients.
    F = torch.nn.functional
    x = torch.ones(5)
    y = torch.zeros(3)
    w = torch.randn(5, 3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    z = torch.matmul(x, w) + b
    loss = F.binary_cross_entropy_with_logits(z, y)
    assert "BinaryCrossEntropyWithLogits" in str(loss.grad_fn) or loss.grad_fn is not None
    assert node(z).next_functions[1][0].variable is b  # z = (x @ w) + b: b's AccumulateGrad
    loss.backward()
    assert w.grad.shape == (5, 3) and b.grad.shape == (3,)

    with torch.no_grad():
        z = torch.matmul(x, w) + b
    assert not z.requires_grad
    assert not (torch.matmul(x, w) + b).detach().requires_grad

    # A vector-Jacobian product: backward of a non-scalar output takes the vector
    inp = torch.eye(4, 5, requires_grad=True)
    out = (inp + 1).pow(2).t()
    out.backward(torch.ones_like(out), retain_graph=True)
    first = inp.grad.clone()
    out.backward(torch.ones_like(out), retain_graph=True)
    assert (inp.grad / first).tolist() == [[2.0] * 5] * 4
    inp.grad.zero_()
    out.backward(gradient=torch.ones_like(out), retain_graph=True)
    assert inp.grad.tolist() == first.tolist()


def test_quickstart_shaped_training(torch):
    # Build, train and evaluate a classifier, picking the device as the current tutorials do.
    nn = torch.nn
    DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset
    device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
    assert device == "cpu"

    torch.manual_seed(0)
    labels = torch.tensor([0, 1] * 32).long()
    images = torch.rand(64, 1, 6, 6) + labels.view(-1, 1, 1, 1)  # class 1 is brighter
    loader = DataLoader(TensorDataset(images, labels), batch_size=16, shuffle=True)

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d((2, 2)))
            self.flatten = nn.Flatten()
            self.classifier = nn.Linear(16, 2)

        def forward(self, x):
            return self.classifier(self.flatten(self.features(x)))

    model = NeuralNetwork().to(device)
    assert "AdaptiveAvgPool2d(output_size=(2, 2))" in str(model)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-2)

    def train():
        model.train()
        for X, y in loader:
            X, y = X.to(device), y.to(device)
            loss = loss_fn(model(X), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

    @torch.no_grad
    def test():
        model.eval()
        correct = 0
        for X, y in loader:
            correct += (model(X).argmax(1) == y).type(torch.float).sum().item()
        return correct / len(loader.dataset)

    before = test()
    for _ in range(15):
        train()
    assert test() >= max(before, 0.9)


def test_polynomial_fit_with_nn_and_rmsprop(torch):
    # Fit y = sin(x) with a third-order polynomial: nn.Linear over x, x^2, x^3, trained by RMSprop.
    dtype = torch.float
    torch.set_default_device("cpu")
    x = torch.linspace(-math.pi, math.pi, 200, dtype=dtype)
    y = torch.sin(x)
    p = torch.tensor([1.0, 2.0, 3.0])
    xx = x.unsqueeze(-1).pow(p)
    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
    loss_fn = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    first = None
    for _ in range(300):
        loss = loss_fn(model(xx), y)
        first = loss.item() if first is None else first
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert loss.item() < first / 2
    linear_layer = model[0]
    assert isinstance(linear_layer.bias.item(), float) and isinstance(linear_layer.weight[:, 0].item(), float)


def test_blitz_network_graph_and_backward(torch):
    # The blitz: a small network, its loss's graph walked backwards, a backward with a gradient.
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3)
            self.fc1 = nn.Linear(2 * 2 * 2, 5)
            self.fc2 = nn.Linear(5, 3)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv(x)), 2)
            x = torch.flatten(x, 1)
            return self.fc2(F.relu(self.fc1(x)))

    torch.manual_seed(1)
    net = Net()
    input = torch.randn(1, 1, 6, 6)
    out = net(input)
    net.zero_grad()
    out.backward(torch.randn(1, 3))
    assert all(p.grad is not None for p in net.parameters())

    target = torch.randn(3).view(1, -1)
    loss = nn.MSELoss()(net(input), target)
    node_, steps = node(loss), 0
    while node_ is not None and node_.next_functions:  # MSELoss -> Linear -> ReLU -> ... -> a leaf
        node_ = next((n for n, _ in node_.next_functions if n is not None), None)
        steps += 1
    assert steps >= 2 and node_ is not None and "AccumulateGrad" in type(node_).__name__ + node_.name()

    net.zero_grad()
    loss.backward()
    learning_rate = 0.01
    for f in net.parameters():
        f.data.sub_(f.grad.data * learning_rate)


def test_torch_nn_really_from_scratch(torch):
    # Logistic regression written by hand: log_softmax, nll by indexing with a range and a tensor.
    torch.manual_seed(2)
    x_train = torch.randn(50, 8)
    y_train = (x_train[:, 0] > 0).long()
    weights = torch.randn(8, 2) / math.sqrt(8)
    weights.requires_grad_()
    bias = torch.zeros(2, requires_grad=True)

    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def model(xb):
        return log_softmax(xb @ weights + bias)

    def nll(input, target):
        return -input[range(target.shape[0]), target].mean()

    def accuracy(out, yb):
        preds = torch.argmax(out, dim=1)
        return (preds == yb).float().mean()

    loss_func = nll
    lr, bs = 0.5, 10
    start = loss_func(model(x_train), y_train).item()
    for _epoch in range(5):
        for i in range((50 - 1) // bs + 1):
            xb, yb = x_train[i * bs : i * bs + bs], y_train[i * bs : i * bs + bs]
            loss = loss_func(model(xb), yb)
            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()
    assert loss_func(model(x_train), y_train).item() < start
    assert accuracy(model(x_train), y_train).item() > 0.8
    F = torch.nn.functional
    assert abs(F.cross_entropy(x_train @ weights + bias, y_train).item() - nll(model(x_train), y_train).item()) < 1e-9
