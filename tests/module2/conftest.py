"""Module 2 runs its tensor tests on the simple backend only (tests/conftest.py: a test module's
``BACKENDS``, default ["simple"]). Module 3 reruns them on "fast" (tests/module3/module2_suite.py)."""
