"""PyTorch's beginner API on torchlight (issue 14): factories, module-level functions, the Tensor
methods and attributes PyTorch programs use first, dtypes and devices. Values against numpy always
and against PyTorch (float64) where it is installed; errors with PyTorch's meaning.

Runs on the simple backend here and on fast in tests/module3/test_torch_api.py (``backend_name``).
Gradients are in test_torch_api_grad.py; in-place operators in module 5 (they need stage 5.2).
"""

import math

import numpy as np
import pytest

import torchlight
from torchlight import backends

pytestmark = pytest.mark.task2_3

A = np.array([[0.5, -1.5, 2.0], [3.0, -0.25, 1.0]])
B = np.array([-1.0, 0.5, 2.0])


def T(array, backend_name, **kwargs):
    return torchlight.tensor(np.asarray(array, dtype=np.float64), backend=backend_name, **kwargs)


def assert_values(t, expected, exact=False):
    assert isinstance(t, torchlight.Tensor)
    expected = np.asarray(expected, dtype=np.float64)
    assert t.shape == expected.shape
    if exact:
        np.testing.assert_array_equal(t.to_numpy(), expected)
    else:
        np.testing.assert_allclose(t.to_numpy(), expected, rtol=1e-12, atol=1e-14)


# -- factories --------------------------------------------------------------------------------

ARANGES = [
    ((5,), np.int64),
    ((2, 7), np.int64),
    ((7, 2, -2), np.int64),
    ((0.0, 1.0, 0.25), None),
    ((0.1, 1.0, 0.3), None),
]


@pytest.mark.parametrize("args, int_dtype", ARANGES, ids=str)
def test_arange_values_and_dtype(backend_name, args, int_dtype):
    t = torchlight.arange(*args, backend=backend_name)
    start, end, step = (0, args[0], 1) if len(args) == 1 else (args + (1,))[:3]
    n = math.ceil((end - start) / step)
    assert_values(t, [start + i * step for i in range(n)], exact=True)
    assert t.dtype is (torchlight.int64 if int_dtype else torchlight.float64)
    assert t.backend.name == backend_name


