"""Task 3.4: the cuda backend's map, zip and reduce kernels give the simple backend's answers.

They run in numba's CUDA simulator (tests/conftest.py), with the small blocks that
``torchlight/backends/cuda.py`` uses there; some cases also run larger blocks (a deeper tree in
each reduction, more lines per block) and the path that splits long lines over several blocks.
Elementwise results must equal simple's to 1e-12 relative (a GPU's exp and sin may round otherwise
than the CPU's); sums and products to the reassociation tolerance (the tree adds in another order);
max exactly.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import torchlight
from torchlight import Tensor, backends, scalar
from torchlight.tensor_data import TensorData

from .strategies import LAYOUTS, broadcast_shapes, floats, layout_of, shapes

pytestmark = pytest.mark.task3_4

try:
    CUDA = backends.get("cuda")
except backends.BackendUnavailable as e:  # (the suite runs numba's simulator: tests/conftest.py)
    pytest.skip(str(e), allow_module_level=True)
SIMPLE = backends.get("simple")
from torchlight.backends import cuda as kernels  # noqa: E402  (imported once the backend is known to run)

EXAMPLES = settings(max_examples=4)  # each example launches kernels in the simulator: milliseconds each


def close(cuda_result, simple_result, rtol=1e-12, atol=0.0):
    """Equal to rtol (nan where nan), shape included; the cuda result's storage still on the device."""
    assert type(cuda_result._data.storage) is CUDA.storage_type
    a, b = cuda_result.to_numpy(), simple_result.to_numpy()
    assert a.shape == b.shape, f"cuda's result has shape {a.shape}, the simple backend's {b.shape}"
    np.testing.assert_allclose(
        a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg="cuda's result differs from simple's"
    )


def summed_close(cuda_result, simple_result, values, dim):
    """For sums: equal up to reassociation, relative to the sum of magnitudes along the line."""
    scale = np.abs(values).sum(axis=dim, keepdims=True) if values.size else 0.0
    close(cuda_result, simple_result, rtol=1e-12, atol=float(np.max(scale, initial=0.0)) * 1e-14)


@st.composite
def pair(draw, shape=None, elements=None, layouts=LAYOUTS):
    """The same values as a cuda tensor and a simple tensor, in the same drawn layout."""
    shape = draw(shapes(max_dims=3, max_side=4)) if shape is None else shape
    n = math.prod(shape)
    values = np.array(
        draw(st.lists(floats(-5, 5) if elements is None else elements, min_size=n, max_size=n)), dtype=np.float64
    ).reshape(shape)
    layout = draw(st.sampled_from(layouts))
    order = draw(st.permutations(range(len(shape)))) if shape else None
    return Tensor(layout_of(values, layout, order), CUDA), Tensor(layout_of(values, layout, order), SIMPLE), values


MAPS = [scalar.neg, scalar.exp, scalar.sigmoid, scalar.relu, scalar.inv, scalar.log]
ZIPS = [scalar.add, scalar.mul, scalar.div, scalar.max, scalar.lt, scalar.eq, scalar.relu_back]


@pytest.mark.parametrize("fn", MAPS, ids=lambda f: f.__name__)
@EXAMPLES
@given(data=st.data())
def test_map_equals_simple_in_every_layout(fn, data):
    a_cuda, a_simple, _ = data.draw(pair())
    close(CUDA.map(fn)(a_cuda), SIMPLE.map(fn)(a_simple))
    # and always a view whose elements are not one run of storage: the kernel's indexing path
    shape = data.draw(shapes(min_dims=1, max_dims=3, min_side=2, max_side=3))
    a_cuda, a_simple, _ = data.draw(pair(shape, layouts=["permuted", "strided"]))
    close(CUDA.map(fn)(a_cuda), SIMPLE.map(fn)(a_simple))


@pytest.mark.parametrize("fn", ZIPS, ids=lambda f: f.__name__)
@EXAMPLES
@given(data=st.data())
def test_zip_equals_simple_on_broadcast_strided_inputs(fn, data):
    shape_a, shape_b = data.draw(broadcast_shapes(max_dims=3, max_side=4))
    elements = st.sampled_from([-1.0, 0.0, 0.5, 2.0]) if fn is scalar.eq else floats(-5, 5)
    a_cuda, a_simple, _ = data.draw(pair(shape_a, elements))
    b_cuda, b_simple, _ = data.draw(pair(shape_b, elements))
    close(CUDA.zip(fn)(a_cuda, b_cuda), SIMPLE.zip(fn)(a_simple, b_simple))
    close(CUDA.zip(fn)(b_cuda, a_cuda), SIMPLE.zip(fn)(b_simple, a_simple))


