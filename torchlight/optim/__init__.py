"""Modules 1, 2 and 4: optimizers, which move Parameters against their gradients.

``SGD`` (``sgd.py``) trains module 1's Scalar networks and module 2's Tensor networks; ``Adam``
and ``AdamW`` (``adam.py``) train module 4's convolutional networks, and so does ``RMSprop``
(``rmsprop.py``). All share ``Optimizer``
(``optimizer.py``): parameter groups, ``zero_grad``, ``state_dict`` and ``load_state_dict``.
Module 3's ``sgd_arrays.py`` runs SGD's step on the compiled backends' storages.
"""

from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD
from .sgd_arrays import Arrays as _Arrays  # noqa: F401  (registers itself on SGD)

__all__ = ["Adam", "AdamW", "Optimizer", "RMSprop", "SGD"]
