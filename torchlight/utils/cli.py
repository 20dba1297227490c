"""Module 4: the command lines' argument parser: argparse's, with a mistake reported as one line.

Every command line of the project (``project/*.py``, ``project/examples/*.py``, ``benchmarks/*.py``,
``python -m torchlight.examples.train_cnn``, the instructors' ``python -m torchlight.grading`` and
``python -m torchlight.course``) parses its options with this ``ArgumentParser``:
``--help`` prints the help and exits with status 0; a mistake (an unknown option, a bad value, a
data folder without the data) prints one line on stderr, ``PROG: error: WHAT (--help lists the
options)``, and exits with status 2, as argparse's own errors do.

The same names mean the same thing everywhere: ``--out`` (where results are written), ``--quiet``
(no progress bars or per-epoch lines), ``--seed``, ``--epochs``, ``--backend``, ``--quick`` and
``--rounds`` (how long a benchmark measures).
"""

import argparse
import sys
from typing import NoReturn

__all__ = ["ArgumentParser", "USAGE_ERROR", "positive_int", "positive_float", "fraction"]

USAGE_ERROR = 2  # the exit status of a mistake on the command line (argparse's, and the shells')


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose ``error`` prints one line (no usage block) and exits with 2."""

    def error(self, message: str) -> NoReturn:
        message = " ".join(message.split())  # one line, whatever the message held
        sys.stderr.write(f"{self.prog}: error: {message} (--help lists the options)\n")
        sys.exit(USAGE_ERROR)


# Option types: ``type=positive_int`` makes ``--epochs 0`` the one-line error
# "argument --epochs: must be at least 1, got 0" instead of a traceback later on.


def positive_int(text: str) -> int:
    """An int of at least 1 (epochs, sizes, counts).

    :param text: the option's value as typed.
    :raises argparse.ArgumentTypeError: for another value (argparse reports it as one line).
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """A float above 0 (learning rates).

    :param text: the option's value as typed.
    :raises argparse.ArgumentTypeError: for another value (argparse reports it as one line).
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid float value: {text!r}") from None
    if not value > 0:  # (nan is not either)
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return value


def fraction(text: str) -> float:
    """A float in [0, 1) (momentum).

    :param text: the option's value as typed.
    :raises argparse.ArgumentTypeError: for another value (argparse reports it as one line).
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid float value: {text!r}") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"must be in [0, 1), got {value}")
    return value
