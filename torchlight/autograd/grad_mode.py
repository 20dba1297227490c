"""Modules 1 and 5: whether operations record history (``no_grad``), and the forward-AD level.

Both are per thread, as in PyTorch: a thread inside ``no_grad()`` does not stop other threads
from recording. Every change goes through ``_set_mode``, so there is one place that sets them.
"""

import functools
import threading
from typing import Any, List, Optional, Tuple


class _State(threading.local):
    def __init__(self):
        # [recording on, forward-AD level (an int, see forward_ad.dual_level) or None], one list
        # per thread, changed in place: a thread-local's attribute writes cost more than a list's,
        # and every Function application switches recording off and on again.
        self.mode: List[Any] = [True, None]


_state = _State()
_KEEP: Any = object()


def is_grad_enabled() -> bool:
    """True when Functions record history for backward (in this thread)."""
    return _state.mode[0]


def _dual_level() -> Optional[int]:
    """This thread's active forward-AD level, or None outside ``forward_ad.dual_level()``."""
    return _state.mode[1]


def _set_mode(enabled: bool, dual_level: Any = _KEEP) -> Tuple[bool, Optional[int]]:
    """Set this thread's grad mode (and forward-AD level, if given); return both as they were."""
    mode = _state.mode
    old = (mode[0], mode[1])
    mode[0] = enabled
    if dual_level is not _KEEP:
        mode[1] = dual_level
    return old


class _GradMode:
    mode = True

    def __enter__(self):
        self.prev = _set_mode(self.mode)[0]
        return self

    def __exit__(self, *exc):
        _set_mode(self.prev)
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


class _NoArgumentGradMode(_GradMode):
    """A mode that takes no argument, so that it also decorates without parentheses, as PyTorch's:
    ``@no_grad`` is ``@no_grad()``."""

    def __new__(cls, orig_func: Any = None):
        if orig_func is None:
            return super().__new__(cls)
        if not callable(orig_func):
            raise TypeError(f"{cls.__name__}() takes no arguments (got {orig_func!r}); use it as {cls.__name__}()")
        return cls()(orig_func)


class no_grad(_NoArgumentGradMode):
    """Context manager (or decorator) in which no history is recorded: for evaluation and updates."""

    mode = False


class enable_grad(_NoArgumentGradMode):
    """Context manager (or decorator) that turns recording back on inside ``no_grad``."""

    mode = True


class set_grad_enabled(_GradMode):
    """Turn recording on or off: takes effect at once, and is undone on leaving a ``with`` block.

    :param mode: True to record, False not to.
    """

    def __init__(self, mode: bool):
        self.mode = bool(mode)
        self.prev = _set_mode(self.mode)[0]

    def __enter__(self):
        return self
