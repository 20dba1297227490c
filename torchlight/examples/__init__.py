"""Module 4: the demo, inside the package so that an installed torchlight runs it.

    python -m torchlight.examples.train_cnn                         # the CNN on the Digits images (make demo)
    python -m torchlight.examples.train_cnn --epochs 1 --limit 300  # a quick run

``train_cnn`` trains module 4's convolutional network (task 4.5 writes its forward and training
step); ``plots`` and ``plots_cnn`` draw the pictures of a training run. The repository's training
scripts (``project/``) use them too: ``python -m project.train --model cnn`` is the same run.
"""

from .. import backends

__all__ = ["default_backend"]


def default_backend() -> str:
    """'fast' where it can run here, else 'simple'."""
    try:
        backends.get("fast")
        return "fast"
    except backends.BackendUnavailable:
        return "simple"
