"""Module 4: utilities around training; ``torchlight.utils.data`` holds data sets and the DataLoader,
``torchlight.utils.cli`` the argument parser of every command line."""

from . import cli, data

__all__ = ["cli", "data"]
