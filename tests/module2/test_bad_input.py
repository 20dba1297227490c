"""Bad arguments are refused with a clear, standard exception before any kernel sees them: shapes
(only non-negative ints, and one -1 where view infers a size or expand keeps one), the data given to
``tensor()`` (numbers only), ``dim=`` arguments (PyTorch's "Dimension out of range") and gather's
index (whole numbers in range). PyTorch is the reference for what is accepted and for the wording.

Tests taking ``backend_name`` run again on the fast backend in tests/module3/test_fast_bad_input.py.
"""

import math
from fractions import Fraction

import numpy as np
import pytest

import torchlight
from torchlight.tensor_data import TensorData

task2_1 = pytest.mark.task2_1
task2_3 = pytest.mark.task2_3
task2_4 = pytest.mark.task2_4


# -- shapes -------------------------------------------------------------------------------------

NOT_INTS = [2.0, 2.5, True, "2", None]


def _shape_takers():
    # every place a shape is given: creation, the new_* methods, view, reshape, expand
    six = lambda: torchlight.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])  # noqa: E731
    return {
        "zeros": lambda *s: torchlight.zeros(*s),
        "ones": lambda *s: torchlight.ones(*s),
        "rand": lambda *s: torchlight.rand(*s, seed=0),
        "new_zeros": lambda *s: six().new_zeros(*s),
        "new_ones": lambda *s: six().new_ones(*s),
        "view": lambda *s: six().view(*s),
        "reshape": lambda *s: six().reshape(*s),
        "expand": lambda *s: torchlight.ones(1).expand(*s),
    }


@task2_1
@pytest.mark.parametrize("name", sorted(_shape_takers()))
@pytest.mark.parametrize("bad", NOT_INTS, ids=repr)
def test_a_size_must_be_an_int(name, bad):
    make = _shape_takers()[name]
    for args in [(bad,), (bad, 3), ((3, bad),)]:  # f(2, 3) and f((2, 3)) alike
        with pytest.raises(TypeError, match=rf"a shape holds integers, got {type(bad).__name__}: {bad!r}"):
            make(*args)


@task2_1
@pytest.mark.parametrize("name", ["zeros", "ones", "rand", "new_zeros", "new_ones"])
def test_creation_refuses_negative_sizes(name):
    make = _shape_takers()[name]
    for shape, size in [((-1,), -1), ((2, -3), -3), ((0, -2), -2)]:
        with pytest.raises(RuntimeError, match=rf"negative dimension {size}: \[{', '.join(map(str, shape))}\]"):
            make(*shape)
    assert make(2, 0).shape == (2, 0) and make(()).shape == ()  # zero sizes and 0-d are fine


@task2_1
def test_tensor_data_refuses_sizes_that_are_not_counts():
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        TensorData(np.zeros(4), (-1,))
    with pytest.raises(TypeError, match="got float: 2.0"):
        TensorData(np.zeros(4), (2.0, 2))  # not silently int(2.0)
    with pytest.raises(TypeError, match="got bool: True"):
        TensorData.zeros((True,))


@task2_1
@pytest.mark.parametrize(
    "shape, message",
    [
        ((-2, -3), r"invalid shape dimension -2 at index 0 of shape \[-2, -3\]"),  # product 6: was accepted
        ((3, -2), r"invalid shape dimension -2 at index 1 of shape \[3, -2\]"),
        ((-1, -1, 6), r"only one dimension can be inferred"),
        ((-1, 4), r"shape '\[-1, 4\]' is invalid for input of size 6"),
        ((-1, 0), r"shape '\[-1, 0\]' is invalid for input of size 6"),
        ((4, 2), r"shape '\[4, 2\]' is invalid for input of size 6"),
    ],
    ids=str,
)
def test_view_refuses_a_negative_size_other_than_one_inferred(shape, message):
    t = torchlight.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    with pytest.raises(RuntimeError, match=message):
        t.view(*shape)
    with pytest.raises(RuntimeError, match=message):
        t.reshape(shape)
    with pytest.raises(RuntimeError, match=message):
        t._data.view(*shape)


@task2_1
def test_view_infers_one_size():
    t = torchlight.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    assert t.view(3, -1).shape == (3, 2) and t.view(-1).shape == (6,) and t.view(-1, 1, 3).shape == (2, 1, 3)
    assert t.view(3, -1).tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    empty = torchlight.zeros(0)
    assert empty.view(2, -1).shape == (2, 0)  # as PyTorch: 0 / 2 = 0
    with pytest.raises(RuntimeError, match="unspecified dimension size -1 can be any value and is ambiguous"):
        empty.view(-1, 0)


@task2_1
def test_reshape_refuses_a_bad_shape_before_copying(monkeypatch):
    t = torchlight.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).permute(1, 0)  # not contiguous: reshape copies

    class NoCopy:
        @staticmethod
        def apply(*args):
            raise AssertionError("reshape copied (ran a kernel) before checking its shape")

    monkeypatch.setattr(torchlight.ops, "Copy", NoCopy)
    with pytest.raises(RuntimeError, match="invalid shape dimension -2"):
        t.reshape(-2, -3)


