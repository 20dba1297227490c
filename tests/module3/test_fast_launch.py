"""The fast kernels' native launch (torchlight/_native/launch.c, backends/fast_launch.py).

- Where the extension is built and not switched off, the fast backend's map, zip and reduce
  kernels are Launches, and a small operation runs in C (its counter moves, nothing is handed on).
- A Launch gives its Python kernel's results bit for bit: the same compiled part on the same
  arrays, over contiguous, broadcast, strided and permuted tensors.
- What it leaves to the Python kernel goes there and still gives the right answer: the parallel
  case, a reduction along long lines, a read-only or strided storage, a wrong number of arguments.
- A part that raises raises its own exception (through numba's dispatcher), not a silent result.
- TORCHLIGHT_NATIVE=0 leaves numba's dispatcher launching every kernel, and ``launches()`` says so.
- backend.map(fn) and zip(fn) as native Ops make what base.py's closures make, field for field, and
  leave them the rest (the source of what an Op copies is pinned in test_native_apply.py).
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import torchlight
from torchlight import backends
from torchlight import scalar as op
from torchlight.autograd import native
from torchlight.backends import fast, fast_launch
from torchlight.tensor_data import TensorData

ROOT = Path(__file__).resolve().parents[2]
FAST = backends.get("fast")

launching = pytest.mark.skipif(
    fast_launch.path() != "native", reason=f"the native launch is not in use: {fast_launch.reason()}"
)


def _kernel(kind, fn):
    return FAST._kernel(kind, fn)


def _data(rng, shape, permute=None):
    """A TensorData of ``shape`` with random values; permuted (a strided view) when asked."""
    data = TensorData(rng.standard_normal(int(np.prod(shape))), shape)
    return data.permute(*permute) if permute else data


@launching
def test_the_fast_kernels_are_launched_from_c():
    assert native.launches() == "native"
    launch = _kernel("zip_kernel", op.mul)
    assert type(launch).__name__ == "Launch" and isinstance(launch.fallback, fast._Kernel)
    calls, handed = launch.stats()
    x = torchlight.tensor([1.0, 2.0, 3.0], backend="fast")
    assert (x * x).tolist() == [1.0, 4.0, 9.0]
    assert launch.stats() == (calls + 1, handed)


# Cases: (kind, fn, shapes of the inputs, permutation of the first input or None, reduce dim)
CASES = [
    ("map_kernel", op.exp, [(7,)], None, None),
    ("map_kernel", op.sigmoid, [(3, 4, 5)], (2, 0, 1), None),
    ("map_kernel", op.neg, [(1, 4)], None, None),  # broadcast to out's (3, 4)
    ("zip_kernel", op.mul, [(4, 5), (4, 5)], None, None),
    ("zip_kernel", op.add, [(3, 1, 5), (4, 1)], None, None),  # broadcast both ways
    ("zip_kernel", op.lt, [(2, 3, 4), (2, 4, 3)], (0, 2, 1), None),
    ("zip_kernel", op.mul, [(), (6,)], None, None),
    ("reduce_kernel", op.add, [(5, 6, 3)], None, 1),
    ("reduce_kernel", op.max, [(4, 7)], (1, 0), 0),
    ("reduce_kernel", op.add, [(3, 40)], None, 1),  # lines long enough, but too few for lines_part
]


@launching
@pytest.mark.parametrize("kind, fn, shapes, permute, dim", CASES)
def test_a_launch_gives_its_kernels_bits(kind, fn, shapes, permute, dim):
    rng = np.random.default_rng(len(str(shapes)))
    inputs = [_data(rng, s, permute if i == 0 else None) for i, s in enumerate(shapes)]
    if kind == "reduce_kernel":
        out_shape = tuple(1 if d == dim else s for d, s in enumerate(inputs[0].shape))
        extra = (dim, -np.inf if fn is op.max else 0.0)
    else:
        out_shape = np.broadcast_shapes((3, 4) if fn is op.neg else (), *(d.shape for d in inputs))
        extra = ()
    launch = _kernel(kind, fn)
    results = []
    for call in (launch, launch.fallback):
        out = TensorData.empty(out_shape)
        out.storage[:] = np.nan  # every element must be written
        calls, handed = launch.stats()
        call(*out.kernel_args(), *(a for d in inputs for a in d.kernel_args()), *extra)
        if call is launch:
            assert launch.stats() == (calls + 1, handed), "the launch handed a call it should take"
        results.append(out.storage.copy())
    assert not np.isnan(results[0]).any()
    assert results[0].tobytes() == results[1].tobytes()


def _handed(launch, args):
    """Call the launch; return whether it handed the call to its Python kernel."""
    handed = launch.stats()[1]
    launch(*args)
    return launch.stats()[1] == handed + 1


@launching
def test_what_a_launch_leaves_to_its_kernel_is_still_right():
    rng = np.random.default_rng(1)
    launch = _kernel("zip_kernel", op.add)
    big = fast.PARALLEL_THRESHOLD
    a, b = _data(rng, (big,)), _data(rng, (big,))
    out = TensorData.empty((big,))
    assert _handed(launch, (*out.kernel_args(), *a.kernel_args(), *b.kernel_args()))
    assert np.array_equal(out.storage, a.storage + b.storage)

    small = _data(rng, (6,))
    frozen = small.storage.copy()
    frozen.flags.writeable = False  # numba's signature takes writable arrays: the kernel copes
    out = TensorData.empty((6,))
    shape, strides = small.kernel_args()[1:]
    assert _handed(launch, (*out.kernel_args(), frozen, shape, strides, *small.kernel_args()))
    assert np.array_equal(out.storage, 2 * small.storage)

    wide = rng.standard_normal(12)[::2]  # a strided storage
    assert _handed(launch, (*out.kernel_args(), wide, shape, strides, *small.kernel_args()))
    assert np.array_equal(out.storage, wide + small.storage)

    with pytest.raises(TypeError):  # a wrong number of arguments: the kernel's own error
        launch(*out.kernel_args())

    lines = _kernel("reduce_kernel", op.add)
    long = _data(rng, (2 * fast.LINES, 64))
    out = TensorData.empty((2 * fast.LINES, 1))
    assert _handed(lines, (*out.kernel_args(), *long.kernel_args(), 1, 0.0))  # lines_part's case
    assert np.allclose(out.storage, long.storage.reshape(-1, 64).sum(axis=1))


def _too_big(x):
    if x > 1.0:
        raise ValueError("too big for this kernel")
    return x


@launching
def test_a_part_that_raises_raises_its_exception():
    launch = _kernel("map_kernel", _too_big)
    small = TensorData(np.array([0.5, 2.0]), (2,))
    out = TensorData.empty((2,))
    with pytest.raises(ValueError, match="too big"):
        launch(*out.kernel_args(), *small.kernel_args())
    ok = TensorData(np.array([0.5, 0.25]), (2,))
    launch(*out.kernel_args(), *ok.kernel_args())
    assert out.storage.tolist() == [0.5, 0.25]


@launching
def test_fields_reads_numpy_arrays_as_numpy_does():
    compiled = fast_launch._compiled
    a = np.arange(10.0)[2:9:3]
    data, ndim, size, stride, flags = compiled.fields(a)
    assert (data, ndim, size, stride) == (a.ctypes.data, 1, 3, 24)
    assert flags & 0x0001 == 0  # not C-contiguous
    with pytest.raises(TypeError, match="numpy array"):
        compiled.fields([1.0, 2.0])


def test_switched_off_the_dispatcher_launches():
    code = (
        "import torchlight; from torchlight.autograd import native; from torchlight.backends import fast_launch; "
        "k = torchlight.backends.get('fast')._kernel('zip_kernel', torchlight.scalar.mul); "
        "print(native.launches(), type(k).__name__); print(fast_launch.reason())"
    )
    env = dict(os.environ, TORCHLIGHT_NATIVE="0")
    run = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split("\n")[:2] == ["python _Kernel", "disabled by TORCHLIGHT_NATIVE=0"]


@launching
def test_enable_turns_every_launch_off_and_on():
    launch = _kernel("zip_kernel", op.mul)
    x = torchlight.tensor([2.0, 3.0], backend="fast")
    entry = FAST.zip(op.mul)
    assert fast_launch.enable(False) is True
    try:
        assert native.launches() == "python"
        assert _handed(launch, (*x._data.kernel_args(),) * 3)
        handed = entry.stats()[1]
        expected = [v * v for v in x.tolist()]  # (the launch above wrote x * x into x)
        assert entry(x, x).tolist() == expected and entry.stats()[1] == handed + 1
    finally:
        fast_launch.enable(True)
    assert native.launches() == "native"
    assert not _handed(launch, (*x._data.kernel_args(),) * 3)


@launching
def test_an_attribute_set_on_a_launch_is_its_kernels_and_the_kernel_runs_from_then_on():
    launch = fast.map_kernel(op.exp)  # a Launch of its own, not the backend's
    kernel = launch.fallback
    x = torchlight.tensor([0.5, 1.5], backend="fast")._data
    assert launch.kind == "map_part" and launch.part is kernel.part  # read from the kernel
    assert not _handed(launch, (*TensorData.empty((2,)).kernel_args(), *x.kernel_args()))
    launch.part = kernel.part  # (the same part; a test may put a stub there)
    assert vars(kernel)["part"] is kernel.part
    assert _handed(launch, (*TensorData.empty((2,)).kernel_args(), *x.kernel_args()))


# -- backend.map(fn) and backend.zip(fn) as native Ops ---------------------------------------------


def _fields(t):
    """What an operation's result is made of, as Tensor.__init__ and TensorData._empty set it."""
    d = t._data
    return (
        type(t),
        t.backend,
        t.history,
        t._output_nr,
        t.grad,
        t._dtype,
        type(d),
        d.offset,
        d.shape,
        d.strides,
        d.size,
        type(d.version),
        d.version.value,
        [type(a) for a in d.kernel_args()],
        [a.tolist() for a in d.kernel_args()[1:]],
        d.storage.tobytes(),
    )


