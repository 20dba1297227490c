"""Course tooling: the grader's child processes: run as another user, stopped with all they started.

Where the grader runs as root (Gradescope's autograder), the submission's processes run as an
unprivileged user (:func:`unprivileged`), in folders handed over to it (:func:`hand_over`), so
that they cannot read what root keeps to itself (the reference) or signal the grader.
"""

import os
import signal
import subprocess
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Tuple

__all__ = ["as_user", "hand_over", "kill", "unprivileged"]


def unprivileged(name: str = "nobody") -> Optional[Tuple[int, int]]:
    """(uid, gid) of user ``name`` for the submission's processes when this process is root; else
    None (they run as this process does: as root they could read the reference)."""
    if os.name != "posix" or os.geteuid() != 0 or not name:
        return None
    import pwd

    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise RuntimeError(f"there is no user {name!r} to run the submission as; set AUTOGRADER_USER to one") from None
    return entry.pw_uid, entry.pw_gid


def hand_over(paths: Sequence[Path], user: Optional[Tuple[int, int]]) -> None:
    """Make ``paths`` (and everything under them) ``user``'s, so that its processes can work there."""
    if user is None:
        return
    for path in paths:
        path.mkdir(parents=True, exist_ok=True)
        os.chown(path, *user)
        for folder, dirs, files in os.walk(path):
            for name in dirs + files:
                os.chown(os.path.join(folder, name), *user, follow_symlinks=False)


def as_user(user: Optional[Tuple[int, int]]) -> Dict[str, Any]:
    """subprocess.Popen's arguments that start a process as ``user`` (none for None)."""
    return {"user": user[0], "group": user[1], "extra_groups": []} if user else {}


def kill(proc: subprocess.Popen, grace: float) -> None:
    """Stop the child and anything it started (its process group), after ``grace`` seconds."""
    if grace and proc.poll() is None:
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    if os.name == "posix":
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if proc.poll() is None:
        proc.kill()
    proc.wait()