def test_map_and_zip_write_every_element_of_a_larger_tensor_in_every_layout():
    # More elements than the simulator's threads: each thread loops over several; permuted and
    # strided views and a broadcast row take the indexing path, contiguous ones the fast path.
    values = np.random.default_rng(3).standard_normal((3, 4, 5))
    row = np.random.default_rng(4).standard_normal((1, 5))
    for layout in LAYOUTS:
        a_cuda, a_simple = (
            Tensor(layout_of(values, layout, (2, 0, 1)), CUDA),
            Tensor(layout_of(values, layout, (2, 0, 1)), SIMPLE),
        )
        close(CUDA.map(scalar.sigmoid)(a_cuda), SIMPLE.map(scalar.sigmoid)(a_simple))
        r_cuda, r_simple = Tensor.from_numpy(row, CUDA), Tensor.from_numpy(row, SIMPLE)
        close(CUDA.zip(scalar.mul)(a_cuda, r_cuda), SIMPLE.zip(scalar.mul)(a_simple, r_simple))
        close(CUDA.zip(scalar.sub)(r_cuda, a_cuda), SIMPLE.zip(scalar.sub)(r_simple, a_simple))


def test_map_broadcasts_into_a_strided_out():
    big = torchlight.zeros(4, 6, backend=CUDA)
    window = big[1:3, ::2]  # a view: out's strides are (6, 2), its offset 6
    CUDA.map(scalar.neg)(torchlight.tensor([1.0, 2.0, 3.0], backend=CUDA), out=window)
    expected = np.zeros((4, 6))
    expected[1:3, ::2] = [[-1.0, -2.0, -3.0]] * 2
    np.testing.assert_array_equal(big.to_numpy(), expected)
    CUDA.zip(scalar.add)(window, torchlight.tensor([[10.0], [20.0]], backend=CUDA), out=window)
    expected[1:3, ::2] += [[10.0], [20.0]]
    np.testing.assert_array_equal(big.to_numpy(), expected)
    # a column and a middle dimension of size 1, broadcast: each out element reads its own row
    column = np.array([[1.0], [2.0], [3.0]])
    out = torchlight.zeros(3, 4, backend=CUDA)
    CUDA.map(scalar.neg)(torchlight.tensor(column, backend=CUDA), out=out)
    np.testing.assert_array_equal(out.to_numpy(), -np.broadcast_to(column, (3, 4)))
    middle = np.arange(6.0).reshape(2, 1, 3)
    out = torchlight.zeros(2, 4, 3, backend=CUDA).permute(1, 0, 2)[:, :, :]  # a permuted out of shape (4, 2, 3)
    CUDA.map(scalar.id)(torchlight.tensor(middle.reshape(2, 3), backend=CUDA), out=out)
    np.testing.assert_array_equal(out.to_numpy(), np.broadcast_to(middle.reshape(2, 3), (4, 2, 3)))


def test_zero_dim_and_empty_tensors():
    x = torchlight.tensor(2.5, backend=CUDA)
    checks = [
        ("map(neg) of the 0-d 2.5", CUDA.map(scalar.neg)(x).item(), -2.5),
        (
            "zip(mul) of the 0-d 2.5 and [1.0, 2.0]",
            CUDA.zip(scalar.mul)(x, torchlight.tensor([1.0, 2.0], backend=CUDA)).tolist(),
            [2.5, 5.0],
        ),
        ("the sum of the 0-d 2.5 along dim 0", CUDA.reduce(scalar.add, 0.0)(x, 0).item(), 2.5),
    ]
    empty = torchlight.zeros(0, 3, backend=CUDA)
    checks += [
        ("the shape of map(exp) of a (0, 3) tensor", CUDA.map(scalar.exp)(empty).shape, (0, 3)),
        (
            "the shape of zip(add) of a (0, 3) and a (3,) tensor",
            CUDA.zip(scalar.add)(empty, torchlight.ones(3, backend=CUDA)).shape,
            (0, 3),
        ),
        (
            "the sum along dim 0 of a (0, 3) tensor (start: 0.0)",
            CUDA.reduce(scalar.add, 0.0)(empty, 0).tolist(),
            [[0.0, 0.0, 0.0]],
        ),
        (
            "the shape of the max along dim 1 of a (0, 3) tensor",
            CUDA.reduce(scalar.max, -math.inf)(empty, 1).shape,
            (0, 1),
        ),
    ]
    for what, got, want in checks:
        assert got == want, f"{what}: {got}, not {want}"


