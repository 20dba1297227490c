"""Task 4.5: what PyTorch's beginner tutorials call and torchlight lacked (issue 22), each name
against PyTorch where it is installed (values, and gradients where differentiable):
``torchlight.accelerator``, ``set_default_device``/``get_default_device``, ``Tensor.mul``/
``matmul``/``mm`` and the other method forms, ``out=``, ``backward(gradient=...)``,
``history.next_functions``, indexing by ranges, lists and tensors, ``np.asarray(tensor)``,
``@no_grad`` without parentheses, and the comparison methods."""

import re
import warnings

import numpy as np
import pytest

import torchlight
from torchlight import backends

pytestmark = pytest.mark.task4_5

rng = np.random.default_rng(22)
A = rng.normal(size=(3, 4))
B = rng.normal(size=(4, 2))
V = rng.normal(size=4)


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.fixture
def default_backend():
    """Restores the default backend that a test changes."""
    name = backends.default().name
    yield
    backends.set_default_backend(name)


def close(a, b, tol=1e-12):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# -- devices -------------------------------------------------------------------------------------


def test_accelerator_reports_the_cuda_backend_as_pytorch_reports_its_gpu(monkeypatch):
    acc = torchlight.accelerator
    available = torchlight.cuda.is_available()
    assert acc.is_available() is available
    assert acc.device_count() == (1 if available else 0)
    if available:
        assert acc.current_accelerator() == torchlight.device("cuda") and acc.current_accelerator().index is None
        assert acc.current_device_index() == 0
    monkeypatch.setattr(torchlight.cuda, "is_available", lambda: False)
    assert not acc.is_available() and acc.device_count() == 0 and acc.current_accelerator() is None
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
        acc.current_device_index()
    # The tutorials' idiom
    device = acc.current_accelerator().type if acc.is_available() else "cpu"
    assert device == "cpu" and torchlight.ones(2, device=device).device == torchlight.device("cpu")
    monkeypatch.setattr(torchlight.cuda, "is_available", lambda: True)
    assert acc.current_accelerator().type == "cuda" and acc.device_count() == 1
    acc.set_device_index(0)
    acc.set_device_index("cuda:0")
    acc.synchronize()
    with pytest.raises(RuntimeError, match="cuda:0"):
        acc.set_device_index(1)


def test_accelerator_without_a_gpu_is_pytorchs_without_one(torch, monkeypatch):
    if torch.accelerator.is_available():
        pytest.skip("PyTorch has an accelerator here")
    monkeypatch.setattr(torchlight.cuda, "is_available", lambda: False)
    acc, tacc = torchlight.accelerator, torch.accelerator
    assert (acc.is_available(), acc.current_accelerator(), acc.device_count()) == (
        tacc.is_available(),
        tacc.current_accelerator(),
        tacc.device_count(),
    )


def test_set_default_device_chooses_where_new_tensors_live(default_backend, torch):
    torchlight.set_default_device("simple")
    assert torchlight.zeros(2).backend.name == "simple" and torchlight.tensor([1.0]).backend.name == "simple"
    assert torchlight.get_default_device() == torchlight.device("cpu")
    assert str(torchlight.get_default_device()) == str(torch.get_default_device()) == "cpu"
    torchlight.set_default_device("cpu")  # on the CPU already: the backend stays
    assert torchlight.zeros(2).backend.name == "simple"
    torchlight.set_default_device(torchlight.device("cpu"))
    torchlight.set_default_device(None)
    assert torchlight.get_default_device().type == "cpu"
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        torchlight.set_default_device("tpu")


# -- method forms ---------------------------------------------------------------------------------

METHODS = [
    ("mul", A, A.T.copy().T),
    ("mul", A, 2.5),
    ("multiply", A, A),
    ("add", A, A),
    ("sub", A, A[0]),
    ("subtract", A, A),
    ("div", A, A + 3.0),
    ("divide", A, 2.0),
    ("true_divide", A, A + 3.0),
    ("matmul", A, B),
    ("matmul", A, V),
    ("mm", A, B),
    ("bmm", A.reshape(1, 3, 4), B.reshape(1, 4, 2)),
    ("dot", V, V[::-1].copy()),
]