@pytest.mark.parametrize(
    "args", [(-math.pi, math.pi, 7), (0.0, 1.0, 1), (0.0, 1.0, 0), (2.0, -3.0, 10), (-1.0, 1.0, 2000)]
)
def test_linspace_is_symmetric_with_exact_ends(args):
    start, end, steps = args
    x = torchlight.linspace(start, end, steps).to_numpy()
    assert x.shape == (steps,)
    np.testing.assert_allclose(x, np.linspace(start, end, steps), rtol=0, atol=1e-15)
    if steps > 1:
        # PyTorch's formula: the first half counts from start, the second back from end
        step = (end - start) / (steps - 1)
        for i in range(steps // 2):
            assert x[i] == start + step * i and x[steps - 1 - i] == end - step * i


def test_factories_match_torch_exactly():
    torch = pytest.importorskip("torch")
    d = torch.float64
    pairs = [
        (torchlight.linspace(-math.pi, math.pi, 2000), torch.linspace(-math.pi, math.pi, 2000, dtype=d)),
        (torchlight.linspace(2.0, -3.0, 10), torch.linspace(2.0, -3.0, 10, dtype=d)),
        (torchlight.arange(0.1, 1.0, 0.3), torch.arange(0.1, 1.0, 0.3, dtype=d)),
        (torchlight.arange(-1.0, 1.0, 0.1), torch.arange(-1.0, 1.0, 0.1, dtype=d)),
        (torchlight.arange(7, 2, -2), torch.arange(7, 2, -2)),
        (torchlight.eye(2, 3), torch.eye(2, 3, dtype=d)),
        (torchlight.full((2, 2), 3), torch.full((2, 2), 3)),
        (torchlight.full((2,), True), torch.full((2,), True)),
    ]
    for ours, theirs in pairs:
        # (PyTorch's vectorized kernels add the step to a chunk's first value: the last bit can differ)
        np.testing.assert_allclose(ours.to_numpy(), theirs.numpy().astype(np.float64), rtol=0, atol=1e-15)
        assert (
            ours.dtype
            is {torch.float64: torchlight.float64, torch.int64: torchlight.int64, torch.bool: torchlight.bool}[
                theirs.dtype
            ]
        )


def test_full_eye_and_like(backend_name):
    assert torchlight.full((2, 3), 1.5).dtype is torchlight.float64
    assert torchlight.full((2,), 7).dtype is torchlight.int64
    assert torchlight.full([2], False).tolist() == [False, False]
    assert_values(torchlight.full((2, 1), -2.5, backend=backend_name), [[-2.5], [-2.5]], exact=True)
    assert_values(torchlight.eye(3), np.eye(3), exact=True)
    assert_values(torchlight.eye(2, 3), np.eye(2, 3), exact=True)
    x = torchlight.arange(6, backend=backend_name).view(2, 3)
    for fn, value in ((torchlight.zeros_like, 0), (torchlight.ones_like, 1), (torchlight.empty_like, 0)):
        y = fn(x)
        assert y.shape == (2, 3) and y.dtype is torchlight.int64 and y.backend is x.backend
        assert y.tolist() == [[value] * 3] * 2
    y = torchlight.full_like(x, 2.5, dtype=torchlight.float64, requires_grad=True)
    assert y.tolist() == [[2.5] * 3] * 2 and y.requires_grad and y.is_leaf
    assert torchlight.zeros_like(T(A, backend_name), dtype=torchlight.bool).dtype is torchlight.bool
    assert torchlight.rand_like(T(A, backend_name)).shape == A.shape


def test_random_factories_follow_the_seed():
    torchlight.manual_seed(3)
    x = torchlight.randn(2, 3)
    expected = np.random.default_rng(3).standard_normal((2, 3))
    assert_values(x, expected, exact=True)
    torchlight.manual_seed(3)
    assert torchlight.randn((2, 3)).tolist() == x.tolist()
    s = torchlight.randn((), requires_grad=True)
    assert s.shape == () and s.requires_grad and s.is_leaf
    r = torchlight.randint(3, 8, (200,), seed=0)
    values = r.to_numpy()
    assert r.dtype is torchlight.int64 and values.min() >= 3 and values.max() <= 7 and set(values) == set(range(3, 8))
    assert torchlight.randint(4, size=(5,), seed=1).tolist() == torchlight.randint(0, 4, (5,), seed=1).tolist()
    p = torchlight.randperm(6, seed=2)
    assert p.dtype is torchlight.int64 and sorted(p.tolist()) == list(range(6))
    assert torchlight.randn_like(x, generator=np.random.default_rng(0)).shape == (2, 3)


def test_from_numpy_keeps_the_dtype_and_shares_float64_memory():
    a = np.array([1.0, 2.0, 3.0])
    t = torchlight.from_numpy(a)
    a[0] = 10.0  # PyTorch's tutorial: the tensor sees the change
    assert t.tolist() == [10.0, 2.0, 3.0] and t.dtype is torchlight.float64
    assert torchlight.from_numpy(np.array([1, 2])).dtype is torchlight.int64
    assert torchlight.from_numpy(np.array([True, False])).tolist() == [True, False]
    with pytest.raises(TypeError, match="expected np.ndarray"):
        torchlight.from_numpy([1.0, 2.0])
    with pytest.raises(ValueError, match="2\\*\\*53"):
        torchlight.from_numpy(np.array([2**60]))


def test_dtype_and_device_arguments(backend_name):
    t = torchlight.tensor([1.7, -1.7, 0.0], dtype=torchlight.long, device="cpu")
    assert t.tolist() == [1, -1, 0] and t.dtype is torchlight.int64 and t.device == torchlight.device("cpu")
    assert torchlight.tensor([2.0, 0.0], dtype=torchlight.bool).tolist() == [True, False]
    assert torchlight.zeros(2, dtype=int).dtype is torchlight.int64
    assert torchlight.ones(2, dtype=torchlight.float32).dtype is torchlight.float64  # float32 is held as float64
    assert torchlight.tensor([1.0], dtype=torchlight.double, backend=backend_name).backend.name == backend_name
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        torchlight.arange(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="random floats cannot be torchlight.int64"):
        torchlight.rand(2, dtype=torchlight.long)
    with pytest.raises(TypeError, match="dtype must be a torchlight dtype.*'float64'"):
        torchlight.zeros(2, dtype="float64")
    with pytest.raises(RuntimeError, match="device type at start of device string: mps"):
        torchlight.zeros(2, device="mps")
    with pytest.raises(ValueError, match="not both"):
        torchlight.zeros(2, device="cpu", backend="simple")
    with pytest.raises(AttributeError, match="no dtype float16"):
        torchlight.float16  # noqa: B018


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: torchlight.arange(0, 5, 0), RuntimeError, "step must be nonzero"),
        (lambda: torchlight.arange(5, 0, 1), RuntimeError, "inconsistent with step sign"),
        (lambda: torchlight.arange(0, math.inf), RuntimeError, "must be finite"),
        (lambda: torchlight.arange("5"), TypeError, "argument 'end' must be a number"),
        (lambda: torchlight.linspace(0, 1, -1), RuntimeError, "number of steps must be non-negative"),
        (lambda: torchlight.linspace(0, 1, 2.0), TypeError, "'steps' must be an int"),
        (lambda: torchlight.full((2,), "a"), TypeError, "fill_value must be a number"),
        (lambda: torchlight.eye(-1), RuntimeError, "n must be greater or equal to 0, got -1"),
        (lambda: torchlight.randint(5, 5, (2,)), RuntimeError, "from=5 >= to=5"),
        (lambda: torchlight.randint(5), TypeError, "randint\\(\\) takes"),
        (lambda: torchlight.randint(0.5, 3, (2,)), TypeError, "'low' must be an int"),
        (lambda: torchlight.randperm(-2), RuntimeError, "n must be greater or equal to 0"),
        (lambda: torchlight.randn(2, -1), RuntimeError, "negative dimension"),
        (lambda: torchlight.zeros_like([1.0]), TypeError, "'input' must be Tensor"),
    ],
)
def test_factory_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- operations: values against numpy -----------------------------------------------------------

