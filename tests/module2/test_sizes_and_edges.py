"""Sizes checked as PyTorch checks them, 0-d tensors, comparisons with arrays and complex numbers,
and arguments PyTorch refuses (issue 20, item 6).

- Sizes, element counts and byte counts are 64-bit integers: a size beyond int64 is PyTorch's
  "Overflow when unpacking long long", a view of more than 2**63 - 1 elements (``expand``) its
  "numel: integer multiplication overflow", a new storage of more bytes than an int64 counts its
  "Storage size calculation overflowed with sizes=[...]", each naming the shape, never numpy's
  words or an empty tensor. (Before: ``arange(2**63)`` was an empty tensor and
  ``ones(1).expand(2**62, 4).sum()`` never returned.)
- torchlight holds every tensor in float64, exact for whole numbers up to 2**53 only: larger ints
  given to ``tensor()`` and the factories, or converted to int64, are refused with the reason, not
  silently rounded.
- A 0-d tensor has dims 0 and -1, as in PyTorch: ``squeeze(0)``, ``transpose(0, 0)``, ... give it back.
- ``==`` and ``!=`` compare elementwise with numpy arrays and complex numbers (a Python bool before).
- ``keepdim``, ``requires_grad`` and ``unbiased`` must be bools, ``full``'s and ``randint``'s size a
  tuple, tolerances non-negative, seeds 64-bit ints, gather's index not a bool mask.

Where PyTorch is installed the same calls are made on it, and must be refused (or accepted) alike.
The network-level cases (softmax over a dimension of size 0, convolutions and pooling with huge
strides, losses) are in tests/module4/test_bad_arguments.py.
"""

import math

import numpy as np
import pytest

import torchlight

task2_1 = pytest.mark.task2_1
task2_3 = pytest.mark.task2_3
task2_4 = pytest.mark.task2_4

BIG = 2**40  # ones(BIG, BIG) has 2**80 elements


def _torch():
    return pytest.importorskip("torch")


def _refused_alike(make_ours, make_torch):
    """Both refuse (any exception for PyTorch), and ours with a standard, clear one."""
    torch = _torch()
    with pytest.raises(Exception):  # noqa: B017  (PyTorch's exception types vary: the check is that it refuses)
        make_torch(torch)
    with pytest.raises((RuntimeError, ValueError, TypeError, IndexError)):
        make_ours(torchlight)


# -- element counts and sizes beyond int64 -------------------------------------------------------


@task2_1
@pytest.mark.parametrize("sizes", [(2**62, 4), (2**62, 2), (2**31, 2**31, 2**2)])
def test_expand_refuses_more_elements_than_an_int64_counts(sizes):
    one = torchlight.ones(1)
    shown = ", ".join(map(str, sizes))
    with pytest.raises(RuntimeError, match=rf"numel: integer multiplication overflow.*\[{shown}\]"):
        one.expand(*sizes)  # (it was accepted: numel() said 2**64, and .sum() never returned)
    with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
        one._data.expand(*sizes)
    huge = one.expand(2**63 - 1)  # the largest count is fine, as in PyTorch: a view, no memory
    assert huge.shape == (2**63 - 1,) and huge.numel() == 2**63 - 1
    torch = _torch()
    with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
        torch.ones(1).expand(*sizes)
    assert torch.ones(1).expand(2**63 - 1).numel() == 2**63 - 1


@task2_1
@pytest.mark.parametrize(
    "make",
    [
        lambda tl: tl.ones(2**63),
        lambda tl: tl.zeros((2, 2**64)),
        lambda tl: tl.ones(1).view(2**63),
        lambda tl: tl.ones(1).expand(2**63),
        lambda tl: tl.ones(1).reshape(-(2**63) - 1),
    ],
)
def test_a_size_beyond_int64_is_refused_as_pytorch_refuses_it(make):
    with pytest.raises(TypeError, match=r"Overflow when unpacking long long: the size -?\d{19,}"):
        make(torchlight)
    _refused_alike(make, make)