@pytest.mark.parametrize("name, x, y", METHODS, ids=[m[0] for m in METHODS])
def test_method_forms_match_pytorch_values_and_gradients(torch, name, x, y):
    a = torchlight.tensor(x, requires_grad=True)
    ta = torch.tensor(x, requires_grad=True)
    if isinstance(y, float):
        out, tout = getattr(a, name)(y), getattr(ta, name)(y)
    else:
        b, tb = torchlight.tensor(y, requires_grad=True), torch.tensor(y, requires_grad=True)
        out, tout = getattr(a, name)(b), getattr(ta, name)(tb)
    close(out, tout)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    close(a.grad, ta.grad)
    if not isinstance(y, float):
        close(b.grad, tb.grad)


def test_add_and_sub_take_alpha_and_square_is_self_times_self(torch):
    a, ta = torchlight.tensor(A), torch.tensor(A)
    close(a.add(a, alpha=2), ta.add(ta, alpha=2))
    close(a.sub(1.5, alpha=2), ta.sub(1.5, alpha=2))
    close(a.square(), ta.square())


def test_mm_and_dot_refuse_what_pytorch_refuses():
    with pytest.raises(RuntimeError, match="must be a matrix"):
        torchlight.tensor(V).mm(torchlight.tensor(B))
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 1D tensors"):
        torchlight.tensor(A).dot(torchlight.tensor(V))
    with pytest.raises(RuntimeError, match="inconsistent tensor size"):
        torchlight.tensor(V).dot(torchlight.tensor(V[:3]))


def test_comparison_methods_and_the_rest(torch):
    x, tx = torchlight.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 3.0])
    y, ty = torchlight.tensor([1.0, 0.0, 4.0]), torch.tensor([1.0, 0.0, 4.0])
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        for other, tother in ((y, ty), (2.0, 2.0)):
            got, want = getattr(x, name)(other), getattr(tx, name)(tother)
            assert got.dtype == torchlight.bool and got.tolist() == want.tolist(), name
    with pytest.raises(TypeError, match="eq\\(\\): argument 'other'"):
        x.eq("a")
    assert x.equal(x.clone()) and not x.equal(y) and not x.equal(x.view(3, 1))
    assert x.allclose(x + 1e-9) and x.isclose(y).tolist() == tx.isclose(ty).tolist()
    m, tm = torchlight.tensor(A), torch.tensor(A)
    assert m.view_as(torchlight.zeros(4, 3)).shape == tuple(tm.view_as(torch.zeros(4, 3)).shape)
    assert m.t().reshape_as(torchlight.zeros(12)).tolist() == tm.t().reshape_as(torch.zeros(12)).tolist()
    assert m.nelement() == tm.nelement() and m.is_cuda == tm.is_cuda
    close(abs(m), abs(tm))
    close(+m, +tm)
    assert (2.0 in x, 5.0 in x, torchlight.tensor(3.0) in x) == (2.0 in tx, 5.0 in tx, torch.tensor(3.0) in tx)


# -- out= -----------------------------------------------------------------------------------------

P = np.abs(A) + 0.5  # (positive: log, sqrt and pow are defined)
OUT_CASES = [
    ("mul", (P, A), {}),
    ("add", (P, A), {"alpha": 2}),
    ("sub", (P, A), {}),
    ("div", (P, A), {}),
    ("pow", (P, A), {}),
    ("matmul", (A, B), {}),
    ("mm", (A, B), {}),
    ("bmm", (A.reshape(1, 3, 4), B.reshape(1, 4, 2)), {}),
    ("maximum", (P, A), {}),
    ("minimum", (P, A), {}),
    ("clamp", (A,), {"min": -0.5, "max": 0.5}),
    ("sin", (A,), {}),
    ("cos", (A,), {}),
    ("exp", (A,), {}),
    ("log", (P,), {}),
    ("sqrt", (P,), {}),
    ("tanh", (A,), {}),
    ("sigmoid", (A,), {}),
    ("abs", (A,), {}),
    ("neg", (A,), {}),
    ("sum", (A, 1), {}),
    ("mean", (A, 0), {}),
    ("var", (A, 1), {}),
    ("std", (A, 1), {}),
    ("softmax", (A, 1), {}),
    ("log_softmax", (A, 1), {}),
    ("max", (A,), {}),
]