# (name, function of the module m (torchlight or torch) and its tensors a (2, 3) and b (3,), numpy function of
# arrays a and b, or None for one in NUMPY_FOR): the same code runs on torchlight and on PyTorch
VALUES = [
    ("sin", lambda m, a, b: m.sin(a), lambda a, b: np.sin(a)),
    ("cos_method", lambda m, a, b: a.cos(), lambda a, b: np.cos(a)),
    ("pow", lambda m, a, b: a.pow(2), lambda a, b: a**2),
    ("pow_tensor", lambda m, a, b: m.pow(a.abs(), b), lambda a, b: np.abs(a) ** b),
    ("pow_number_base", lambda m, a, b: m.pow(2.0, a), lambda a, b: 2.0**a),
    ("clamp", lambda m, a, b: a.clamp(-1.0, 1.0), lambda a, b: np.clip(a, -1.0, 1.0)),
    ("clamp_min", lambda m, a, b: m.clamp(a, min=0.0), lambda a, b: np.maximum(a, 0.0)),
    ("clamp_max_tensor", lambda m, a, b: a.clamp(max=b), lambda a, b: np.minimum(a, b)),
    ("clip", lambda m, a, b: m.clip(a, -0.5, 2.5), lambda a, b: np.clip(a, -0.5, 2.5)),
    ("maximum", lambda m, a, b: m.maximum(a, b), lambda a, b: np.maximum(a, b)),
    ("minimum", lambda m, a, b: a.minimum(b), lambda a, b: np.minimum(a, b)),
    ("max_of_two", lambda m, a, b: m.max(a, b), lambda a, b: np.maximum(a, b)),
    ("min_of_two", lambda m, a, b: m.min(a, b), lambda a, b: np.minimum(a, b)),
    ("where", lambda m, a, b: m.where(a > b, a, b), lambda a, b: np.where(a > b, a, b)),
    ("where_numbers", lambda m, a, b: m.where(a > 0, 1.0, -1.0), lambda a, b: np.where(a > 0, 1.0, -1.0)),
    ("where_method", lambda m, a, b: a.where(a < 1, b), lambda a, b: np.where(a < 1, a, b)),
    ("masked_fill", lambda m, a, b: a.masked_fill(b > 0, -9.0), lambda a, b: np.where(b > 0, -9.0, a)),
    ("var", lambda m, a, b: a.var(), lambda a, b: np.var(a, ddof=1)),
    ("var_dim", lambda m, a, b: m.var(a, 1), lambda a, b: np.var(a, axis=1, ddof=1)),
    (
        "var_biased_keepdim",
        lambda m, a, b: a.var(0, unbiased=False, keepdim=True),
        lambda a, b: np.var(a, 0, keepdims=True),
    ),
    ("var_correction", lambda m, a, b: a.var(dim=(0, 1), correction=2), lambda a, b: np.var(a, ddof=2)),
    ("std", lambda m, a, b: a.std(-1), lambda a, b: np.std(a, axis=-1, ddof=1)),
    ("std_module", lambda m, a, b: m.std(a, unbiased=False), lambda a, b: np.std(a)),
    ("min", lambda m, a, b: a.min(), lambda a, b: np.min(a)),
    ("min_dim", lambda m, a, b: a.min(1).values, lambda a, b: np.min(a, 1)),
    ("min_dim_indices", lambda m, a, b: m.min(a, 0, keepdim=True).indices, lambda a, b: np.argmin(a, 0)[None]),
    ("argmax", lambda m, a, b: a.argmax(), lambda a, b: np.argmax(a)),
    ("argmax_dim", lambda m, a, b: m.argmax(a, 1), lambda a, b: np.argmax(a, 1)),
    ("argmax_keepdim", lambda m, a, b: a.argmax(dim=0, keepdim=True), lambda a, b: np.argmax(a, 0)[None]),
    ("argmin", lambda m, a, b: m.argmin(a), lambda a, b: np.argmin(a)),
    ("argmin_dim", lambda m, a, b: a.argmin(-1), lambda a, b: np.argmin(a, -1)),
    ("any", lambda m, a, b: (a > 2.5).any(), lambda a, b: np.any(a > 2.5)),
    ("any_dim", lambda m, a, b: (a > 0.9).any(1, keepdim=True), lambda a, b: np.any(a > 0.9, 1, keepdims=True)),
    ("cat", lambda m, a, b: m.cat([a, b.view(1, 3)]), lambda a, b: np.concatenate([a, b[None]])),
    ("cat_dim", lambda m, a, b: m.cat((a, a, a[:, :1]), dim=-1), lambda a, b: np.concatenate([a, a, a[:, :1]], -1)),
    ("concat", lambda m, a, b: m.concat([b, b]), lambda a, b: np.concatenate([b, b])),
    ("stack", lambda m, a, b: m.stack([b, b * 2.0]), lambda a, b: np.stack([b, b * 2.0])),
    ("stack_dim", lambda m, a, b: m.stack([a, a.T.T], dim=2), lambda a, b: np.stack([a, a], 2)),
    ("repeat", lambda m, a, b: a.repeat(2, 1), lambda a, b: np.tile(a, (2, 1))),
    ("repeat_more_dims", lambda m, a, b: b.repeat(2, 1, 2), lambda a, b: np.tile(b, (2, 1, 2))),
    ("repeat_strided", lambda m, a, b: a.T.repeat(1, 2), lambda a, b: np.tile(a.T, (1, 2))),
    ("flatten", lambda m, a, b: m.flatten(a), lambda a, b: a.reshape(-1)),
    ("flatten_range", lambda m, a, b: a.view(2, 3, 1).flatten(1), lambda a, b: a.reshape(2, 3)),
    ("flatten_start_end", lambda m, a, b: a.view(1, 2, 3, 1).flatten(0, 1), lambda a, b: a.reshape(2, 3, 1)),
    ("t", lambda m, a, b: a.t(), lambda a, b: a.T),
    ("t_vector", lambda m, a, b: m.t(b), lambda a, b: b),
    ("T", lambda m, a, b: a.T, lambda a, b: a.T),
    ("transpose", lambda m, a, b: m.transpose(a, 0, 1), lambda a, b: a.T),
    ("permute", lambda m, a, b: m.permute(a, (1, 0)), lambda a, b: a.T),
    ("reshape", lambda m, a, b: m.reshape(a, (3, 2)), lambda a, b: a.reshape(3, 2)),
    ("squeeze_unsqueeze", lambda m, a, b: m.squeeze(m.unsqueeze(b, 0)), lambda a, b: b),
    ("sum_mean", lambda m, a, b: m.sum(a, 1) + m.mean(a, 0, keepdim=True).view(3)[:2], None),
    ("exp_log", lambda m, a, b: m.log(m.exp(a)), lambda a, b: a),
    ("activations", lambda m, a, b: m.relu(a) + m.sigmoid(a) + m.tanh(a), None),
    ("abs_sqrt", lambda m, a, b: m.sqrt(m.abs(a)), lambda a, b: np.sqrt(np.abs(a))),
    ("arithmetic", lambda m, a, b: m.sub(m.add(a, b, alpha=2), m.div(m.mul(a, b), 4.0)), None),
    ("neg", lambda m, a, b: m.neg(a), lambda a, b: -a),
]

