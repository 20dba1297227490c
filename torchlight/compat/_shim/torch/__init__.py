"""Example: ``import torch`` that gives torchlight (``torchlight.compat``'s shim).

On ``sys.path`` ahead of PyTorch (``python -m torchlight.compat run program.py`` puts it there),
this package makes ``import torch`` return the ``torchlight`` module itself, and ``import
torch.X`` (``torch.nn``, ``torch.nn.functional``, ``torch.optim``, ``torch.utils.data``,
``torch.autograd``, ...) return ``torchlight.X``: the same module objects, never a second copy,
so ``torch.nn.Module is torchlight.nn.Module``. What torchlight lacks stays missing (an
AttributeError or ImportError names it); docs/pytorch.md lists the differences.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys

import torchlight

_PREFIX = "torch."


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch.X`` as ``torchlight.X`` and hands over that module unchanged."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(_PREFIX):
            return None
        real = "torchlight." + fullname[len(_PREFIX) :]
        try:
            found = importlib.util.find_spec(real)
        except (ImportError, ValueError):
            return None
        if found is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=found.submodule_search_locations is not None)

    def create_module(self, spec):
        module = importlib.import_module("torchlight." + spec.name[len(_PREFIX) :])
        self._spec = module.__spec__  # importlib sets __spec__ to the alias's: put the real one back
        return module

    def exec_module(self, module):
        module.__spec__ = self._spec


if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
    sys.meta_path.insert(0, _Alias())
sys.modules[__name__] = torchlight