@pytest.mark.parametrize("name, args, kwargs", OUT_CASES, ids=[c[0] for c in OUT_CASES])
def test_out_writes_into_the_given_tensor_and_returns_it(torch, name, args, kwargs):
    want = getattr(torch, name)(*[torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args], **kwargs)
    out = torchlight.zeros(*want.shape)
    storage = out.numpy()
    got = getattr(torchlight, name)(
        *[torchlight.tensor(a) if isinstance(a, np.ndarray) else a for a in args], **kwargs, out=out
    )
    assert got is out
    close(out, want)
    if out.shape:  # the same storage, written in place (a 0-d out is resized from shape (), its own)
        close(storage, want)


def test_out_joins_and_selects(torch):
    a, ta = torchlight.tensor(A), torch.tensor(A)
    for name in ("cat", "stack"):
        out = torchlight.empty(0)  # no elements: resized without a warning, as PyTorch
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert getattr(torchlight, name)([a, a], 1, out=out) is out
        close(out, getattr(torch, name)([ta, ta], 1))
    cond = torchlight.tensor(A > 0)
    out = torchlight.zeros(3, 4)
    torchlight.where(cond, a, 0.0, out=out)
    close(out, torch.where(torch.tensor(A > 0), ta, 0.0))
    index = torchlight.zeros(3, dtype=torchlight.long)
    assert torchlight.argmax(a, 1, out=index) is index and index.tolist() == torch.argmax(ta, 1).tolist()
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype torchlight.int64"):
        torchlight.argmin(a, 1, out=torchlight.zeros(3))
    values, indices = torchlight.zeros(3), torchlight.zeros(3, dtype=torchlight.long)
    result = torchlight.max(a, 1, out=(values, indices))
    assert result.values is values and result.indices is indices
    close(values, torch.max(ta, 1).values)
    assert indices.tolist() == torch.max(ta, 1).indices.tolist()


def test_out_follows_pytorchs_rules(torch):
    x = torchlight.tensor(A, requires_grad=True)
    with pytest.raises(RuntimeError, match="mul\\(\\): functions with out=... arguments don't support automatic"):
        torchlight.mul(x, x, out=torchlight.zeros(3, 4))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        torchlight.mul(torchlight.tensor(A), 2.0, out=torchlight.zeros(3, 4, requires_grad=True))
    with torchlight.no_grad():  # without recording, allowed (and the result has no history)
        out = torchlight.mul(x, x, out=torchlight.zeros(3, 4))
    assert not out.requires_grad
    close(out, A * A)
    # the dtype of out stays; a result it cannot hold is refused
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        torchlight.mul(torchlight.tensor(A), 2.0, out=torchlight.zeros(3, 4, dtype=torchlight.long))
    counts = torchlight.zeros(3)
    torchlight.sum(torchlight.tensor(A) > 0, 1, out=counts)
    assert counts.dtype == torchlight.float64 and counts.tolist() == (A > 0).sum(1).tolist()
    # a tensor of another shape is resized, with PyTorch's warning if it had elements
    out, tout = torchlight.zeros(5), torch.zeros(5, dtype=torch.float64)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        torchlight.add(torchlight.tensor(A), 1.0, out=out)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        torch.add(torch.tensor(A), 1.0, out=tout)
    assert out.shape == tuple(tout.shape) == (3, 4)
    close(out, tout)
    with pytest.raises(TypeError, match="argument 'out' must be Tensor"):
        torchlight.exp(torchlight.tensor(A), out=np.zeros((3, 4)))


# -- autograd -------------------------------------------------------------------------------------


def test_backward_takes_pytorchs_keyword_gradient(torch):
    x, tx = torchlight.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    g = rng.normal(size=(3, 4))
    (x * x).backward(gradient=torchlight.tensor(g))
    (tx * tx).backward(gradient=torch.tensor(g))
    close(x.grad, tx.grad)
    y = torchlight.tensor(V, requires_grad=True)
    out = y.exp()
    out.backward(torchlight.ones_like(out), retain_graph=True)  # positionally, as the tutorials do
    out.backward(torchlight.ones_like(out))
    close(y.grad, 2 * np.exp(V))


def shape_of_graph(node, strip=lambda name: name):
    """The graph below a grad_fn as nested tuples of (name, index, children); None for no node."""
    if node is None:
        return None
    name = strip(type(node).__name__ if not hasattr(node, "name") else node.name())
    return (name, tuple((shape_of_graph(n, strip), i) for n, i in node.next_functions))