CREATORS = {
    "ones": lambda tl, *s: tl.ones(*s),
    "zeros": lambda tl, *s: tl.zeros(*s),
    "empty": lambda tl, *s: tl.empty(*s),
    "full": lambda tl, *s: tl.full(s, 1.5),
    "rand": lambda tl, *s: tl.rand(*s),
    "randn": lambda tl, *s: tl.randn(*s),
    "randint": lambda tl, *s: tl.randint(3, s),
    "new_zeros": lambda tl, *s: tl.ones(1).new_zeros(*s),
    "new_ones": lambda tl, *s: tl.ones(1).new_ones(*s),
}


@task2_1
@pytest.mark.parametrize("name", sorted(CREATORS))
@pytest.mark.parametrize("shape", [(BIG, BIG), (2**62, 4), (2**60,)])
def test_a_new_storage_of_more_bytes_than_an_int64_counts_names_its_shape(name, shape):
    shown = ", ".join(map(str, shape))
    with pytest.raises(RuntimeError, match=rf"Storage size calculation overflowed with sizes=\[{shown}\]"):
        CREATORS[name](torchlight, *shape)  # (was numpy's "Maximum allowed dimension exceeded")
    torch = _torch()
    with pytest.raises(RuntimeError):  # (its message for float32, 4 bytes each, may be that it cannot allocate)
        CREATORS[name](torch, *shape)


@task2_1
def test_eye_and_the_like_factories_check_the_storage_too():
    with pytest.raises(RuntimeError, match=rf"Storage size calculation overflowed with sizes=\[{BIG}, {BIG}\]"):
        torchlight.eye(BIG)
    huge = torchlight.ones(1).expand(2**62)  # a valid view, whose copy would not be
    for like in (torchlight.zeros_like, torchlight.ones_like, torchlight.empty_like, torchlight.rand_like):
        with pytest.raises(
            RuntimeError, match=r"Storage size calculation overflowed with sizes=\[4611686018427387904\]"
        ):
            like(huge)


@task2_3
def test_a_result_too_large_for_a_storage_is_refused_before_any_kernel(backend_name):
    tall = torchlight.ones(1, 1, backend=backend_name).expand(2**62, 1)
    wide = torchlight.ones(1, 1, backend=backend_name).expand(1, 4)
    with pytest.raises(
        RuntimeError, match=r"Storage size calculation overflowed with sizes=\[4611686018427387904, 4\]"
    ):
        tall + wide  # broadcasting: each input is a valid view, the result would not be
    with pytest.raises(
        RuntimeError, match=r"Storage size calculation overflowed with sizes=\[4611686018427387904, 1\]"
    ):
        tall.contiguous()
    torch = _torch()
    with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
        torch.ones(1, 1).expand(2**62, 1) + torch.ones(1, 1).expand(1, 4)


@task2_3
@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda tl: tl.zeros(1).repeat(2**62, 4), [2**62, 4]),
        (lambda tl: tl.cat([tl.ones(1).expand(2**62), tl.ones(1).expand(2**62)]), [2**63]),
        (lambda tl: tl.ones(1).expand(2**62).to_numpy(), [2**62]),
    ],
)
def test_joining_or_copying_into_too_large_a_storage_names_its_shape(make, shape):
    # (repeat named its inner expand, cat a size beyond int64, to_numpy numpy's "array is too big")
    shown = ", ".join(map(str, shape))
    with pytest.raises(RuntimeError, match=rf"Storage size calculation overflowed with sizes=\[{shown}\]"):
        make(torchlight)


