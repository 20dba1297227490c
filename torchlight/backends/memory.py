"""Module 3: keep freed tensor memory in the process, so that a new tensor does not page-fault.

glibc's ``malloc`` gives a block larger than its mmap threshold (128 KiB at first, raised as far
as 32 MiB as such blocks are freed) pages of its own from the kernel and hands them back when the
block is freed, and it hands back free memory at the top of its heap beyond a trim threshold. A
tensor of a few megabytes then costs a page fault for every 4 KiB the first time a kernel writes
it. On this course's 2-core virtual machine a conv2d forward+backward at batch 64x1x28x28 made
about 2,700 such faults (10 MB of fresh pages) and took 13-16 ms; with the thresholds raised it
made none and took 6.8-7.5 ms (docs/performance.md). Keeping freed blocks for the next tensor is
what PyTorch's caching allocators do on the GPU; the price is that the process keeps its peak
memory until it ends.

``keep_freed_memory()`` does this once per process where the C library is glibc (elsewhere it
does nothing); ``TORCHLIGHT_KEEP_FREED_MEMORY=0`` in the environment turns it off. Importing this
module registers it with the backends of module 2 (``base.on_new_backend``): every backend made
from then on calls it. The fast and cuda backends import it, so they always do.
"""

import ctypes
import os
import sys

from . import base

__all__ = ["keep_freed_memory"]

_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 1 << 28  # blocks up to 256 MiB come from the heap, which keeps them when freed
TRIM_THRESHOLD = 1 << 30  # and up to 1 GiB of free heap stays with the process

_done: list = []


def keep_freed_memory() -> bool:
    """Ask glibc's malloc to keep freed memory for the next allocation; True if it was set (once)."""
    if _done:
        return _done[0]
    ok = False
    if sys.platform.startswith("linux") and os.environ.get("TORCHLIGHT_KEEP_FREED_MEMORY", "1") != "0":
        try:
            libc = ctypes.CDLL(None)
            mallopt = getattr(libc, "mallopt", None)
            if mallopt is not None and os.confstr("CS_GNU_LIBC_VERSION"):  # glibc's parameters only
                ok = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
                ok = bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)) and ok
        except (OSError, ValueError, AttributeError):  # no such library, or no confstr name here
            ok = False
    _done.append(ok)
    return ok


base.on_new_backend.append(keep_freed_memory)  # module 3 registers itself with module 2's backends