NUMPY_FOR = {
    "sum_mean": lambda a, b: a.sum(1) + a.mean(0)[:2],
    "activations": lambda a, b: np.maximum(a, 0) + 1 / (1 + np.exp(-a)) + np.tanh(a),
    "arithmetic": lambda a, b: (a + 2 * b) - (a * b) / 4.0,
}


@pytest.mark.parametrize("name, fn, np_fn", VALUES, ids=[v[0] for v in VALUES])
def test_values_against_numpy(backend_name, name, fn, np_fn):
    out = fn(torchlight, T(A, backend_name), T(B, backend_name))
    expected = (np_fn or NUMPY_FOR[name])(A, B)
    assert out.backend.name == backend_name
    assert_values(out, expected)


@pytest.mark.parametrize("name, fn, np_fn", VALUES, ids=[v[0] for v in VALUES])
def test_values_against_torch(name, fn, np_fn):
    torch = pytest.importorskip("torch")
    tl_out = fn(torchlight, torchlight.tensor(A), torchlight.tensor(B))
    torch_out = fn(torch, torch.tensor(A), torch.tensor(B))  # the same code runs on both
    np.testing.assert_allclose(tl_out.to_numpy(), torch_out.numpy().astype(np.float64), rtol=1e-12, atol=1e-14)
    # dtypes agree: PyTorch's int64 indices and bool comparisons; float64 for floats (PyTorch makes
    # float32 from Python numbers, as in where(c, 1.0, -1.0), which torchlight holds as float64)
    assert str(tl_out.dtype).split(".")[1] == str(torch_out.dtype).split(".")[1].replace("float32", "float64")


