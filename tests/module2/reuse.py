"""Module 2's test files, loaded for reuse by later modules' tests.

Module 3 reruns module 2's tensor tests on the fast backend by importing the very same test
functions into its own files (which set ``BACKENDS = ["fast"]``, see tests/conftest.py); module 5
checks second derivatives on module 2's tables of operations. The test folders are separate
packages (``tests`` itself is not one, and grading imports tests with ``--import-mode=importlib``),
so this file is found by its path, and module 2's files are loaded here as the package
``torchlight_tests_module2``.
"""

import importlib
import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGE = "torchlight_tests_module2"


def load(name):
    """The module 2 file ``<name>.py`` (e.g. "test_autodiff"), imported once."""
    if PACKAGE not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            PACKAGE, HERE / "__init__.py", submodule_search_locations=[str(HERE)]
        )
        package = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE] = package
        spec.loader.exec_module(package)
    return importlib.import_module(f"{PACKAGE}.{name}")


def tests(module, keep=lambda name: True):
    """The test functions of a loaded module 2 file that take ``backend_name`` and that ``keep``
    accepts, by name: a later module's file adds them to its globals to collect them."""
    import inspect

    found = {}
    for name, fn in vars(module).items():
        if name.startswith("test_") and callable(fn) and keep(name):
            if "backend_name" in inspect.signature(fn).parameters:
                found[name] = fn
    return found
