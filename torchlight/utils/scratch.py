"""Module 4: temporary files written beside their target, and the removal of those a killed process left.

A save or a download writes to a temporary file in the target's folder and renames it into place
once complete. The temporary's name holds the target's name, this machine and the writing
process, so that a later write can tell one left by a dead process (removed) from one that is
being written now (a live process's, or another machine's on a shared folder: left alone).
"""

import os
import re
import socket
import tempfile
from typing import Tuple

__all__ = ["make_temporary", "remove_stale"]


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", socket.gethostname())


def make_temporary(folder: str, name: str, kind: str) -> Tuple[int, str]:
    """Open a new temporary file for ``name`` in ``folder``; ``kind`` ("save", "dl") tags it. Returns (fd, path)."""
    return tempfile.mkstemp(prefix=f".{name}.{_host()}.{os.getpid()}.{kind}-", suffix=".tmp", dir=folder)


def remove_stale(folder: str, kind: str) -> None:
    """Remove the temporaries of ``kind`` in ``folder`` that a process of this machine, now gone, left."""
    pattern = re.compile(rf"^\..+\.(?P<host>[A-Za-z0-9_-]*)\.(?P<pid>\d+)\.{re.escape(kind)}-[^.]+\.tmp$")
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    host = _host()
    for entry in entries:
        match = pattern.match(entry)
        if not match or match["host"] != host:
            continue
        pid = int(match["pid"])
        if pid == os.getpid() or _alive(pid):
            continue
        try:
            os.unlink(os.path.join(folder, entry))
        except OSError:
            pass  # gone already, or not ours to remove


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # someone else's process (or a number we cannot ask about): leave its file
    return True