def test_next_functions_walk_the_graph_as_pytorchs(torch):
    def graph(lib, x, w):
        h = (x * w).exp()
        return (h + w * 2.0).sum()

    x, w = torchlight.tensor(V), torchlight.tensor(V, requires_grad=True)
    tx, tw = torch.tensor(V), torch.tensor(V, requires_grad=True)
    loss, tloss = graph(torchlight, x, w), graph(torch, tx, tw)
    # PyTorch numbers its nodes (MulBackward0) and names a leaf's torch::autograd::AccumulateGrad
    digits = lambda name: re.sub(r"\d+$", "", name.split("::")[-1])  # noqa: E731
    assert shape_of_graph(loss.history, digits) == shape_of_graph(tloss.grad_fn, digits)
    # PyTorch's walk, as the blitz does it (from history: grad_fn is the Function class, the contract's)
    mul = loss.history.next_functions[0][0].next_functions[0][0].next_functions[0][0]
    assert mul.name() == "MulBackward" and repr(mul).startswith("<MulBackward object at 0x")
    first, second = mul.next_functions
    assert second == (None, 0) or first == (None, 0)
    leaf = (first if first[0] is not None else second)[0]
    assert leaf.name() == "AccumulateGrad" and leaf.variable is w and leaf.next_functions == ()
    assert leaf is (first if first[0] is not None else second)[0]  # one node per leaf


def test_next_functions_index_says_which_output(torch):
    x = torchlight.tensor(A, requires_grad=True)
    values, _ = x.max(1)
    out = values * 2.0
    node, index = out.history.next_functions[0]
    assert node is values.history and index == values._output_nr
    assert x.grad_fn is None and (x * 2).history.next_functions[1] == (None, 0)
    assert torchlight.tensor(A).grad_fn is None


def test_no_grad_decorates_without_parentheses():
    x = torchlight.tensor(V, requires_grad=True)

    @torchlight.no_grad
    def evaluate(t):
        return t * 2

    @torchlight.no_grad()
    def evaluate_too(t):
        return t * 2

    assert not evaluate(x).requires_grad and not evaluate_too(x).requires_grad
    assert evaluate.__name__ == "evaluate"
    with torchlight.no_grad():
        assert torchlight.enable_grad(lambda t: t * 2)(x).requires_grad
    with pytest.raises(TypeError, match="no_grad\\(\\) takes no arguments"):
        torchlight.no_grad(3)


# -- indexing -------------------------------------------------------------------------------------

M = np.arange(24.0).reshape(2, 3, 4) * 0.5 - 3


def keys(lib):
    long = {"dtype": lib.long}
    return [
        range(2),
        [1, 0, 1],
        (0, [2, 0]),
        ([0, 1], [2, 0]),
        ([[0], [1]], [0, 2]),
        (slice(None), [2, 2, 0]),
        (Ellipsis, [3, 0]),
        ([1, 0], slice(None), [3, 1]),  # separated by a slice: their dimension goes first
        (None, [1]),
        ([-1, -2],),
        lib.tensor([1, 0], **long),
        lib.tensor(1, **long),
        (lib.tensor([0, 1], **long), lib.tensor([[2], [0]], **long)),
        lib.tensor(M) > 0,
        (0, lib.tensor([1.0, -1.0, 2.0]) > 0),
        (slice(0, 1), range(1, 3), 2),
    ]


KEYS = 16  # len(keys(lib)), counted by hand: keys() makes tensors, which collection must not


@pytest.mark.parametrize("which", range(KEYS))
def test_indexing_by_sequences_and_tensors_matches_pytorch(torch, which):
    assert len(keys(torchlight)) == KEYS, "update KEYS to the number of keys"
    x, tx = torchlight.tensor(M, requires_grad=True), torch.tensor(M, requires_grad=True)
    got, want = x[keys(torchlight)[which]], tx[keys(torch)[which]]
    assert got.shape == tuple(want.shape)
    close(got, want)
    g = rng.normal(size=tuple(want.shape))
    (got * torchlight.tensor(g)).sum().backward()
    (want * torch.tensor(g)).sum().backward()
    close(x.grad, tx.grad)  # an element picked twice gets both gradients


