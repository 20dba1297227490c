"""Example: PyTorch programs, such as PyTorch's own beginner tutorials, run on torchlight unchanged.

    python -m torchlight.compat run quickstart_tutorial.py     # `import torch` gives torchlight
    python -m torchlight.compat path                           # the shim's folder, for PYTHONPATH
    python -m torchlight.compat mnist-pickle data/mnist/mnist.pkl.gz   # the nn tutorial's file (stand-in)

A small shim package does it: its ``torch`` is ``torchlight`` (and ``torch.nn`` is
``torchlight.nn``, and so on), its ``torchvision`` has the data sets, transforms and
``make_grid`` that the tutorials use. MNIST, FashionMNIST and CIFAR-10 come from their files where
``root`` has them; otherwise, since nothing is downloaded, from stand-ins made of torchlight's
Digits with the tutorial's shapes (``standins``), with a warning that says so.
``TORCHLIGHT_COMPAT_LIMIT=N`` keeps N images of each set, so that a tutorial takes seconds.

docs/pytorch.md lists which tutorials run this way and every difference that remains.
"""

import runpy
import sys
from pathlib import Path
from typing import List, Optional

from .standins import LIMIT_VARIABLE, write_mnist_pickle

__all__ = ["shim_path", "run", "write_mnist_pickle", "LIMIT_VARIABLE"]


def shim_path() -> str:
    """The folder holding the shim's ``torch`` and ``torchvision`` packages."""
    return str(Path(__file__).resolve().parent / "_shim")


def run(program: str, args: Optional[List[str]] = None) -> None:
    """Run the Python file ``program`` as ``__main__`` with ``import torch`` giving torchlight.

    As ``python program.py args...`` would: ``sys.argv`` is ``[program, *args]`` and the program's
    folder is first on ``sys.path``, the shim's right after it.

    :param program: the Python file's path.
    :param args: its command line's arguments (default: none).
    :raises RuntimeError: where PyTorch itself is already imported in this process (the program
        would get PyTorch's modules).
    :raises FileNotFoundError: when there is no such file.
    """
    if "torch" in sys.modules and not getattr(sys.modules["torch"], "__name__", "").startswith("torchlight"):
        raise RuntimeError("torchlight.compat.run: PyTorch is already imported in this process; run the program alone")
    path = Path(program)
    if not path.is_file():
        raise FileNotFoundError(f"torchlight.compat.run: no file {program!r}")
    shim = shim_path()
    if shim not in sys.path:
        sys.path.insert(0, shim)
    sys.path.insert(0, str(path.resolve().parent))
    sys.argv = [str(path), *(args or [])]
    runpy.run_path(str(path), run_name="__main__")