def test_where_selects_without_mixing_inf_and_nan(backend_name):
    a = T([math.inf, -math.inf, math.nan, 1.0], backend_name)
    b = T([math.nan, 2.0, 3.0, -math.inf], backend_name)
    cond = T([1.0, 1.0, 0.0, 0.0], backend_name) > 0
    assert_values(torchlight.where(cond, a, b), [math.inf, -math.inf, 3.0, -math.inf], exact=True)
    assert_values(torchlight.where(~cond, a, b), [math.nan, 2.0, math.nan, 1.0], exact=True)


def test_nan_and_inf_as_pytorch(backend_name):
    x = T([math.nan, math.inf, -2.0], backend_name)
    y = T([1.0, math.nan, 3.0], backend_name)
    assert_values(torchlight.maximum(x, y), [math.nan, math.nan, 3.0], exact=True)
    assert_values(torchlight.minimum(x, y), [math.nan, math.nan, -2.0], exact=True)
    assert_values(x.clamp(-1.0, 1.0), [math.nan, 1.0, -1.0], exact=True)
    assert_values(x.sin(), [math.nan, math.nan, math.sin(-2.0)], exact=True)
    assert_values(x.cos(), [math.nan, math.nan, math.cos(-2.0)], exact=True)
    assert T([1.0], backend_name).var().to_numpy() != T([1.0], backend_name).var().to_numpy()  # 0 / 0: nan
    assert T([1.0], backend_name).var(unbiased=False).item() == 0.0


