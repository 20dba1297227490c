"""Module 4: utilities around training; ``torchlight.utils.data`` holds data sets and the DataLoader."""

from . import data

__all__ = ["data"]
