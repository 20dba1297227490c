"""Suite-wide settings: bounded hypothesis runs, the module marker taken from the folder, and the
backend each tensor test runs on.

A student works through the stages in order, so a stage's tests use only what that stage and the
ones before it build. Two things here keep it so:

- ``backend_name``: a test that takes it runs once per backend in its module's ``BACKENDS`` list
  (``["simple"]`` where the module names none). Module 2 teaches the simple backend, so its tests
  run there only; module 3 reruns the very same test functions on "fast" by importing them into a
  file that sets ``BACKENDS = ["fast"]`` (see tests/module3/module2_suite.py).
- In modules 0-2 a tensor made without ``backend=`` lands on "simple", not on the default backend
  ("fast" wherever numba is installed, which module 3 builds).
"""

import os

# The cuda backend's tests run in a CUDA simulator (on the CPU, in this one process), so that
# they run, and run the same way, on every machine. numba.cuda chooses between GPU and simulator
# when it is first imported, so the choice is made here, before any test imports it. To run them
# on a GPU instead (the cuda extra installed), start pytest with NUMBA_ENABLE_CUDASIM=0. The
# variable concerns numba.cuda alone: the fast backend compiles and runs as without it.
# The simulator is numba-cuda's where numba-cuda is installed (it takes over numba.cuda), numba's
# own built-in one otherwise; the header says which, and CI runs the cuda tests with each.
os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import importlib.metadata
import importlib.util

import pytest
from hypothesis import HealthCheck, settings


def pytest_report_header(config):
    """Which numba.cuda the cuda tests run on (found without importing it: the import chooses)."""
    where = "the GPU" if os.environ.get("NUMBA_ENABLE_CUDASIM") in ("", "0") else "the simulator"
    if importlib.util.find_spec("numba_cuda") is not None:
        return f"cuda tests: {where} of numba-cuda {importlib.metadata.version('numba-cuda')}"
    try:
        return f"cuda tests: {where} of numba {importlib.metadata.version('numba')}'s built-in numba.cuda"
    except importlib.metadata.PackageNotFoundError:
        return "cuda tests: numba is not installed"


settings.register_profile(
    "torchlight",
    max_examples=int(os.environ.get("TORCHLIGHT_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
settings.load_profile("torchlight")

# The modules taught before the fast backend: their tensors default to the simple one.
BEFORE_FAST = {0, 1, 2}


def _module_number(path):
    """N for a file under tests/moduleN/, else None."""
    for part in path.parts:
        if part.startswith("module") and part[6:].isdigit():
            return int(part[6:])
    return None


def pytest_collection_modifyitems(items):
    # tests/moduleN/... carries the marker moduleN, so `pytest -m module2` runs module 2 alone.
    for item in items:
        n = _module_number(item.path)
        if n is not None:
            item.add_marker(getattr(pytest.mark, f"module{n}"))


def pytest_generate_tests(metafunc):
    # One case per backend in the collecting module's BACKENDS (the module the test function is
    # collected from, which for a reused module 2 test is the module 3 file that imports it).
    if "backend_name" in metafunc.fixturenames:
        names = getattr(metafunc.module, "BACKENDS", ["simple"])
        metafunc.parametrize("backend_name", names, indirect=True, scope="session")


@pytest.fixture(scope="session")
def backend_name(request):
    """The name of the backend to run on (session scope: hypothesis reruns a test body many times)."""
    import torchlight

    try:
        torchlight.backends.get(request.param)
    except torchlight.backends.BackendUnavailable as e:
        pytest.skip(str(e))
    return request.param


@pytest.fixture(autouse=True)
def _simple_backend_before_module_3(request, monkeypatch):
    """Tensors made without ``backend=`` in modules 0-2 use "simple"; restored after the test."""
    if _module_number(request.node.path) not in BEFORE_FAST:
        yield
        return
    from torchlight import backends

    if isinstance(getattr(backends, "_default", None), list):
        # the remembered default, replaced for this test only (set_default_backend writes into it)
        monkeypatch.setattr(backends, "_default", ["simple"])
        yield
    else:  # a backends module that keeps its default elsewhere: the public functions
        before = backends.default()
        backends.set_default_backend("simple")
        try:
            yield
        finally:
            backends.set_default_backend(before)