def test_ties_take_the_first_index(backend_name):
    x = T([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], backend_name)
    assert x.argmax(1).tolist() == [1, 0]
    assert x.argmin(1).tolist() == [0, 2]
    assert x.min(0).indices.tolist() == [0, 1, 1]
    assert x.argmax().item() == 1


def test_allclose_and_isclose():
    a = torchlight.tensor([1.0, 2.0, math.nan])
    b = torchlight.tensor([1.0 + 1e-9, 2.1, math.nan])
    assert torchlight.isclose(a, b).tolist() == [True, False, False]
    assert torchlight.isclose(a, b, equal_nan=True, atol=0.2).tolist() == [True, True, True]
    assert torchlight.isclose(a, b).dtype is torchlight.bool
    assert not torchlight.allclose(a, b) and torchlight.allclose(a[:1], b[:1])
    assert torchlight.allclose(a, b, atol=0.2, equal_nan=True) is True
    assert torchlight.allclose(torchlight.ones(2, 3), torchlight.ones(3))  # broadcasting, as PyTorch
    with pytest.raises(Exception, match="broadcast"):
        torchlight.allclose(torchlight.ones(2), torchlight.ones(3))


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda a: torchlight.cat([]), ValueError, "expected a non-empty list of Tensors"),
        (lambda a: torchlight.cat(a), TypeError, "must be a list or tuple of Tensors"),
        (lambda a: torchlight.cat([a, 1.0]), TypeError, "expected Tensor as element 1"),
        (
            lambda a: torchlight.cat([a, a.T]),
            RuntimeError,
            "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 2 for tensor number 1",
        ),
        (lambda a: torchlight.cat([a, a[0]]), RuntimeError, "same number of dimensions: got 2 and 1"),
        (lambda a: torchlight.cat([a[0, 0], a[0, 0]]), RuntimeError, "zero-dimensional tensor \\(at position 0\\)"),
        (lambda a: torchlight.cat([a, a], dim=2), IndexError, "Dimension out of range"),
        (
            lambda a: torchlight.stack([a, a.T]),
            RuntimeError,
            "stack expects each tensor to be equal size, but got \\[2, 3\\] at entry 0 and \\[3, 2\\] at entry 1",
        ),
        (lambda a: a.repeat(2), RuntimeError, "Number of dimensions of repeat dims can not be smaller"),
        (lambda a: a.repeat(2, -1), RuntimeError, "negative dimension -1"),
        (lambda a: torchlight.clamp(a), RuntimeError, "At least one of 'min' or 'max' must not be None"),
        (lambda a: a.clamp("x"), TypeError, "must be a Tensor or a number"),
        (
            lambda a: a.masked_fill(a[:1, :1].T.repeat(3, 1) > 0, 1.0),
            RuntimeError,
            "must broadcast to the tensor's \\[2, 3\\]",
        ),
        (lambda a: a.masked_fill(a > 0, a), RuntimeError, "0-dimensional value tensor"),
        (lambda a: torchlight.where(1.0, a, a), TypeError, "'condition' must be Tensor"),
        (lambda a: torchlight.sin([1.0]), TypeError, "sin\\(\\): argument 'input' must be Tensor, not list"),
        (lambda a: a.view(2, 3, 1).t(), RuntimeError, "t\\(\\) expects a tensor with <= 2 dimensions, but self is 3D"),
        (lambda a: a.flatten(1, 0), RuntimeError, "start_dim 1 cannot come after end_dim 0"),
        (lambda a: a.argmax(2), IndexError, "Dimension out of range"),
        (lambda a: a.var(dim=5), IndexError, "Dimension out of range"),
        (lambda a: a.to(3), TypeError, "to\\(\\) expected a device, a backend name, a dtype or a Tensor"),
        (lambda a: a.to(device="cpu", memory="x"), TypeError, "unexpected keyword argument 'memory'"),
        (lambda a: int(a.sum()) + [0, 1][a.sum()], TypeError, "only integer tensors of a single element"),
        (lambda a: ~a, TypeError, "only for bool tensors"),
        (lambda a: a.long().requires_grad_(), RuntimeError, "only Tensors of floating point dtype"),
        (
            lambda a: (a * math.nan).long(),
            RuntimeError,
            "cannot convert a tensor holding nan or inf to torchlight.int64",
        ),
        (lambda a: a.requires_grad_().numpy(), RuntimeError, "Use tensor.detach\\(\\).numpy\\(\\) instead"),
    ],
    ids=lambda x: x if isinstance(x, str) and len(x) < 40 else None,
)
def test_errors(backend_name, call, error, match):
    with pytest.raises(error, match=match):
        call(T(A, backend_name))