@launching
@pytest.mark.parametrize("shape", [(), (1,), (5,), (3, 4), (2, 1, 3)], ids=str)
def test_an_op_makes_what_base_py_makes(shape):
    rng = np.random.default_rng(len(shape))
    a = torchlight.tensor(rng.standard_normal(shape), backend="fast")
    b = torchlight.tensor(rng.standard_normal(shape), backend="fast").permute(*reversed(range(len(shape))))
    b = b.contiguous().view(*shape) if shape else b
    for entry, args in ((FAST.zip(op.mul), (a, b)), (FAST.map(op.sigmoid), (a,))):
        assert type(entry).__name__ == "Op"
        calls, handed = entry.stats()
        native_out = entry(*args)
        python_out = entry.python_op(*args)
        assert entry.stats() == (calls + 1, handed)
        assert _fields(native_out) == _fields(python_out)
        assert python_out.unique_id == native_out.unique_id + 1  # one id each, in turn
        assert native_out._data.version is not a._data.version
        assert native_out._data.kernel_args()[0] is native_out._data.storage


@launching
@pytest.mark.parametrize("shapes", [((3, 1), (4,)), ((), (2, 3)), ((2, 3), ())], ids=str)
def test_an_op_broadcasts_as_base_py_does(shapes):
    rng = np.random.default_rng(7)
    a, b = (torchlight.tensor(rng.standard_normal(s), backend="fast") for s in shapes)
    entry = FAST.zip(op.add)
    calls, handed = entry.stats()
    assert _fields(entry(a, b)) == _fields(entry.python_op(a, b))
    assert entry.stats() == (calls + 1, handed)


