"""``make demo``: train a network and report its accuracy.

    python -m project.train --model cnn          # make demo: the CNN on the Digits images (module 4)
    python -m project.train                      # the tensor network on xor (module 2)
    python -m project.train --model tensor --dataset split --n 150 --backend simple
    python -m project.train --model scalar --epochs 100 --out out/

``--model`` picks the training script; every other option goes to that script (see
``python -m project.train_cnn --help``, ``python -m project.train_tensor --help`` and
``python -m project.train_scalar --help``).
"""

import argparse
import importlib
from typing import Any, Optional, Sequence

# --model name -> the module (in project/) whose main(argv) trains it
MODELS = {"tensor": "train_tensor", "scalar": "train_scalar", "cnn": "train_cnn"}


def main(argv: Optional[Sequence[str]] = None) -> Any:
    p = argparse.ArgumentParser(prog="python -m project.train", description="Train a demo network.", add_help=False)
    p.add_argument("--model", default="tensor", choices=MODELS, help="which network to train (default: tensor)")
    args, rest = p.parse_known_args(argv)
    script = importlib.import_module(f"{__package__}.{MODELS[args.model]}")
    return script.main(rest)


if __name__ == "__main__":
    main()