@task2_1
@pytest.mark.parametrize(
    "make, error, message",
    [
        (
            lambda tl: tl.arange(2**63),
            RuntimeError,
            r"end = 9223372036854775808: value cannot be converted to type int64_t",
        ),
        (
            lambda tl: tl.arange(-(2**63) - 1, 0),
            RuntimeError,
            "value cannot be converted to type int64_t without overflow",
        ),
        (
            lambda tl: tl.arange(0.0, 1e300, 1e-300),
            RuntimeError,
            "value cannot be converted to type int64_t without overflow",
        ),
        (
            lambda tl: tl.arange(2**62),
            RuntimeError,
            r"Storage size calculation overflowed with sizes=\[4611686018427387904\]",
        ),
        (
            lambda tl: tl.linspace(0, 1, 2**63),
            ValueError,
            "Overflow when unpacking long long: steps=9223372036854775808",
        ),
        (
            lambda tl: tl.linspace(0, 1, 2**62),
            RuntimeError,
            r"Storage size calculation overflowed with sizes=\[4611686018427387904\]",
        ),
        (
            lambda tl: tl.randperm(2**63),
            ValueError,
            "Overflow when unpacking long long: argument 'n' = 9223372036854775808",
        ),
        (
            lambda tl: tl.randperm(2**62),
            RuntimeError,
            r"Storage size calculation overflowed with sizes=\[4611686018427387904\]",
        ),
        (lambda tl: tl.eye(2**64), ValueError, "Overflow when unpacking long long"),
    ],
)
def test_counts_of_2_to_the_63_are_refused_not_an_empty_tensor(make, error, message):
    with pytest.raises(error, match=message):  # (arange, linspace and randperm of 2**63 were empty tensors)
        make(torchlight)
    _refused_alike(make, make)


@task2_3
def test_an_int64_arange_takes_its_arguments_as_int64_as_pytorch():
    cases = [(0, 5, 1.5), (0.5, 5, 1.5), (-0.5, 3, 1), (0, 7.9, 2.5)]
    expected = [[0, 1, 2, 3, 4], [0, 1, 2, 3, 4], [0, 1, 2], [0, 2, 4, 6]]  # start, end, step truncated first
    for (start, end, step), values in zip(cases, expected, strict=True):
        got = torchlight.arange(start, end, step, dtype=torchlight.int64)
        assert got.dtype is torchlight.int64 and got.tolist() == values, (start, end, step)
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        torchlight.arange(0, 2.5, 0.5, dtype=torchlight.int64)  # 0.5 as an int64 is 0
    with pytest.raises(RuntimeError, match="dtype bool is not implemented"):
        torchlight.arange(5, dtype=torchlight.bool)
    torch = _torch()
    for (start, end, step), values in zip(cases, expected, strict=True):
        assert torch.arange(start, end, step, dtype=torch.int64).tolist() == values
    _refused_alike(lambda tl: tl.arange(0, 2.5, 0.5, dtype=tl.int64), lambda th: th.arange(0, 2.5, 0.5, dtype=th.int64))
    _refused_alike(lambda tl: tl.arange(5, dtype=tl.bool), lambda th: th.arange(5, dtype=th.bool))


# -- integers beyond float64's exact range --------------------------------------------------------


@task2_1
@pytest.mark.parametrize(
    "make",
    [
        lambda: torchlight.tensor(2**53 + 1),
        lambda: torchlight.tensor([1, 2**53 + 1]),
        lambda: torchlight.tensor([[1, 2], [-(2**53) - 1, 3]]),
        lambda: torchlight.tensor([2**53 + 1], dtype=torchlight.int64),
        lambda: torchlight.tensor(np.array([2**60, 1])),
        lambda: torchlight.tensor([True, 2**60]),
    ],
)
def test_tensor_refuses_ints_that_float64_would_round(make):
    # (tensor([2**53 + 1]) held 2**53, silently)
    with pytest.raises(ValueError, match=r"tensor\(\): the integer -?\d+ is beyond 2\*\*53 in magnitude") as e:
        make()
    assert "dtype=torchlight.float64" in str(e.value) and "Pass it as a float" in str(e.value)
    # up to 2**53 ints are exact, and a floating dtype asked for accepts rounding (as in PyTorch)
    assert torchlight.tensor([2**53, -(2**53)], dtype=torchlight.int64).tolist() == [2**53, -(2**53)]
    assert torchlight.tensor(2**53 + 1, dtype=torchlight.float64).item() == 2.0**53  # asked for: rounded
    assert torchlight.tensor([2**53 + 1.0]).item() == 2.0**53  # a float is rounded by Python already
    assert torchlight.tensor(2**63, dtype=torchlight.float32).item() == 2.0**63
    torch = _torch()
    assert torch.tensor(2**53 + 1, dtype=torch.float64).item() == 2.0**53