# -- dtype, device and conversions ----------------------------------------------------------------


def test_dtype_labels_follow_pytorch(backend_name):
    x = T(A, backend_name)
    assert x.dtype is torchlight.float64 and x.is_floating_point()
    assert (x > 0).dtype is torchlight.bool and (x == x).dtype is torchlight.bool and (x != 1).dtype is torchlight.bool
    assert (x <= 0).dtype is torchlight.bool and (x >= 0).all().dtype is torchlight.bool
    mask = x > 0
    assert mask.tolist() == (A > 0).tolist() and mask.sum().dtype is torchlight.int64
    correct = (x.argmax(1) == T([2, 0], backend_name).long()).sum().item()  # PyTorch's accuracy idiom
    assert correct == 2 and isinstance(correct, int)
    i = x.argmax(1)
    assert (
        i.dtype is torchlight.int64
        and x.max(1).indices.dtype is torchlight.int64
        and x.min(0).indices.dtype is torchlight.int64
    )
    # views and copies of integer tensors stay integers; arithmetic gives float64 (docs/pytorch.md)
    r = torchlight.arange(6, backend=backend_name)
    for view in (
        r.view(2, 3),
        r[1:],
        r.view(2, 3).T,
        r.unsqueeze(0).squeeze(0),
        r.clone(),
        r.flatten(),
        r.repeat(2),
        r.detach(),
    ):
        assert view.dtype is torchlight.int64
    assert torchlight.cat([r, r]).dtype is torchlight.int64 and torchlight.stack([r, r]).dtype is torchlight.int64
    assert torchlight.cat([r, r.double()]).dtype is torchlight.float64
    assert (r + 1).dtype is torchlight.float64 and (r * 0.5).tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]
    assert r[3].item() == 3 and isinstance(r[3].item(), int) and ["a", "b", "c", "d"][r[3]] == "d"
    assert isinstance(mask[0, 0].item(), bool) and (~mask).tolist() == (A <= 0).tolist()