def test_division_by_zero_and_domain_edges_give_inf_and_nan():
    a = torchlight.tensor([1.0, -1.0, 0.0], backend=CUDA)
    zero = torchlight.zeros(3, backend=CUDA)
    result = CUDA.zip(scalar.div)(a, zero).to_numpy()
    assert result[0] == math.inf and result[1] == -math.inf and math.isnan(result[2])
    assert CUDA.map(scalar.inv)(zero).tolist() == [math.inf] * 3
    assert CUDA.map(scalar.log)(torchlight.tensor([0.0, -1.0], backend=CUDA)).to_numpy().tolist()[0] == -math.inf


REDUCTIONS = [(scalar.add, 0.0), (scalar.mul, 1.0), (scalar.max, -math.inf)]


@pytest.mark.parametrize("fn, start", REDUCTIONS, ids=["add", "mul", "max"])
@EXAMPLES
@given(data=st.data())
def test_reduce_equals_simple_along_every_dim(fn, start, data):
    shape = data.draw(shapes(min_dims=1, max_dims=3, max_side=6))
    elements = floats(0.5, 1.5) if fn is scalar.mul else None  # (products of small or large values underflow)
    a_cuda, a_simple, values = data.draw(pair(shape, elements))
    for dim in range(len(shape)):
        got, want = CUDA.reduce(fn, start)(a_cuda, dim), SIMPLE.reduce(fn, start)(a_simple, dim)
        if fn is scalar.max:
            close(got, want, rtol=0.0)  # a maximum is one of the values: exact
        elif fn is scalar.add:
            summed_close(got, want, values, dim)
        else:
            close(got, want, rtol=1e-13)


def _lines(values, dim, fn, start):
    cuda_out = CUDA.reduce(fn, start)(Tensor.from_numpy(values, CUDA), dim)
    return cuda_out, SIMPLE.reduce(fn, start)(Tensor.from_numpy(values, SIMPLE), dim)


@pytest.mark.parametrize("threads, lines", [(2, 2), (8, 2), (16, 1)], ids=["2x2", "8x2", "16x1"])
def test_every_line_length_against_the_tree(monkeypatch, threads, lines):
    # Lines shorter than, as long as and longer than the threads of a line (values per thread: one,
    # or several), with blocks of one or several lines: the tree's every step and the lines past
    # the end of out in the last block.
    monkeypatch.setattr(kernels, "LINE_THREADS", threads)
    monkeypatch.setattr(kernels, "REDUCE_THREADS", threads * lines)
    rng = np.random.default_rng(threads)
    for n in (1, 2, 3, threads - 1, threads, threads + 1, 2 * threads + 3):
        if n < 1:
            continue
        values = rng.standard_normal((3, n))
        got, want = _lines(values, 1, scalar.max, -math.inf)
        close(got, want, rtol=0.0)
        got, want = _lines(values, 1, scalar.add, 0.0)
        summed_close(got, want, values, 1)
        got, want = _lines(values.T.copy(), 0, scalar.add, 0.0)  # the lines a stride apart
        summed_close(got, want, values.T, 0)


def test_start_is_folded_in_once_per_line():
    # start need not be fn's identity: the answer is fn(start, fold of the line), as on simple
    values = np.arange(1.0, 12.0).reshape(1, 11)
    got, want = _lines(values, 1, scalar.add, 5.0)
    assert got.tolist() == want.tolist() == [[71.0]], f"the sum of 1..11 from start 5.0: {got.tolist()}, not [[71.0]]"
    got, want = _lines(values, 1, scalar.max, 100.0)
    assert got.tolist() == want.tolist() == [[100.0]], (
        f"the max of 1..11 from start 100.0: {got.tolist()}, not [[100.0]]"
    )


def test_reordered_sums_stay_within_rounding_of_the_sequential_fold():
    # 1e16 + 1 - 1e16: the sequential fold gives 1 (or 2), a tree 0, 1 or 2: all within 2 units of
    # the magnitude 2e16 times eps; the tree must not lose a value (which would be off by 1e16).
    values = np.array([[1e16, 1.0, -1e16, 1.0, 3.0], [1.0, 1e16, 1.0, -1e16, 3.0]])
    got, _ = _lines(values, 1, scalar.add, 0.0)
    assert np.all(np.abs(got.to_numpy().ravel() - 5.0) <= 2.0)


