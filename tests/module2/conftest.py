"""Module 2 fixtures: every backend-dependent test runs once per backend named in BACKENDS."""

import pytest

import torchlight

# The backends the module 2 suite runs on; each must give the same answers as "simple".
BACKENDS = ["simple", "fast"]


@pytest.fixture(params=BACKENDS, scope="session")
def backend_name(request):
    """The name of a backend to run on (session scope: hypothesis reruns a test body many times)."""
    try:
        torchlight.backends.get(request.param)
    except torchlight.backends.BackendUnavailable as e:
        pytest.skip(str(e))
    return request.param
