"""Module 4 as a PyTorch user meets it (issue 14): what PyTorch's beginner tutorials write and
torchlight now accepts. Module.to/cpu/double/float/apply/requires_grad_, nn.ReLU(inplace=...),
cross_entropy's ignore_index when it names a real class, Adam(amsgrad=False), DataLoader's
num_workers/pin_memory, Subset and random_split, and torchlight.load's map_location/weights_only.
What still differs is listed in docs/pytorch.md."""

import numpy as np
import pytest

import torchlight
from torchlight import nn
from torchlight.nn import functional as F
from torchlight.utils.data import DataLoader, Subset, TensorDataset, random_split

pytestmark = pytest.mark.task4_5


def small_net(backend="simple"):
    torchlight.manual_seed(3)
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    for p in net.parameters():  # the layers are made on the default backend; put them on `backend`
        p.update(p.value.detach().to(backend))
    return net


# -- Module.to and friends -------------------------------------------------------------------------


def test_module_to_moves_every_parameter_in_place_and_an_earlier_optimizer_follows():
    net = small_net("simple")
    params = list(net.parameters())
    optimizer = torchlight.optim.SGD(net.parameters(), lr=0.1)
    x = torchlight.tensor(np.arange(6.0).reshape(2, 3) / 6, backend="fast")
    before = net(x.to("simple")).to_numpy()
    net(x.to("simple")).sum().backward()
    grads = [p.grad.to_numpy() for p in params]

    assert net.to("fast") is net
    assert list(net.parameters()) == params  # the same Parameter objects, as PyTorch's in-place move
    for p, g in zip(params, grads, strict=True):
        assert p.value.backend.name == "fast" and p.value.is_leaf and p.value.requires_grad
        assert p.grad.backend.name == "fast" and np.array_equal(p.grad.to_numpy(), g)  # the gradient moves too
    np.testing.assert_allclose(net(x).to_numpy(), before, rtol=1e-12)

    old = [p.value.to_numpy().copy() for p in params]
    optimizer.step()  # made before the move, it updates the moved tensors
    for p, o, g in zip(params, old, grads, strict=True):
        np.testing.assert_allclose(p.value.to_numpy(), o - 0.1 * g, rtol=1e-12)


def test_module_to_a_dtype_cpu_double_float_keep_float64_and_refuse_integers():
    net = small_net("fast")
    values = [p.value for p in net.parameters()]
    for result in (net.to("cpu"), net.cpu(), net.double(), net.float(), net.to(torchlight.float32)):
        assert result is net
    assert [p.value for p in net.parameters()] == values  # nothing to change: not even copied
    assert all(p.dtype is torchlight.float64 for p in net.parameters())
    with pytest.raises(TypeError, match="only accepts floating point dtypes.*int64"):
        net.to(torchlight.long)
    assert [p.value for p in net.parameters()] == values


def test_module_to_refuses_scalar_parameters_and_bad_devices():
    class Scalars(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Parameter(torchlight.Scalar(1.0))

    with pytest.raises(TypeError, match="parameter 'a' holds a Scalar"):
        Scalars().to("cpu")
    with pytest.raises(TypeError, match="expected a device"):
        small_net().to(3.5)


def test_apply_visits_children_before_parents_and_requires_grad_freezes():
    net = small_net()
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "ReLU", "Linear", "Sequential"]  # PyTorch's order

    def init(m):
        if isinstance(m, nn.Linear):
            with torchlight.no_grad():
                m.bias.fill_(0.5)

    net.apply(init)
    assert np.all(net[0].bias.to_numpy() == 0.5) and np.all(net[2].bias.to_numpy() == 0.5)
    with pytest.raises(TypeError, match="fn must be callable"):
        net.apply(None)

    assert net.requires_grad_(False) is net
    assert not any(p.requires_grad for p in net.parameters())
    net.requires_grad_()
    assert all(p.requires_grad for p in net.parameters())
    with pytest.raises(TypeError, match="expected True or False"):
        net.requires_grad_(1)


# -- layers, losses, optimizers --------------------------------------------------------------------


