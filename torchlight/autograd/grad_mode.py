"""Whether operations record history: ``no_grad``, ``enable_grad``, ``set_grad_enabled``."""

import functools


class _Mode:
    # One process-wide switch (PyTorch keeps one per thread; torchlight runs autograd on one
    # thread, so a plain class attribute keeps the hot path to one lookup).
    enabled = True
    # The active forward-mode AD level (an int, see forward_ad.dual_level), or None outside one.
    dual_level = None


def is_grad_enabled() -> bool:
    """True when Functions record history for backward."""
    return _Mode.enabled


class _GradMode:
    mode = True

    def __enter__(self):
        self.prev = _Mode.enabled
        _Mode.enabled = self.mode
        return self

    def __exit__(self, *exc):
        _Mode.enabled = self.prev
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
        self.prev = _Mode.enabled
        _Mode.enabled = self.mode

    def __enter__(self):
        return self
