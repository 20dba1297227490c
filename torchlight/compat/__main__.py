"""Example: the command line of ``torchlight.compat`` (``python -m torchlight.compat --help``)."""

import sys
from typing import List, Optional

from ..utils.cli import ArgumentParser
from . import run, shim_path, write_mnist_pickle


def main(argv: Optional[List[str]] = None) -> int:
    parser = ArgumentParser(
        prog="python -m torchlight.compat",
        description="Run PyTorch programs (such as PyTorch's beginner tutorials) on torchlight: `import torch` "
        "gives torchlight, and `torchvision` serves MNIST, FashionMNIST and CIFAR-10 (stand-ins made of "
        "torchlight's Digits where their files are not there). TORCHLIGHT_COMPAT_LIMIT=N keeps N images of each.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    to_run = commands.add_parser("run", help="run a Python file with `import torch` giving torchlight")
    to_run.add_argument("program", help="the Python file")
    to_run.add_argument("args", nargs="...", help="its own arguments")
    commands.add_parser("path", help="print the shim's folder (put it on PYTHONPATH to do without `run`)")
    pickle = commands.add_parser("mnist-pickle", help="write the nn tutorial's mnist.pkl.gz from the stand-in digits")
    pickle.add_argument("file", help="where, e.g. data/mnist/mnist.pkl.gz")
    options = parser.parse_args(argv)
    if options.command == "path":
        print(shim_path())
    elif options.command == "mnist-pickle":
        print(f"wrote {write_mnist_pickle(options.file)} (a stand-in: torchlight's Digits at 28 x 28)")
    else:
        run(options.program, options.args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