@launching
def test_what_an_op_leaves_to_base_py_is_still_right():
    zip_mul = FAST.zip(op.mul)
    a = torchlight.tensor([[1.0, 2.0, 3.0]], backend="fast")
    simple = torchlight.tensor([[1.0, 1.0, 1.0]], backend="simple")
    big = torchlight.ones(backends.base.LONG_ROWS_MIN_SIZE, backend="fast")
    out = torchlight.zeros(1, 3, backend="fast")
    cases = [
        ((a, a), {"out": out}, [[1.0, 4.0, 9.0]]),
        ((big, big), {}, None),  # the long-rows path
    ]
    for args, kwargs, expected in cases:
        handed = zip_mul.stats()[1]
        got = zip_mul(*args, **kwargs)
        assert zip_mul.stats()[1] == handed + 1
        if expected is not None:
            assert got.tolist() == expected
    assert out.tolist() == [[1.0, 4.0, 9.0]]
    other = torchlight.ones(2, backend="fast")
    for wrong in ((a, simple), (a, 2.0), (a, other)):  # base.py's own error, the same from both
        errors = []
        for call in (zip_mul, zip_mul.python_op):
            with pytest.raises(Exception) as caught:
                call(*wrong)
            errors.append((type(caught.value), str(caught.value)))
        assert errors[0] == errors[1]
