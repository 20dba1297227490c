"""Course tooling: an autograder's run: the student's files put into a pristine edition and graded; results.json always.

An autograder bundle (``python -m torchlight.course autograder OUT.zip``, see
``torchlight/course/autograder.py``) is laid out as Gradescope lays it out, under
``$AUTOGRADER_ROOT`` (default ``/autograder``)::

    source/autograder.json   what to grade: the stages, the time limit per check, partial credit,
                             the student's files, every expected check and those given
    source/edition/          the edition as handed out, with the reference's tests
    source/reference/        the solved reference (its code and probes), for the judged values
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
3. judges each stage's values (``judged.py``): its probes, run in the submission and in the
   reference for a seed drawn now, must agree; a stage passes only when its checks pass and its
   values agree, and its partial credit is at most the share of values that agree. Run as root
   (Gradescope does), the submission's processes run as ``nobody`` (``$AUTOGRADER_USER``; empty:
   as root), and the reference is made unreadable to them first;
4. writes results.json (``results.gradescope``), the files taken and those missing listed first
   in its output. If the grader itself fails, results.json says so, with a score of 0.

This process imports nothing of torchlight, so nothing of the submission runs in it.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import judged, processes
from .child import COLLECT_FACTOR
from .cli import write_results
from .results import JUDGED, GradeResult, Row, gradescope
from .runner import run_stages
from .stage import find_stage

__all__ = ["CONFIG", "attach", "grade_submission", "main", "take_files"]

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
    reference = source / "reference"
    user = processes.unprivileged(os.environ.get("AUTOGRADER_USER", "nobody"))
    if user is not None and reference.is_dir():
        os.chmod(reference, 0o700)  # root's alone: the submission's processes run as another user
    # The reference's caches in a folder of their own, and its probes run first: nothing of the
    # submission has run yet, nor can it reach that folder later.
    with (
        tempfile.TemporaryDirectory(prefix="torchlight-reference-") as own,
        tempfile.TemporaryDirectory(prefix="torchlight-autograder-") as tmp,
    ):
        work = Path(tmp) / "edition"
        shutil.copytree(source / "edition", work, ignore=_CACHES)
        taken, missing = take_files(submission, work, config["student_files"])
        env = _environment(Path(tmp))
        processes.hand_over([Path(tmp)], user)
        _check_user(user, env, work)
        # The reference's values first, before any code of the submission has run.
        limit = COLLECT_FACTOR * float(config["time_limit"])  # a stage's probes: imports, kernels, values
        want = None
        if reference.is_dir():
            want = judged.reference_values(reference, config["stages"], time_limit=limit, env=_environment(Path(own)))
        graded = run_stages(
            [find_stage(name, work) for name in config["stages"]],
            tests=work / "tests",
            root=work,
            time_limit=float(config["time_limit"]),
            expected=config["expected"],
            env=env,
            user=user,
        )
        if want is not None:
            # Without partial credit a stage whose checks fail scores 0 whatever its values: only
            # the others are judged (an endless loop is not waited for twice).
            partial = bool(config.get("partial_credit"))
            chosen = [r.stage.name for r in graded.results if partial or r.passed]
            verdicts = judged.judge(work, want, chosen, time_limit=limit, env=env, user=user)
            for result in graded.results:
                if result.stage.name in verdicts:
                    attach(result, verdicts[result.stage.name])
    out = gradescope(
        graded.results,
        partial_credit=bool(config.get("partial_credit")),
        given=config["given"],
        execution_time=time.perf_counter() - start,
    )
    out["output"] = _files_note(taken, missing) + "\n\n" + out["output"]
    return out


def attach(result: GradeResult, verdict: judged.Verdict) -> None:
    """Add a stage's judged values to its result: one row, which must pass for the stage to pass."""
    passed = verdict.passed
    message = "" if passed else f"{verdict.agreed} of {verdict.total} values agree with the reference's; "
    stub = re.search(r"raised NotImplementedError: Task (\d+\.\d+)", verdict.message)
    row = Row(
        "judged values (computed by your code, compared with the reference's)",
        result.stage.name,
        "passed" if passed else "failed",
        "" if passed else (message + verdict.message)[:2000],
        0.0,
        stub.group(1) if stub and not passed else "",  # a stub's, as a check that reached it says
        JUDGED + result.stage.name,
    )
    result.rows.append(row)
    result.judged = (verdict.agreed, verdict.total)


def _environment(folder: Path) -> Dict[str, str]:
    """The child processes' environment: their caches and home, made under ``folder``; no bytecode files."""
    env = dict(
        os.environ,
        HOME=str(folder / "home"),
        PYTHONDONTWRITEBYTECODE="1",
        NUMBA_CACHE_DIR=str(folder / "cache" / "numba"),
        TORCHLIGHT_CACHE_DIR=str(folder / "cache" / "kernels"),
    )
    for name in ("HOME", "NUMBA_CACHE_DIR", "TORCHLIGHT_CACHE_DIR"):
        Path(env[name]).mkdir(parents=True, exist_ok=True)
    return env


def _check_user(user: Optional[Tuple[int, int]], env: Dict[str, str], work: Path) -> None:
    """Fail now, with the reason, if ``user`` cannot run Python on the edition (an unreadable venv)."""
    if user is None:
        return
    try:
        done = subprocess.run(
            [sys.executable, "-c", "import numpy"],  # (not torchlight: no code of the submission runs yet)
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            **processes.as_user(user),
        )
        problem = done.stderr[-2000:] if done.returncode else ""
    except OSError as e:
        problem = str(e)
    if problem:
        raise RuntimeError(
            f"the submission's processes run as uid {user[0]} (AUTOGRADER_USER, default nobody), which cannot "
            f"run {sys.executable} on the edition: make the Python and its virtual environment readable to every "
            "user, or set AUTOGRADER_USER= (empty) to grade as this user, which can then read the reference.\n"
            + problem
        )


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