@task2_1
@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda tl: tl.tensor(10**400),
            r"Overflow when unpacking long long: the integer 100000000000\.\.\. \(401 digits\)",
        ),
        (
            lambda tl: tl.tensor([1.5, 10**400]),
            r"Overflow when unpacking long long: the integer 100000000000\.\.\. \(401 digits\)",
        ),
        (lambda tl: tl.tensor(2**63), "Overflow when unpacking long long: the integer 9223372036854775808"),
        (
            lambda tl: tl.tensor([[1, 2**70], [3, 4]]),
            "Overflow when unpacking long long: the integer 1180591620717411303424",
        ),
        (
            lambda tl: tl.tensor(10**400, dtype=tl.float64),
            r"100000000000\.\.\. \(401 digits\) is too large for float64",
        ),
    ],
)
def test_tensor_of_an_int_beyond_int64_is_a_clear_error(make, message):
    with pytest.raises(ValueError, match=message):  # (was OverflowError: int too large to convert to float)
        make(torchlight)
    _refused_alike(make, make)


@task2_3
@pytest.mark.parametrize(
    "make, error, message",
    [
        (
            lambda: torchlight.tensor([2.0**60]).long(),
            RuntimeError,
            r"holding 1\.15292150460684\d*e\+18 to torchlight\.int64",
        ),
        (lambda: torchlight.tensor([1e20, 1.0]).to(torchlight.int64), RuntimeError, "exactly only up to 2\\*\\*53"),
        (lambda: torchlight.tensor([2.0**54]).type(torchlight.int64), RuntimeError, "exactly only up to 2\\*\\*53"),
        (
            lambda: torchlight.full((2,), 2**53 + 1),
            ValueError,
            r"full\(\): the integer 9007199254740993 is beyond 2\*\*53",
        ),
        (lambda: torchlight.randint(2**60, (2,)), ValueError, r"randint\(\): the integer 1152921504606846975"),
        (lambda: torchlight.arange(2**60, 2**60 + 2), ValueError, r"arange\(\): the integer 1152921504606846976"),
        (lambda: torchlight.tensor([2.0**60, 1.0], dtype=torchlight.int64), RuntimeError, "to torchlight.int64"),
    ],
)
def test_int64_values_beyond_2_to_the_53_are_refused_not_rounded(make, error, message):
    with pytest.raises(error, match=message):
        make()
    # up to 2**53 they are exact
    assert torchlight.tensor([2.0**53, -(2.0**53)]).long().tolist() == [2**53, -(2**53)]
    assert torchlight.full((1,), 2**53).tolist() == [2**53]
    assert torchlight.arange(2**53 - 2, 2**53 + 1).tolist() == [2**53 - 2, 2**53 - 1, 2**53]
    assert torchlight.full((1,), 2**53 + 1, dtype=torchlight.float64).item() == 2.0**53  # a float: rounded


# -- 0-d tensors: dims 0 and -1 ---------------------------------------------------------------------


ZERO_D_OPS = {
    "squeeze(0)": lambda t: t.squeeze(0),
    "squeeze(-1)": lambda t: t.squeeze(-1),
    "transpose(0, 0)": lambda t: t.transpose(0, 0),
    "transpose(-1, 0)": lambda t: t.transpose(-1, 0),
    "transpose(-1, -1)": lambda t: t.transpose(-1, -1),
    "squeeze(0).squeeze(-1)": lambda t: t.squeeze(0).squeeze(-1),
}


@task2_4
@pytest.mark.parametrize("name", sorted(ZERO_D_OPS))
def test_a_0d_tensor_has_dims_0_and_minus_1(name, backend_name):
    # (squeeze(0) and transpose(0, 0) of a 0-d tensor raised internal IndexErrors)
    x = torchlight.tensor(2.5, backend=backend_name, requires_grad=True)
    out = ZERO_D_OPS[name](x)
    assert out.shape == () and out.item() == 2.5
    (out * 3.0).backward()
    assert x.grad.shape == () and x.grad.item() == 3.0
    torch = _torch()
    assert ZERO_D_OPS[name](torch.tensor(2.5)).shape == ()


