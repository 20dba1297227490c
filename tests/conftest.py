"""Suite-wide settings: bounded hypothesis runs, and the module marker taken from the folder."""

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "torchlight",
    max_examples=int(os.environ.get("TORCHLIGHT_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
settings.load_profile("torchlight")


def pytest_collection_modifyitems(items):
    # tests/moduleN/... carries the marker moduleN, so `pytest -m module2` runs module 2 alone.
    for item in items:
        for part in item.path.parts:
            if part.startswith("module") and part[6:].isdigit():
                item.add_marker(getattr(pytest.mark, part))