@task2_1
@pytest.mark.parametrize(
    "start, target, message",
    [
        ((1, 1), (-2, -3), r"invalid size -2 at dimension 0 of \[-2, -3\]"),  # was a view of memory not there
        ((1, 1), (2, -3), r"invalid size -3 at dimension 1"),
        ((3,), (-2, 3), r"invalid size -2 at dimension 0"),
        ((2, 3), (-1, 2, 3), r"\(-1\) isn't allowed in a leading, non-existing dimension 0"),
        ((2, 3), (4,), r"number of sizes provided \(1\) must be greater or equal"),
    ],
    ids=str,
)
def test_expand_refuses_negative_sizes_but_minus_one_keeps_a_size(start, target, message):
    t = torchlight.ones(*start)
    with pytest.raises(RuntimeError, match=message):
        t.expand(*target)
    with pytest.raises(RuntimeError, match=message):
        t._data.expand(*target)


@task2_1
def test_expand_minus_one_and_zero_sizes_as_pytorch():
    t = torchlight.tensor([[1.0], [2.0]])
    assert t.expand(-1, 3).tolist() == [[1.0] * 3, [2.0] * 3]
    assert t.expand(4, -1, 2).shape == (4, 2, 2)
    assert torchlight.ones(1).expand(0).shape == (0,) and torchlight.ones(3).expand(0, 3).shape == (0, 3)


@task2_1
@pytest.mark.parametrize(
    "order, error, message",
    [
        ((0.0, 1), TypeError, "a dimension must be an integer, got float: 0.0"),
        ((True, 0), TypeError, "a dimension must be an integer, got bool: True"),
        ((0, 0), RuntimeError, "repeats a dimension"),
        ((0,), RuntimeError, r"the order \(0,\) has 1 dimensions but the tensor has 2"),
        ((0, 2), IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
    ],
    ids=str,
)
def test_permute_order_names_each_dimension_once(order, error, message):
    t = torchlight.ones(2, 3)
    with pytest.raises(error, match=message):
        t.permute(*order)
    assert t.permute(-1, 0).shape == (3, 2)


# -- tensor(data) -------------------------------------------------------------------------------


@task2_1
@pytest.mark.parametrize(
    "data, named",
    [
        (None, "NoneType: None"),  # was nan
        ("1.5", "str: '1.5'"),  # was 1.5
        ([1, "a"], "str: 'a'"),
        ([[1.0, 2.0], [3.0, "4"]], "str: '4'"),
        ([1.0, None], "NoneType: None"),
        (b"1", "bytes: b'1'"),
        (1 + 2j, r"complex: \(1\+2j\)"),
        ({1: 2}, r"dict: \{1: 2\}"),
        (np.array(["1.5"]), "numpy array of dtype <U3"),
    ],
    ids=repr,
)
def test_tensor_refuses_what_is_not_a_number(data, named):
    with pytest.raises(TypeError, match=rf"tensor\(\): expected .*{named}"):
        torchlight.tensor(data)


@task2_1
def test_tensor_refuses_an_object_naming_its_type():
    with pytest.raises(TypeError, match="got object: <object object"):
        torchlight.tensor(object())
    with pytest.raises(TypeError, match="got generator"):
        torchlight.tensor(x for x in [1.0])


@task2_1
def test_tensor_converts_bools_ints_and_other_reals_to_float64():
    cases = [
        (True, 1.0, ()),
        ([True, False, 2], [1.0, 0.0, 2.0], (3,)),
        (np.array([1, 2], dtype=np.int32), [1.0, 2.0], (2,)),
        (np.array([True, False]), [1.0, 0.0], (2,)),
        (np.float32(0.5), 0.5, ()),
        ([Fraction(1, 4), 2], [0.25, 2.0], (2,)),
        ([torchlight.tensor(1.5), torchlight.tensor(2.0)], [1.5, 2.0], (2,)),
    ]
    for data, values, shape in cases:
        t = torchlight.tensor(data)
        assert t.shape == shape and t.tolist() == values, data
        assert t.to_numpy().dtype == np.float64


@task2_1
def test_tensor_copies_an_array_and_ragged_lists_stay_a_value_error():
    array = np.array([1.0, 2.0])
    t = torchlight.tensor(array)
    array[0] = 9.0
    assert t.tolist() == [1.0, 2.0], "tensor() shares the caller's array (PyTorch copies)"
    with pytest.raises(ValueError, match="nested lists must be rectangular"):
        torchlight.tensor([[1.0], [2.0, 3.0]])


# -- dim= arguments -----------------------------------------------------------------------------


@task2_3
def test_every_dim_argument_is_checked_the_same_way(backend_name):
    scalar = torchlight.tensor(2.0, backend=backend_name)
    matrix = torchlight.ones(2, 3, backend=backend_name)
    message = r"Dimension out of range \(expected to be in range of \[{}, {}\], but got {}\)"
    for t, low, high in [(scalar, -1, 0), (matrix, -2, 1)]:
        for bad in (high + 1, 5, low - 1):
            for call in (t.max, t.sum, t.mean):
                with pytest.raises(IndexError, match=message.format(low, high, bad)):
                    call(bad)
            with pytest.raises(IndexError, match=message.format(low, high, bad)):
                t.max(bad, keepdim=True)  # was accepted by a 0-d tensor
    for dim in (0, -1):  # a 0-d tensor has dims 0 and -1, as in PyTorch
        values, indices = scalar.max(dim)
        assert values.item() == 2.0 and indices.item() == 0.0 and values.shape == ()
    with pytest.raises(TypeError, match="a dimension must be an integer, got float: 0.0"):
        matrix.sum(0.0)
    with pytest.raises(RuntimeError, match="names a dimension more than once"):
        matrix.sum((0, -2))


# -- gather's index -----------------------------------------------------------------------------


@task2_3
@pytest.mark.parametrize(
    "value, error, message",
    [
        (math.inf, RuntimeError, r"whole numbers \(positions along dimension 1\), got inf at index position \[1, 0\]"),
        (-math.inf, RuntimeError, r"got -inf at index position \[1, 0\]"),
        (math.nan, RuntimeError, r"got nan at index position \[1, 0\]"),
        (0.5, RuntimeError, r"got 0.5 at index position \[1, 0\]"),
        (
            3.0,
            IndexError,
            r"index 3 is out of bounds for dimension 1 with size 3 \(gather\(\): at index position \[1, 0\]",
        ),
        (-1.0, IndexError, r"index -1 is out of bounds for dimension 1 with size 3"),
        (1e300, IndexError, r"index 1000000\d+ is out of bounds for dimension 1 with size 3"),  # no OverflowError
    ],
    ids=repr,
)
def test_gather_index_values_are_positions_in_range(backend_name, value, error, message):
    a = torchlight.zeros(2, 3, backend=backend_name)
    index = torchlight.tensor([[0.0], [value]], backend=backend_name)
    with pytest.raises(error, match=message):
        a.gather(1, index)


@task2_3
def test_gather_with_0d_input_or_index_as_pytorch(backend_name):
    t = lambda x: torchlight.tensor(x, backend=backend_name)  # noqa: E731
    out = t(3.0).gather(0, t(0.0))  # was "tuple index out of range"
    assert out.shape == () and out.item() == 3.0
    assert t(3.0).gather(-1, t([0.0, 0.0])).tolist() == [3.0, 3.0]
    out = t([3.0, 4.0]).gather(0, t(1.0))
    assert out.shape == () and out.item() == 4.0
    with pytest.raises(IndexError, match="index 1 is out of bounds for dimension 0 with size 1"):
        t(3.0).gather(0, t(1.0))
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)"):
        t(3.0).gather(1, t(0.0))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        t([[3.0]]).gather(0, t(0.0))


