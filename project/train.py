"""``make demo``: train a small network and report its accuracy.

    python -m project.train                      # the scalar network on xor
    python -m project.train --model scalar --epochs 100 --out out/

``--model`` picks the training script; every other option goes to that script (see
``python -m project.train_scalar --help``). Only the scalar model (module 1) exists so far.
"""

import argparse
from typing import Optional, Sequence

MODELS = ("scalar",)


def main(argv: Optional[Sequence[str]] = None) -> None:
    p = argparse.ArgumentParser(prog="python -m project.train", description="Train a demo network.", add_help=False)
    p.add_argument("--model", default="scalar", choices=MODELS, help="which network to train (default: scalar)")
    args, rest = p.parse_known_args(argv)
    if args.model == "scalar":
        from . import train_scalar

        train_scalar.main(rest)


if __name__ == "__main__":
    main()