def test_conversions(backend_name):
    x = T([[1.7, -1.7], [0.0, 2.0]], backend_name, requires_grad=True)
    assert x.double() is x and x.float() is x and x.to(torchlight.float64) is x and x.type(torchlight.double) is x
    assert x.float().dtype is torchlight.float64  # PyTorch's float32: held as float64
    n = x.long()
    assert n.tolist() == [[1, -1], [0, 2]] and n.dtype is torchlight.int64 and not n.requires_grad
    assert n.type() == "torchlight.LongTensor" and x.type() == "torchlight.DoubleTensor"
    assert x.bool().tolist() == [[True, True], [False, True]] and x.bool().type() == "torchlight.BoolTensor"
    assert n.to(torchlight.float32).dtype is torchlight.float64 and n.double().tolist() == [[1.0, -1.0], [0.0, 2.0]]
    assert n.to(dtype=bool).dtype is torchlight.bool and n.long() is n
    y = torchlight.zeros(1, dtype=torchlight.long)
    assert x.to(y).dtype is torchlight.int64 and x.to(y).backend is y.backend
    assert (
        x.to("cpu") is x and x.cpu() is x and x.to(x.device) is x and x.to(device="cpu", dtype=torchlight.double) is x
    )
    assert x.to(copy=True) is not x and x.to(copy=True).tolist() == x.tolist()
    if backends.get(backend_name) is not backends.get("simple"):
        moved = x.to("simple")
        assert moved.backend.name == "simple" and moved.requires_grad and moved.device == x.device


def test_device_attribute_and_names(backend_name):
    x = T(A, backend_name)
    assert x.device == torchlight.device("cpu") and str(x.device) == "cpu" and x.device.type == "cpu"
    assert repr(x.device) == "device(type='cpu')" and x.device != "cpu"  # as PyTorch: a device is not a str
    assert x.ndim == 2 and x.dim() == 2 and torchlight.numel(x) == 6 and torchlight.is_tensor(x)
    assert torchlight.device("cuda:0") == torchlight.device("cuda", 0) and str(torchlight.device("cuda:0")) == "cuda:0"
    assert torchlight.device("cuda") != torchlight.device("cuda:0")
    if not torchlight.cuda.is_available():
        assert torchlight.cuda.device_count() == 0
        with pytest.raises(backends.BackendUnavailable, match="cuda"):
            x.to("cuda")
    with pytest.raises(RuntimeError, match="Invalid device string"):
        torchlight.device("cuda:x")


def test_numpy_shares_memory_as_pytorch(backend_name):
    x = T(A, backend_name)
    n = x.numpy()
    assert n.dtype == np.float64 and n.tolist() == A.tolist()
    x.add_(1.0)  # PyTorch's tutorial: the array sees the change
    assert n[0, 0] == A[0, 0] + 1.0
    n[1, 2] = -7.0
    assert x[1, 2].item() == -7.0
    assert x.T.numpy().tolist() == x.numpy().T.tolist() and x[:, 1:].numpy().tolist() == x.numpy()[:, 1:].tolist()
    assert x.argmax(1).numpy().dtype == np.int64 and (x > 0).numpy().dtype == np.bool_
    assert T(A, backend_name, requires_grad=True).numpy(force=True).tolist() == A.tolist()
    assert torchlight.ones(2, 3).expand(2, 2, 3).numpy().shape == (2, 2, 3)


def test_repr_shows_integers_and_bools():
    assert repr(torchlight.arange(3)) == "tensor([0, 1, 2])"
    assert repr(torchlight.tensor([1.0, -1.0]) > 0) == "tensor([ True, False])"
    assert repr(torchlight.tensor([1.5])) == "tensor([1.5])"