@task2_4
def test_gather_gradients_with_0d_input_or_index(backend_name):
    from torchlight.autograd import gradcheck

    t = lambda x: torchlight.tensor(x, backend=backend_name, requires_grad=True)  # noqa: E731
    index = torchlight.tensor([0.0, 0.0, 0.0], backend=backend_name)
    assert gradcheck(lambda a: a.gather(0, index), (t(3.0),))
    a = t(3.0)
    (a.gather(0, index) * torchlight.tensor([1.0, 2.0, 4.0], backend=backend_name)).sum().backward()
    assert a.grad.shape == () and a.grad.item() == 7.0
    assert gradcheck(lambda a: a.gather(0, torchlight.tensor(1.0, backend=backend_name)), (t([3.0, 4.0, 5.0]),))
    b = t([3.0, 4.0, 5.0])
    b.gather(0, torchlight.tensor(1.0, backend=backend_name)).backward()
    assert b.grad.tolist() == [0.0, 1.0, 0.0]


@task2_3
def test_bad_arguments_match_pytorch_in_kind():
    torch = pytest.importorskip("torch")
    # each call fails in PyTorch and here with the same exception type (or succeeds in both)
    cases = [
        (lambda m: m.ones(6).view(-2, -3), RuntimeError),
        (lambda m: m.ones(6).view(-1, -1), RuntimeError),
        (lambda m: m.zeros(0).view(-1, 0), RuntimeError),
        (lambda m: m.zeros(-1), RuntimeError),
        (lambda m: m.zeros(2.5), TypeError),
        (lambda m: m.zeros(True), TypeError),
        (lambda m: m.ones(2, 3).permute(0, 2), IndexError),
        (lambda m: m.ones(2, 3).permute(0, 0), RuntimeError),
        (lambda m: m.ones(2, 3).expand(-1, 2, 3), RuntimeError),
        (lambda m: m.tensor("1.5"), TypeError),
        (lambda m: m.tensor([1, "a"]), TypeError),
        (lambda m: m.tensor(2.0).max(5), IndexError),
        (lambda m: m.tensor(2.0).sum(5), IndexError),
        (lambda m: m.ones(2, 2).sum((0, 0)), RuntimeError),
        (lambda m: m.tensor(3.0).gather(1, m.tensor(0)), IndexError),
    ]
    for call, error in cases:
        for module in (torch, torchlight):
            with pytest.raises(error):
                call(module)