def test_relu_accepts_inplace_gives_the_same_result_and_leaves_the_input():
    x = torchlight.tensor([-1.0, 0.5, 2.0])
    assert nn.ReLU(inplace=True)(x).tolist() == [0.0, 0.5, 2.0]
    assert x.tolist() == [-1.0, 0.5, 2.0]
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)" and repr(nn.ReLU()) == "ReLU()"
    with pytest.raises(TypeError, match="ReLU\\(inplace\\)"):
        nn.ReLU(inplace="yes")


SCORES = np.random.default_rng(0).normal(size=(5, 3))
TARGETS = np.array([0, 2, 1, 2, 1])


def cross_entropy_reference(ignore_index, weight, label_smoothing):
    """PyTorch's formula in numpy: targets equal to ignore_index count for nothing, in the sum
    and in the total weight that "mean" divides by."""
    log_p = SCORES - np.log(np.exp(SCORES).sum(1, keepdims=True))
    kept = TARGETS != ignore_index
    one_hot = np.eye(3)[TARGETS] * kept[:, None]
    dist = (1 - label_smoothing) * one_hot + label_smoothing / 3 * kept[:, None]
    losses = -(dist * weight * log_p).sum(1)
    return losses.sum() / (one_hot * weight).sum()


@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_ignore_index_that_is_a_real_class(weighted, label_smoothing):
    weight = np.array([1.0, 2.0, 3.0]) if weighted else np.ones(3)
    x = torchlight.tensor(SCORES, requires_grad=True)
    loss = nn.CrossEntropyLoss(
        weight=torchlight.tensor(weight) if weighted else None, ignore_index=2, label_smoothing=label_smoothing
    )(x, torchlight.tensor(TARGETS, dtype=torchlight.long))
    np.testing.assert_allclose(loss.item(), cross_entropy_reference(2, weight, label_smoothing), rtol=1e-12)
    loss.backward()
    assert np.all(x.grad.to_numpy()[TARGETS == 2] == 0.0)  # an ignored sample gets no gradient

    nll = F.nll_loss(F.log_softmax(torchlight.tensor(SCORES), 1), torchlight.tensor(TARGETS), ignore_index=2)
    np.testing.assert_allclose(nll.item(), cross_entropy_reference(2, np.ones(3), 0.0), rtol=1e-12)


def test_cross_entropy_ignore_index_against_pytorch():
    torch = pytest.importorskip("torch")
    weight = [1.0, 2.0, 3.0]
    for kwargs in ({"ignore_index": 2}, {"ignore_index": 1, "label_smoothing": 0.1}, {"ignore_index": 0}):
        ours = F.cross_entropy(
            torchlight.tensor(SCORES), torchlight.tensor(TARGETS), torchlight.tensor(weight), **kwargs
        )
        theirs = torch.nn.functional.cross_entropy(
            torch.tensor(SCORES), torch.tensor(TARGETS), torch.tensor(weight, dtype=torch.float64), **kwargs
        )
        np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-12)


def test_adam_accepts_amsgrad_false_and_refuses_true():
    params = small_net().parameters()
    for cls in (torchlight.optim.Adam, torchlight.optim.AdamW):
        cls(small_net().parameters(), lr=1e-3, amsgrad=False)
        with pytest.raises(NotImplementedError, match=f"{cls.__name__}\\(amsgrad=True\\).*no AMSGrad"):
            cls(params, amsgrad=True)
        with pytest.raises(TypeError, match="amsgrad"):
            cls(params, amsgrad=None)


# -- data ------------------------------------------------------------------------------------------


def test_data_loader_accepts_num_workers_and_pin_memory_and_makes_the_same_batches():
    data = TensorDataset(torchlight.arange(10.0).reshape(5, 2), torchlight.arange(5))
    plain = [[t.tolist() for t in batch] for batch in DataLoader(data, batch_size=2)]
    loader = DataLoader(data, batch_size=2, num_workers=2, pin_memory=True)
    assert [[t.tolist() for t in batch] for batch in loader] == plain
    assert (loader.num_workers, loader.pin_memory) == (2, True)
    with pytest.raises(ValueError, match="num_workers option should be non-negative.*-1"):
        DataLoader(data, num_workers=-1)
    with pytest.raises(ValueError, match="pin_memory should be a boolean"):
        DataLoader(data, pin_memory=1)


