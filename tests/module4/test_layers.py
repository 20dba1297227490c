"""Task 4.4: the layers a network is written with: Sequential, Flatten, activations, Dropout and the
loss modules, named, printed and computing as PyTorch's do.
"""

from collections import OrderedDict

import numpy as np
import pytest

import torchlight
import torchlight.nn.functional as F
from torchlight import nn

pytestmark = pytest.mark.task4_4

BACKENDS = ["simple", "fast"]

rng = np.random.default_rng(45)
X = rng.normal(size=(3, 2, 2))


def mlp(backend=None):
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(4, 5, backend=backend),
        nn.ReLU(),
        nn.Dropout(0.5),
        nn.Linear(5, 3, backend=backend),
        nn.LogSoftmax(dim=1),
    )


def test_functional_is_importable_both_ways():
    import torchlight.nn.functional as F2

    assert torchlight.nn.functional is F2 is F
    assert nn.functional.cross_entropy is F.cross_entropy


def test_sequential_applies_its_modules_in_order(backend_name):
    model = mlp(backend_name).eval()
    x = torchlight.tensor(X, backend=backend_name)
    w1, b1 = model[1].weight.value.to_numpy(), model[1].bias.value.to_numpy()
    w2, b2 = model[4].weight.value.to_numpy(), model[4].bias.value.to_numpy()
    h = np.maximum(X.reshape(3, 4) @ w1.T + b1, 0) @ w2.T + b2
    expected = h - np.log(np.exp(h).sum(1, keepdims=True))
    np.testing.assert_allclose(model(x).to_numpy(), expected, rtol=1e-12, atol=1e-12)


