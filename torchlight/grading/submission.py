"""Course tooling: an autograder's run: the student's files put into a pristine edition and graded; results.json always.

An autograder bundle (``python -m torchlight.course autograder OUT.zip``, see
``torchlight/course/autograder.py``) is laid out as Gradescope lays it out, under
``$AUTOGRADER_ROOT`` (default ``/autograder``)::

    source/autograder.json   what to grade: the stages, the time limit per check, partial credit,
                             the student's files, every expected check and those given
    source/edition/          the edition as handed out, with the reference's tests
    source/grader/           the instructor's grader: this package as ``torchlight_grading``, and
                             run.py, which ``run_autograder`` runs and which calls :func:`main`
    submission/              what the student handed in
    results/results.json     what :func:`main` writes, whatever happens

:func:`main`:

1. copies the edition to a fresh folder and over it **only the student's files** (the files that
   hold solution regions), each found in the submission at its path in the edition (also one or
   two folders down, as a zipped repository has it) or, uploaded alone, by its name; never a test,
   a grader, a setup.cfg or anything else of the submission; a link or a file outside the
   submission is not taken;
2. grades the stages there in a child process (``child.py``): every expected check accounted for,
   each with the time limit, the key-signed report judged from outside;
3. writes results.json (``results.gradescope``), the files taken and those missing listed first
   in its output. If the grader itself fails, results.json says so, with a score of 0.

This process imports nothing of torchlight, so nothing of the submission runs in it.
"""

import json
import os
import shutil
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .cli import write_results
from .results import gradescope
from .runner import run_stages
from .stage import find_stage

__all__ = ["CONFIG", "grade_submission", "main", "take_files"]

CONFIG = "autograder.json"
_CACHES = shutil.ignore_patterns("__pycache__", ".hypothesis", ".pytest_cache", "*.pyc")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Grade ``$AUTOGRADER_ROOT/submission`` and write ``$AUTOGRADER_ROOT/results/results.json``.

    Exit status 0 whenever results.json holds the submission's grade (a submission that fails
    every check included); 1 when the grader itself failed (results.json then says so).
    """
    start = time.perf_counter()
    root = Path(os.environ.get("AUTOGRADER_ROOT", "/autograder"))
    target = root / "results" / "results.json"
    target.unlink(missing_ok=True)  # nothing from before stands in for this run's results
    try:
        out = grade_submission(root / "source", root / "submission", start=start)
        status = 0
    except Exception:
        out = {
            "score": 0.0,
            "execution_time": round(time.perf_counter() - start),
            "output": "The autograder itself failed, not your code: please tell your instructor.\n\n"
            + traceback.format_exc(),
            "tests": [],
        }
        status = 1
    write_results(target, out)
    print(out["output"])
    return status


def grade_submission(source: Path, submission: Path, *, start: Optional[float] = None) -> Dict[str, Any]:
    """Gradescope's results for ``submission``, graded as ``source/autograder.json`` says."""
    start = time.perf_counter() if start is None else start
    config = json.loads((source / CONFIG).read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="torchlight-autograder-") as tmp:
        work = Path(tmp) / "edition"
        shutil.copytree(source / "edition", work, ignore=_CACHES)
        taken, missing = take_files(submission, work, config["student_files"])
        env = dict(
            os.environ,
            PYTHONDONTWRITEBYTECODE="1",
            NUMBA_CACHE_DIR=str(Path(tmp) / "cache" / "numba"),
            TORCHLIGHT_CACHE_DIR=str(Path(tmp) / "cache" / "kernels"),
        )
        graded = run_stages(
            [find_stage(name, work) for name in config["stages"]],
            tests=work / "tests",
            root=work,
            time_limit=float(config["time_limit"]),
            expected=config["expected"],
            env=env,
        )
    out = gradescope(
        graded.results,
        partial_credit=bool(config.get("partial_credit")),
        given=config["given"],
        execution_time=time.perf_counter() - start,
    )
    out["output"] = _files_note(taken, missing) + "\n\n" + out["output"]
    return out


def take_files(submission: Path, work: Path, files: Sequence[str]) -> Tuple[List[str], List[str]]:
    """Copy each of ``files`` (paths in the edition) from ``submission`` into ``work``: (taken, missing)."""
    inside = submission.resolve()
    bases = [
        submission,
        *sorted(p.parent for p in submission.glob("*/torchlight")),
        *sorted(p.parent for p in submission.glob("*/*/torchlight")),
    ]
    names = [Path(f).name for f in files]
    taken, missing = [], []
    for path, name in zip(files, names, strict=True):
        candidates = [base / path for base in bases]
        if names.count(name) == 1:
            candidates.append(submission / name)  # uploaded on its own
        found = next((c for c in candidates if _regular_inside(c, inside)), None)
        if found is None:
            missing.append(path)
            continue
        (work / path).write_bytes(found.read_bytes())
        taken.append(path)
    return taken, missing


def _regular_inside(path: Path, inside: Path) -> bool:
    """A plain file (not a link) that really lies in the submission."""
    try:
        return path.is_file() and not path.is_symlink() and inside in path.resolve().parents
    except OSError:
        return False


def _files_note(taken: List[str], missing: List[str]) -> str:
    lines = [f"Graded with your files ({len(taken)} of {len(taken) + len(missing)}): {_some(taken) or 'none'}."]
    if not taken:
        lines[0] += " (Hand in your repository, or the files you changed, at their paths in it.)"
    if missing:
        lines.append(f"Not in your submission, so graded as handed out: {_some(missing)}.")
    lines.append("Only these files are taken from a submission; the tests and the grader are the course's own.")
    return "\n".join(lines)


def _some(paths: List[str], most: int = 8) -> str:
    return ", ".join(paths[:most]) + (f" and {len(paths) - most} more" if len(paths) > most else "")
