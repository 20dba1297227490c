"""Module 4's training script, under its old name: the code is in the package,
``torchlight/examples/train_cnn.py``, so that an installed torchlight runs it too
(``python -m torchlight.examples.train_cnn``).

``python -m project.train_cnn ...`` runs it, and ``from project import train_cnn`` gives that very
module (not a copy: what a test or a notebook changes on it, it changes there).
"""

import sys

from torchlight.examples import train_cnn

if __name__ == "__main__":
    train_cnn.main(prog="python -m project.train_cnn")
else:
    sys.modules[__name__] = train_cnn