def test_sequential_names_indexing_and_iteration():
    model = mlp()
    assert len(model) == 6
    assert [name for name, _ in model.named_children()] == ["0", "1", "2", "3", "4", "5"]
    assert [name for name, _ in model.named_parameters()] == ["1.weight", "1.bias", "4.weight", "4.bias"]
    assert isinstance(model[0], nn.Flatten) and isinstance(model[-1], nn.LogSoftmax)
    assert list(model) == [model[i] for i in range(6)]
    head = model[3:]
    assert isinstance(head, nn.Sequential) and len(head) == 3 and head[1] is model[4]
    assert [name for name, _ in head.named_parameters()] == ["4.weight", "4.bias"]  # names kept, as PyTorch
    with pytest.raises(IndexError, match="index 6 is out of range for a Sequential of 6 modules"):
        model[6]
    with pytest.raises(TypeError, match="Sequential indices must be integers or slices, not str"):
        model["1"]
    model.append(nn.Tanh())
    assert len(model) == 7 and isinstance(model[6], nn.Tanh)
    del model[0]
    assert [name for name, _ in model.named_children()] == [str(i) for i in range(6)]  # renumbered
    model[0] = nn.Sigmoid()
    assert isinstance(model[0], nn.Sigmoid)
    named = nn.Sequential(OrderedDict([("features", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    assert list(named.state_dict()) == ["features.weight", "features.bias"]


def test_sequential_rejects_what_is_not_a_module():
    with pytest.raises(TypeError, match="element 1 is function, not a Module"):
        nn.Sequential(nn.ReLU(), F.relu)
    with pytest.raises(TypeError, match="element 0 is list, not a Module"):
        nn.Sequential([nn.ReLU()])


def test_state_dict_keys_and_values_match_torch():
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Sequential(
        torch.nn.Flatten(),
        torch.nn.Linear(4, 5),
        torch.nn.ReLU(),
        torch.nn.Dropout(0.5),
        torch.nn.Linear(5, 3),
        torch.nn.LogSoftmax(dim=1),
    ).double()
    ours = mlp()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    ours.eval()
    theirs.eval()
    expected = theirs(torch.tensor(X)).detach().numpy()
    np.testing.assert_allclose(ours(torchlight.tensor(X)).to_numpy(), expected, rtol=1e-12, atol=1e-12)


def test_reprs_as_pytorch():
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
    assert repr(nn.Flatten(0, 2)) == "Flatten(start_dim=0, end_dim=2)"
    assert repr(nn.Softmax(dim=0)) == "Softmax(dim=0)"
    assert repr(nn.LogSoftmax(dim=-1)) == "LogSoftmax(dim=-1)"
    assert repr(nn.Dropout(0.25)) == "Dropout(p=0.25, inplace=False)"
    assert [repr(m()) for m in (nn.ReLU, nn.Sigmoid, nn.Tanh)] == ["ReLU()", "Sigmoid()", "Tanh()"]
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
    assert repr(nn.Sequential()) == "Sequential()"


def test_flatten(backend_name):
    x = torchlight.tensor(rng.normal(size=(2, 3, 2, 2)), backend=backend_name)
    assert nn.Flatten()(x).shape == (2, 12)
    assert nn.Flatten(0, 1)(x).shape == (6, 2, 2)
    assert nn.Flatten(1, 2)(x).shape == (2, 6, 2)
    assert nn.Flatten(-2)(x).shape == (2, 3, 4)
    np.testing.assert_array_equal(nn.Flatten()(x).to_numpy(), x.to_numpy().reshape(2, 12))
    # a permuted (non-contiguous) input is copied, in the order of its logical layout
    t = x.permute(0, 2, 3, 1)
    np.testing.assert_array_equal(nn.Flatten()(t).to_numpy(), x.to_numpy().transpose(0, 2, 3, 1).reshape(2, 12))
    with pytest.raises(RuntimeError, match="start_dim cannot come after end_dim"):
        nn.Flatten(2, 1)(x)
    with pytest.raises(IndexError, match="Dimension out of range"):
        nn.Flatten()(torchlight.tensor([1.0, 2.0], backend=backend_name))


def test_activation_layers(backend_name):
    x = torchlight.tensor(X[0], backend=backend_name)
    for layer, fn in [
        (nn.ReLU(), F.relu),
        (nn.Sigmoid(), F.sigmoid),
        (nn.Tanh(), F.tanh),
        (nn.Softmax(dim=0), lambda x: F.softmax(x, 0)),
        (nn.LogSoftmax(dim=1), lambda x: F.log_softmax(x, 1)),
    ]:
        np.testing.assert_array_equal(layer(x).to_numpy(), fn(x).to_numpy())
    assert list(nn.ReLU().parameters()) == []
    with pytest.raises(TypeError, match="dim must be an int"):
        nn.Softmax(None)


def test_dropout_layer_follows_train_and_eval(backend_name):
    x = torchlight.ones((10, 10), backend=backend_name)
    model = nn.Sequential(nn.Dropout(0.5))
    torchlight.manual_seed(0)
    out = model(x).to_numpy()
    assert ((out == 0) | (out == 2)).all() and 0 < (out == 0).sum() < 100
    model.eval()
    np.testing.assert_array_equal(model(x).to_numpy(), np.ones((10, 10)))
    model.train()
    assert (model(x).to_numpy() == 0).any()
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 2"):
        nn.Dropout(2)


def test_loss_layers_call_their_functions(backend_name):
    scores = torchlight.tensor(rng.normal(size=(3, 4)), backend=backend_name)
    probs = F.sigmoid(scores)
    y = torchlight.tensor(rng.uniform(size=(3, 4)), backend=backend_name)
    w = torchlight.tensor([1.0, 2.0, 0.5, 1.0], backend=backend_name)
    targets = [0, 3, -100]
    pairs = [
        (
            nn.CrossEntropyLoss(w, label_smoothing=0.1)(scores, targets),
            F.cross_entropy(scores, targets, w, label_smoothing=0.1),
        ),
        (nn.NLLLoss(reduction="sum")(scores, [0, 3, 2]), F.nll_loss(scores, [0, 3, 2], reduction="sum")),
        (nn.NLLLoss(ignore_index=3)(scores, [0, 3, 2]), F.nll_loss(scores, [0, 3, 2], ignore_index=3)),
        (nn.MSELoss(reduction="none")(scores, y), F.mse_loss(scores, y, reduction="none")),
        (nn.BCELoss(w)(probs, y), F.binary_cross_entropy(probs, y, w)),
        (nn.BCEWithLogitsLoss(pos_weight=w)(scores, y), F.binary_cross_entropy_with_logits(scores, y, pos_weight=w)),
    ]
    for got, expected in pairs:
        np.testing.assert_array_equal(got.to_numpy(), expected.to_numpy())
    with pytest.raises(ValueError, match="CrossEntropyLoss\\(\\): 'avg' is not a valid value for reduction"):
        nn.CrossEntropyLoss(reduction="avg")


def test_loss_layers_match_torch():
    torch = pytest.importorskip("torch")
    a = rng.normal(size=(3, 4))
    x, t = torchlight.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    ours = nn.CrossEntropyLoss(label_smoothing=0.05)(x, [2, 0, 1])
    theirs = torch.nn.CrossEntropyLoss(label_smoothing=0.05)(t, torch.tensor([2, 0, 1]))
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-12)
    ours.backward()
    theirs.backward()
    np.testing.assert_allclose(x.grad.to_numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_a_small_network_learns_with_these_layers(backend_name):
    # three well separated clusters in 4-D: a few plain gradient steps fit them
    torchlight.manual_seed(0)
    centers = np.eye(3, 4) * 3
    labels = np.repeat(np.arange(3), 4)
    data = centers[labels] + rng.normal(0, 0.3, (12, 4))
    model = nn.Sequential(nn.Linear(4, 6, backend=backend_name), nn.Tanh(), nn.Linear(6, 3, backend=backend_name))
    x = torchlight.tensor(data, backend=backend_name)
    criterion = nn.CrossEntropyLoss()
    losses = []
    for _ in range(30):
        model.zero_grad()
        loss = criterion(model(x), labels)
        loss.backward()
        losses.append(loss.item())
        for p in model.parameters():
            p.update(p.value.detach() - 0.5 * p.value.grad)
    assert losses[-1] < 0.3 * losses[0]
    predicted = model(x).to_numpy().argmax(1)
    assert (predicted == labels).all()