def test_indexing_keeps_the_dtype_and_differentiates_twice():
    labels = torchlight.tensor([3, 1, 2], dtype=torchlight.long)
    assert labels[[2, 0]].dtype == torchlight.long and labels[[2, 0]].tolist() == [2, 3]
    assert torchlight.tensor([1.0, 2.0])[torchlight.tensor([1.0, 0.0])].tolist() == [2.0, 1.0]  # whole floats
    x = torchlight.tensor(V, requires_grad=True)
    (g,) = torchlight.autograd.grad((x[[0, 0, 2]] ** 3).sum(), x, create_graph=True)
    (gg,) = torchlight.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [12 * V[0], 0, 6 * V[2], 0])
    assert torchlight.autograd.gradcheck(lambda t: t[[1, 1, 3]] * t[torchlight.tensor([0, 2, 3])], (x,))


def test_indexing_errors_name_the_problem():
    x = torchlight.tensor(M)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 2"):
        x[[0, 5]]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        x[torchlight.tensor([0.5])]


def test_the_nll_of_what_is_torch_nn_really(torch):
    # -input[range(target.shape[0]), target].mean(): picking each row's target log-probability
    logits = rng.normal(size=(5, 3))
    target = [2, 0, 1, 1, 0]
    x, tx = torchlight.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    y, ty = torchlight.tensor(target, dtype=torchlight.long), torch.tensor(target)
    loss = -x.log_softmax(-1)[range(y.shape[0]), y].mean()
    tloss = -tx.log_softmax(-1)[range(ty.shape[0]), ty].mean()
    close(loss, tloss)
    loss.backward()
    tloss.backward()
    close(x.grad, tx.grad)


# -- numpy ----------------------------------------------------------------------------------------


def test_np_asarray_of_a_tensor_is_numpy(torch):
    t, tt = torchlight.tensor(A), torch.tensor(A)
    array = np.asarray(t)
    np.testing.assert_array_equal(array, np.asarray(tt))
    array[0, 0] = 100.0  # float64: shares memory, as PyTorch's
    assert t[0, 0].item() == 100.0
    assert np.asarray(torchlight.tensor([1, 2], dtype=torchlight.long)).dtype == np.int64
    assert np.asarray(torchlight.tensor(A) > 0).dtype == np.bool_
    assert np.asarray(t, dtype=np.float32).dtype == np.float32
    assert np.array(t, copy=True) is not t.numpy()
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        np.asarray(torchlight.tensor(A, requires_grad=True))
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        np.asarray(torch.tensor(A, requires_grad=True))
    # a list of tensors still makes a tensor, as PyTorch's (values copied)
    w = torchlight.tensor(V, requires_grad=True)
    assert torchlight.tensor([w[0], w[1]]).tolist() == V[:2].tolist()
    assert np.float64(2.0) * t is not None and isinstance(np.float64(2.0) * t, torchlight.Tensor)


def test_new_factories_take_the_tensors_dtype_and_backend(torch):
    for lib in (torchlight, torch):
        x, f = lib.tensor([1, 2], dtype=lib.long), lib.tensor([1.5], dtype=lib.float64)
        got = [
            x.new_zeros(2, 3).tolist(),
            x.new_ones((2,)).tolist(),
            x.new_full((2,), 2.7).tolist(),
            f.new_full((2, 1), 2.5).tolist(),
            f.new_ones(2, dtype=lib.long).tolist(),
            tuple(f.new_empty(3).shape),
            f.new_zeros(2, requires_grad=True).requires_grad,
            str(x.new_ones(1).dtype).split(".")[-1],
        ]
        if lib is torchlight:
            mine = got
        else:
            assert mine == got
    s = torchlight.tensor([1.0], backend="simple")
    assert s.new_zeros(2).backend.name == "simple" and s.new_ones(2, device="cpu").backend.name == "simple"


def test_backward_also_takes_the_contracts_keyword_grad():
    x = torchlight.tensor(V, requires_grad=True)
    (x * x).backward(grad=torchlight.ones(4))
    np.testing.assert_allclose(x.grad.numpy(), 2 * V)
    with pytest.raises(TypeError, match="both gradient= and grad="):
        (x * x).backward(torchlight.ones(4), grad=torchlight.ones(4))
