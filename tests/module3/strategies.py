"""Module 2's strategies (layouts, shapes, broadcast pairs) and test files, reused by module 3.

The test folders are separate packages (``tests`` itself is not one, and grading imports tests
with ``--import-mode=importlib``), so module 2's files are loaded by their path, through
tests/module2/reuse.py.
"""

import importlib.util
import sys
from pathlib import Path

_NAME = "torchlight_tests_module2_reuse"
if _NAME not in sys.modules:
    _spec = importlib.util.spec_from_file_location(_NAME, Path(__file__).resolve().parents[1] / "module2" / "reuse.py")
    sys.modules[_NAME] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules[_NAME])
reuse = sys.modules[_NAME]

_module = reuse.load("strategies")
LAYOUTS = _module.LAYOUTS
broadcast_shapes = _module.broadcast_shapes
floats = _module.floats
layout_of = _module.layout_of
shapes = _module.shapes