@task2_3
def test_flatten_of_a_0d_tensor_checks_its_dims():
    s = torchlight.tensor(2.0)
    assert s.flatten(0).shape == (1,) and s.flatten(-1, 0).shape == (1,)
    for bad in (1, -2):
        with pytest.raises(IndexError, match=rf"expected to be in range of \[-1, 0\], but got {bad}"):
            s.flatten(bad)  # (was accepted)
        with pytest.raises(IndexError, match="Dimension out of range"):
            s.squeeze(bad)
        with pytest.raises(IndexError, match="Dimension out of range"):
            s.transpose(0, bad)
    torch = _torch()
    with pytest.raises(IndexError):
        torch.tensor(2.0).flatten(1)


@task2_1
def test_indexing_a_0d_tensor_says_to_use_item():
    with pytest.raises(IndexError, match=r"a 0-d tensor has no dimension to index: \.item\(\) gives its value"):
        torchlight.tensor(2.0)[0]


# -- == and != with numpy arrays and complex numbers ------------------------------------------------


def _same(got, torch_result):
    assert got.dtype is torchlight.bool and got.shape == tuple(torch_result.shape)
    assert got.tolist() == torch_result.tolist()


@task2_3
@pytest.mark.parametrize(
    "other",
    [
        np.array([1.0, 2.0, 1.0]),
        np.array([1, 0, 1]),
        np.array([True, False, True]),
        np.array(1.0),
        np.ones((2, 1, 3)),
        np.array([1j, 1.0, 2.0 + 0j]),
        1j,
        complex(1.0, 0.0),
        np.complex128(1.0 + 0.5j),
    ],
    ids=repr,
)
def test_eq_compares_elementwise_with_arrays_and_complex_numbers(other, backend_name):
    x = torchlight.tensor([1.0, 2.0, 2.0], backend=backend_name)
    equal, differ = x == other, x != other  # (a single Python bool before)
    assert isinstance(equal, torchlight.Tensor) and isinstance(differ, torchlight.Tensor)
    assert equal.backend is x.backend
    expected = np.asarray(np.array([1.0, 2.0, 2.0]) == other)
    assert equal.tolist() == expected.tolist() and differ.tolist() == (~expected).tolist()
    if isinstance(other, np.ndarray):
        reflected = other == x  # numpy defers to the tensor
        assert isinstance(reflected, torchlight.Tensor) and reflected.tolist() == expected.tolist()
    torch = _torch()
    _same(equal, torch.tensor([1.0, 2.0, 2.0]) == (torch.from_numpy(other) if isinstance(other, np.ndarray) else other))


@task2_3
def test_comparisons_pytorch_refuses_or_answers_with_a_bool_stay_so():
    x = torchlight.tensor([1.0, 2.0])
    for other in ([1.0, 2.0], "a", None, np.array(["a", "b"])):
        assert (x == other) is False and (x != other) is True  # Python's own answer, as PyTorch's
    with pytest.raises(TypeError):
        x < np.array([1.0, 2.0])  # noqa: B015  (PyTorch: '<' not supported between Tensor and ndarray)
    with pytest.raises(TypeError):
        x < 1j  # noqa: B015  (no order on complex numbers)
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        x == np.ones(3)  # noqa: B015


# -- flags, sizes and tolerances PyTorch refuses ----------------------------------------------------

REDUCTIONS = {
    "sum": lambda t, **k: t.sum(1, **k),
    "mean": lambda t, **k: t.mean(1, **k),
    "max": lambda t, **k: t.max(1, **k),
    "min": lambda t, **k: t.min(1, **k),
    "argmax": lambda t, **k: t.argmax(1, **k),
    "argmin": lambda t, **k: t.argmin(1, **k),
    "var": lambda t, **k: t.var(1, **k),
    "std": lambda t, **k: t.std(1, **k),
    "any": lambda t, **k: t.any(1, **k),
}


@task2_3
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("keepdim", [1, "yes", None, 0.0], ids=repr)
def test_keepdim_must_be_a_bool(name, keepdim):
    t = torchlight.ones(2, 3)
    with pytest.raises(TypeError, match=r"argument 'keepdim' must be bool"):  # (was read as true or false)
        REDUCTIONS[name](t, keepdim=keepdim)
    assert REDUCTIONS[name](t, keepdim=np.True_) is not None  # numpy's bools are bools
    torch = _torch()
    with pytest.raises(TypeError):
        REDUCTIONS[name](torch.ones(2, 3), keepdim=keepdim)


