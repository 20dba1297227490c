"""Modules 1 and 5: whether operations record history (``no_grad``), and the forward-AD level.

Both are per thread, as in PyTorch: a thread inside ``no_grad()`` does not stop other threads
from recording. Every change goes through ``_set_mode``, so there is one place that sets them.
"""

import functools
import threading
from typing import Optional, Tuple


class _State(threading.local):
    # Class attributes are each new thread's starting values; assignments stay in their thread.
    enabled = True
    # The active forward-mode AD level (an int, see forward_ad.dual_level), or None outside one.
    dual_level: Optional[int] = None


# Read as ``_Mode.enabled`` / ``_Mode.dual_level``; change only through ``_set_mode``.
_Mode = _State()


def _set_mode(enabled: bool, dual_level: Optional[int]) -> Tuple[bool, Optional[int]]:
    """Set this thread's grad mode and forward-AD level; return both as they were (to restore them)."""
    old = (_Mode.enabled, _Mode.dual_level)
    _Mode.enabled = enabled
    _Mode.dual_level = dual_level
    return old


def is_grad_enabled() -> bool:
    """True when Functions record history for backward."""
    return _Mode.enabled


class _GradMode:
    mode = True

    def __enter__(self):
        self.prev = _set_mode(self.mode, _Mode.dual_level)[0]
        return self

    def __exit__(self, *exc):
        _set_mode(self.prev, _Mode.dual_level)
        return False

    def __call__(self, fn):
        """Use as a decorator: fn runs in this mode."""
        mode = self.mode

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            ctx = _GradMode()
            ctx.mode = mode
            with ctx:
                return fn(*args, **kwargs)

        return wrapped


class no_grad(_GradMode):
    """Context manager (or decorator) in which no history is recorded: for evaluation and updates."""

    mode = False


class enable_grad(_GradMode):
    """Context manager (or decorator) that turns recording back on inside ``no_grad``."""

    mode = True


class set_grad_enabled(_GradMode):
    """Turn recording on or off: takes effect at once, and is undone on leaving a ``with`` block."""

    def __init__(self, mode: bool):
        self.mode = bool(mode)
        self.prev = _set_mode(self.mode, _Mode.dual_level)[0]

    def __enter__(self):
        return self
