"""``make demo``: train a network and report its accuracy.

    python -m project.train --model cnn          # make demo: the CNN on the Digits images (module 4)
    python -m project.train                      # the tensor network on xor (module 2)
    python -m project.train --model tensor --dataset split --n 150 --backend simple
    python -m project.train --model scalar --epochs 100 --out out/

``--model`` picks the training script; every other option goes to that script (see
``python -m project.train --model cnn --help``: this script's options, then that one's).
The CNN's script is in the package (``python -m torchlight.examples.train_cnn``), so that an
installed torchlight runs it too.
"""

import importlib
from typing import Any, Optional, Sequence

from torchlight.utils.cli import ArgumentParser

# --model name -> the module whose main(argv) trains it
MODELS = {"tensor": "project.train_tensor", "scalar": "project.train_scalar", "cnn": "torchlight.examples.train_cnn"}


def main(argv: Optional[Sequence[str]] = None) -> Any:
    p = ArgumentParser(
        prog="python -m project.train",
        description="Train a demo network: the script that --model picks, with every other option.",
        add_help=False,
    )
    p.add_argument("-h", "--help", action="store_true", help="show this help and the chosen script's, and exit")
    p.add_argument("--model", default="tensor", choices=MODELS, help="which network to train (default: tensor)")
    args, rest = p.parse_known_args(argv)
    script = importlib.import_module(MODELS[args.model])
    if args.help:
        print(p.format_help())
        print(f"--model {args.model} runs {MODELS[args.model]}, whose options are:\n")
        rest = ["--help"]  # (its parser prints them and exits with 0)
    return script.main(rest)


if __name__ == "__main__":
    main()