@task2_3
@pytest.mark.parametrize("flag", [1, "yes", 0.0], ids=repr)
def test_requires_grad_and_unbiased_must_be_bools(flag):
    for make in (
        lambda: torchlight.zeros(2, requires_grad=flag),
        lambda: torchlight.ones(2, requires_grad=flag),
        lambda: torchlight.tensor([1.0], requires_grad=flag),
        lambda: torchlight.rand(2, requires_grad=flag),
        lambda: torchlight.ones(2).requires_grad_(flag),
        lambda: torchlight.ones(2, 3).var(1, unbiased=flag),
    ):
        with pytest.raises(TypeError, match=r"argument '(requires_grad|unbiased)' must be bool"):
            make()
    assert not torchlight.zeros(2, requires_grad=None).requires_grad  # None: the default, as PyTorch
    torch = _torch()
    with pytest.raises(TypeError):
        torch.zeros(2, requires_grad=flag)
    assert not torch.zeros(2, requires_grad=None).requires_grad


@task2_3
def test_full_and_randint_take_a_tuple_of_sizes_as_pytorch():
    with pytest.raises(TypeError, match=r"full\(\): argument 'size' must be a tuple of ints, not int \(write \(2,\)"):
        torchlight.full(2, 1.0)
    with pytest.raises(TypeError, match=r"randint\(\): argument 'size' must be a tuple of ints, not int"):
        torchlight.randint(5, 3)
    assert torchlight.full([2], 1.0).shape == (2,) and torchlight.randint(5, [3]).shape == (3,)
    _refused_alike(lambda tl: tl.full(2, 1.0), lambda th: th.full(2, 1.0))
    _refused_alike(lambda tl: tl.randint(5, 3), lambda th: th.randint(5, 3))


@task2_3
@pytest.mark.parametrize("tolerance", [{"rtol": -1e-5}, {"atol": -1.0}, {"rtol": math.nan}], ids=repr)
def test_closeness_tolerances_must_be_non_negative(tolerance):
    a = torchlight.ones(2)
    name = next(iter(tolerance))
    for fn in (torchlight.isclose, torchlight.allclose):
        with pytest.raises(RuntimeError, match=rf"{name} must be greater than or equal to zero"):
            fn(a, a, **tolerance)  # (was accepted)
    torch = _torch()
    with pytest.raises(RuntimeError, match=rf"{name} must be greater than or equal to zero"):
        torch.isclose(torch.ones(2), torch.ones(2), **tolerance)


@task2_3
def test_a_seed_is_a_64_bit_int_as_pytorch():
    torchlight.manual_seed(-1)  # as PyTorch: -1 counts as 2**64 - 1 (numpy refused it)
    a = torchlight.rand(3).tolist()
    torchlight.manual_seed(2**64 - 1)
    assert torchlight.rand(3).tolist() == a
    assert torchlight.rand(2, seed=-5).tolist() == torchlight.rand(2, seed=2**64 - 5).tolist()
    with pytest.raises(ValueError, match="Overflow when unpacking long long: the seed 18446744073709551616"):
        torchlight.manual_seed(2**64)  # (was accepted)
    with pytest.raises(TypeError, match="the seed must be an int, got str"):
        torchlight.manual_seed("1")
    _refused_alike(lambda tl: tl.manual_seed(2**64), lambda th: th.manual_seed(2**64))


@task2_4
def test_gather_refuses_a_bool_index():
    t = torchlight.ones(2, 3)
    mask = torchlight.tensor([[1.0], [0.0]]) == 1.0
    with pytest.raises(RuntimeError, match="gather\\(\\): Expected dtype int64 for index, got a bool tensor"):
        t.gather(1, mask)  # (was read as positions 1 and 0)
    assert t.gather(1, mask.long()).shape == (2, 1)
    _refused_alike(
        lambda tl: tl.ones(2, 3).gather(1, tl.tensor([[True], [False]], dtype=tl.bool)),
        lambda th: th.ones(2, 3).gather(1, th.tensor([[True], [False]])),
    )