def test_subset_and_random_split():
    data = TensorDataset(torchlight.arange(10))
    part = Subset(data, [7, 2, 2])
    assert len(part) == 3 and [part[i][0].item() for i in range(3)] == [7, 2, 2]
    with pytest.raises(TypeError, match="sequence of ints"):
        Subset(data, [1.5])

    a, b = random_split(data, [7, 3], generator=np.random.default_rng(0))
    assert (len(a), len(b)) == (7, 3)
    assert sorted(a.indices + b.indices) == list(range(10))  # a partition
    assert a.indices != list(range(7))  # shuffled (the chance of order kept: 1 in 10!/3!)
    again = random_split(data, [7, 3], generator=np.random.default_rng(0))
    assert again[0].indices == a.indices  # the generator decides

    # fractions: floor of each, then the remainder one by one to the first parts (PyTorch's rule)
    assert [len(s) for s in random_split(data, [0.45, 0.45, 0.1])] == [5, 4, 1]
    batches = list(DataLoader(a, batch_size=4))
    assert [len(batch[0]) for batch in batches] == [4, 3]
    for lengths in ([5, 4], [0.5, 0.6], [-1, 11], [2.5, 7.5]):
        with pytest.raises(ValueError, match="lengths"):
            random_split(data, lengths)


def test_random_split_matches_pytorch_lengths():
    torch = pytest.importorskip("torch")
    for n, fractions in ((10, [0.45, 0.45, 0.1]), (7, [0.3, 0.3, 0.4]), (101, [0.8, 0.2])):
        theirs = [len(s) for s in torch.utils.data.random_split(range(n), fractions)]
        ours = [len(s) for s in random_split(TensorDataset(torchlight.zeros(n)), fractions)]
        assert ours == theirs


def test_load_takes_map_location_and_weights_only(tmp_path):
    path = tmp_path / "model.pt"
    net = small_net("simple")
    torchlight.save(net.state_dict(), path)
    for kwargs in ({"map_location": "fast"}, {"map_location": torchlight.device("cpu"), "weights_only": True}):
        state = torchlight.load(path, **kwargs)
        assert all(t.device.type == "cpu" for t in state.values())
        net.load_state_dict(state)
    assert torchlight.load(path, map_location="fast")["0.weight"].backend.name == "fast"
    assert torchlight.load(path, weights_only=False).keys() == net.state_dict().keys()
    with pytest.raises(TypeError, match="map_location.*dict"):
        torchlight.load(path, map_location={"cuda:0": "cpu"})
    with pytest.raises(ValueError, match="map_location or backend, not both"):
        torchlight.load(path, "fast", map_location="cpu")
    with pytest.raises(TypeError, match="weights_only"):
        torchlight.load(path, weights_only="yes")


def test_deepcopy_of_tensors_state_dicts_and_modules():
    # PyTorch's tutorials keep the best weights with copy.deepcopy(model.state_dict()).
    import copy

    torchlight.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
    x = torchlight.rand(4, 3)
    model(x).sum().backward()
    saved = copy.deepcopy(model.state_dict())
    twin = copy.deepcopy(model)
    before = model(x).to_numpy()
    for p in model.parameters():  # change the original in place: the copies must not follow
        p.value.data.add_(1.0)
    np.testing.assert_array_equal(twin(x).to_numpy(), before)
    fresh = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
    fresh.load_state_dict(saved)
    np.testing.assert_array_equal(fresh(x).to_numpy(), before)
    w = model[0].weight
    w_copy = copy.deepcopy(w)
    assert w_copy.requires_grad and w_copy.grad is not None
    np.testing.assert_array_equal(w_copy.grad.to_numpy(), w.grad.to_numpy())
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(model(x))