def test_long_lines_are_split_over_blocks_and_folded_again(monkeypatch):
    # The path a whole-tensor sum takes on a GPU (one output, a long line): parts of each line
    # folded by separate blocks, then the parts folded. Made to run here on short lines.
    monkeypatch.setattr(kernels, "LONG_LINE", 6)
    monkeypatch.setattr(kernels, "PART_STEPS", 2)
    rng = np.random.default_rng(7)
    values = rng.standard_normal((2, 3, 19))
    for dim in (2, 0):
        moved = np.ascontiguousarray(np.moveaxis(values, dim, -1)) if dim != 2 else values
        got, want = _lines(moved, 2, scalar.add, 1.5)
        summed_close(got, want, moved, 2)
        got, want = _lines(moved, 2, scalar.max, -math.inf)
        close(got, want, rtol=0.0)
    flat = rng.standard_normal(23)
    whole = Tensor.from_numpy(flat, CUDA).sum()
    assert abs(whole.item() - flat.sum()) <= 1e-14 * np.abs(flat).sum()
    permuted = Tensor.from_numpy(values, CUDA).permute(2, 0, 1)  # lines a stride apart
    np.testing.assert_allclose(permuted.sum(0).to_numpy(), values.sum(2), rtol=1e-12)


def _halve(x):
    return 0.5 * scalar.relu(x)  # a user function calling one of torchlight.scalar's operators


def test_lifted_functions_math_builtins_and_lambdas():
    a = torchlight.tensor([[-2.0, 3.0], [4.0, -1.0]], backend=CUDA)
    assert CUDA.map(_halve)(a).tolist() == [[0.0, 1.5], [2.0, 0.0]]
    assert CUDA.map(lambda x: x * x)(a).tolist() == [[4.0, 9.0], [16.0, 1.0]]
    np.testing.assert_allclose(CUDA.map(math.exp)(a).to_numpy(), np.exp(a.to_numpy()), rtol=1e-12)
    np.testing.assert_allclose(
        CUDA.zip(math.atan2)(a, a.permute(1, 0)).to_numpy(), np.arctan2(a.to_numpy(), a.to_numpy().T), rtol=1e-12
    )


class Scale:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        return self.k * x

    def __call__(self, x):
        return self.k * x


def test_a_method_or_a_callable_object_is_a_type_error_that_says_what_to_lift():
    a = torchlight.tensor([1.0], backend=CUDA)
    with pytest.raises(TypeError, match=r"cannot compile Scale\.apply \(a bound method of a Scale\).*plain function"):
        CUDA.map(Scale(2.0).apply)(a)
    with pytest.raises(TypeError, match=r"cannot compile Scale \(a Scale object\).*'simple' backend"):
        CUDA.zip(Scale(2.0))(a, a)


def test_storages_of_any_layout_in_host_memory_are_copied_to_the_device():
    readonly = np.arange(6.0)
    readonly.flags.writeable = False
    strided = np.arange(12.0)[::2]  # a 1-D storage with a stride of its own
    for storage in (readonly, strided):
        a = Tensor(TensorData(storage, (2, 3)), CUDA)
        assert type(a._data.storage) is CUDA.storage_type
        np.testing.assert_array_equal(CUDA.map(scalar.neg)(a).to_numpy(), -storage.reshape(2, 3))
        np.testing.assert_array_equal(
            CUDA.reduce(scalar.add, 0.0)(a, 1).to_numpy(), storage.reshape(2, 3).sum(1, keepdims=True)
        )


def test_more_dimensions_than_a_thread_holds_is_an_error_naming_the_limit():
    many = torchlight.zeros(*([1] * (kernels.MAX_DIMS + 1)), backend=CUDA)
    with pytest.raises(RuntimeError, match=rf"up to {kernels.MAX_DIMS} dimensions, got one of {kernels.MAX_DIMS + 1}"):
        CUDA.map(scalar.exp)(many)
    most = torchlight.ones(*([1] * kernels.MAX_DIMS), backend=CUDA).permute(*reversed(range(kernels.MAX_DIMS)))
    assert CUDA.map(scalar.neg)(most).sum().item() == -1.0
