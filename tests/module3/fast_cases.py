"""What the fast backend's map, zip and reduce tests share (test_fast_ops.py, stage 3.1, and
test_fast_reduce.py, stage 3.2): the serial/parallel path fixture, bit-for-bit equality with the
simple backend, and tensors drawn in every layout."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import strategies as st

from torchlight import Tensor, backends
from torchlight.backends import fast, fast_math

from .strategies import LAYOUTS, floats, layout_of, shapes

FAST = backends.get("fast")
SIMPLE = backends.get("simple")


@pytest.fixture(params=["serial", "parallel"], scope="module", name="path")
def serial_or_parallel(request):
    """Which kernel path fast takes: every tensor parallel (threshold 0) or every tensor serial.

    (Module scope, set by hand: hypothesis reruns a test body many times within one fixture.)
    """
    saved = fast.PARALLEL_THRESHOLD
    fast.PARALLEL_THRESHOLD = 0 if request.param == "parallel" else 1 << 62
    yield request.param
    fast.PARALLEL_THRESHOLD = saved


def same(fast_result, simple_result, what="fast's result"):
    """Bit-for-bit equality with the simple backend (nan equal to nan), shape included."""
    a, b = fast_result.to_numpy(), simple_result.to_numpy()
    assert a.shape == b.shape, f"{what} has shape {a.shape}; the simple backend's has {b.shape}"
    np.testing.assert_array_equal(a, b, err_msg=f"{what} differs from the simple backend's")


def compiled_as(fn):
    """The scalar function fast's map compiles for ``fn``: ``fn`` itself, or for exp, log, sigmoid
    and tanh their vectorizable forms (backends/fast_math.py, within 1-3 ulps of the C library's).
    The simple backend running that function gives fast's results bit for bit."""
    return fast_math.STAND_INS.get(fn, fn)


@st.composite
def pair(draw, shape=None, elements=None):
    """The same values as a fast tensor and a simple tensor, in the same drawn layout."""
    shape = draw(shapes(max_dims=4, max_side=5)) if shape is None else shape
    values = draw(
        st.lists(
            floats(-5, 5) if elements is None else elements, min_size=math.prod(shape), max_size=math.prod(shape)
        ).map(lambda v: np.array(v, dtype=np.float64).reshape(shape))
    )
    layout = draw(st.sampled_from(LAYOUTS))
    order = draw(st.permutations(range(len(shape)))) if shape else None
    return Tensor(layout_of(values, layout, order), FAST), Tensor(layout_of(values, layout, order), SIMPLE)


def run_python(code, **env):
    """Run ``code`` in a fresh Python with ``env`` added; a stub the child reaches is raised here as
    the stub's own NotImplementedError (in the student edition: the stage still to write)."""
    run = subprocess.run(
        [sys.executable, "-c", code], env=dict(os.environ, **env), capture_output=True, text=True, timeout=300
    )
    last = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else ""
    if run.returncode != 0 and last.startswith("NotImplementedError: Task "):
        raise NotImplementedError(last[len("NotImplementedError: ") :])
    return run
