"""Module 2 runs its tensor tests on the simple backend only (tests/conftest.py: a test module's
``BACKENDS``, default ["simple"]). Module 3 reruns them on "fast" (tests/module3/module2_suite.py).

Module 2's Linear is the composed ``x @ weight.T + bias`` that stage 2.5 asks for
(``Linear.composed``); the fused Function (``ops/fused.py``) is module 3's speed-up, tested there
against this one. So module 2's tests run with ``Linear.fused`` off.
"""

import pytest


@pytest.fixture(autouse=True)
def _composed_linear(monkeypatch):
    from torchlight.nn import Linear

    monkeypatch.setattr(Linear, "fused", False)
