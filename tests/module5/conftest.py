"""Module 5 fixtures: PyTorch as the reference, when it is installed."""

import pytest


@pytest.fixture
def torch():
    """The torch module; the test is skipped where PyTorch is not installed."""
    return pytest.importorskip("torch")
