"""Course tooling: grading a stage: pytest over its checks, in this process or in a child, into a :class:`GradeResult`.

``grade("1.3")`` runs in this process by default, so that a notebook's grading cell sees the code
as the kernel has it. ``grade_stages`` (the command line, ``--all``, ``--json``, ``course
verify``) runs the checks in a child process that the grader judges from outside (``child.py``):
then nothing the student's code does (an endless loop, ``os._exit``, a patched grader) changes
the grade beyond failing its own checks.
"""

import contextlib
import io
import os
import re
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import child
from .collector import Collector, import_hypothesis
from .results import GradeResult, Row, StageFailed
from .stage import CHECKOUT, CHECKOUT_HELP, Stage, find_stage, stage_key, stages

__all__ = ["Graded", "TIME_LIMIT", "grade", "grade_stages", "run_stages"]

# Seconds one check may run in a child process before it is stopped and fails as timed out.
TIME_LIMIT = float(os.environ.get("TORCHLIGHT_TIME_LIMIT", "60"))


@dataclass
class Graded:
    """One grading run: a result per stage, pytest's own output, and the wall time."""

    results: List[GradeResult]
    output: str
    seconds: float


def grade(
    stage: Union[str, int, float],
    *,
    strict: bool = False,
    show: bool = True,
    tests_dir: Optional[Union[str, Path]] = None,
    isolated: bool = False,
    time_limit: Optional[float] = None,
) -> GradeResult:
    """Run the checks of ``stage`` (``"1.3"``, ``"task1_3"``, or ``"1"`` for a module) and show the table.

    Returns a :class:`GradeResult`; ``result.passed`` says whether every check passed. With
    ``strict=True`` a stage that does not pass raises :class:`StageFailed` after the table is
    shown. ``tests_dir`` replaces the checkout's ``tests/`` folder (for testing the grader).
    The checks run in this process (they see the code as it is now, notebook changes included);
    ``isolated=True`` runs them in a child process with a ``time_limit`` per check, as
    ``grade_stages`` does.

    :param stage: ``"1.3"``, ``"task1_3"``, or ``"1"`` for a module.
    :param strict: raise StageFailed when the stage does not pass.
    :param show: show the table.
    :param tests_dir: a folder to take the checks from in place of the checkout's ``tests/``.
    :param isolated: run the checks in a child process.
    :param time_limit: the seconds one check may run (default ``TIME_LIMIT``).
    :returns: the stage's GradeResult.
    :raises ValueError: for an unknown stage.
    """
    chosen = find_stage(stage)
    tests = Path(tests_dir) if tests_dir is not None else CHECKOUT / "tests"
    folder = tests / f"module{chosen.module}"
    if not folder.is_dir():
        raise FileNotFoundError(f"grading found no test folder {folder}. {CHECKOUT_HELP}")
    (result,) = run_stages([chosen], tests=tests, isolated=isolated, time_limit=time_limit).results
    if show:
        result.show()
    if strict and not result.passed:
        raise StageFailed(result.summary())
    return result


def grade_stages(
    names: Sequence[Union[str, int, float]] = (),
    *,
    tests_dir: Optional[Union[str, Path]] = None,
    root: Optional[Union[str, Path]] = None,
    isolated: bool = True,
    time_limit: Optional[float] = None,
) -> List[GradeResult]:
    """Grade several stages in one pytest run: one :class:`GradeResult` per task stage, in course order.

    ``names`` are stages as for :func:`grade`; a module stands for each of its stages, and no
    names means the whole course. A test file that cannot be imported is an error row in every
    chosen stage of its module. A stage whose module has no test folder gets no checks.
    ``root`` is the checkout or edition graded (default: the one this grader belongs to; its
    ``setup.cfg`` lists the stages, its ``tests/`` holds the checks). The checks run in a child
    process (``isolated=False``: in this one), each for at most ``time_limit`` seconds
    (default ``TIME_LIMIT``, 60 s, or the environment's ``TORCHLIGHT_TIME_LIMIT``).

    :param names: the stages, as for grade (none: the whole course).
    :param tests_dir: a folder to take the checks from in place of the checkout's ``tests/``.
    :param root: the checkout or edition graded (default: the one this grader belongs to).
    :param isolated: run the checks in a child process (False: in this one).
    :param time_limit: the seconds one check may run (default ``TIME_LIMIT``).
    :returns: one GradeResult per task stage, in course order.
    """
    base = Path(root).resolve() if root is not None else CHECKOUT
    chosen = expand(names, base)
    tests = Path(tests_dir) if tests_dir is not None else base / "tests"
    return run_stages(chosen, root=base, tests=tests, isolated=isolated, time_limit=time_limit).results


def expand(names: Sequence[Union[str, int, float]], root: Path) -> List[Stage]:
    """The task stages ``names`` stand for (a module: each of its stages; none: every stage), in course order."""
    known = stages(root)
    picked = [find_stage(n, root) for n in names] or list(known.values())
    chosen: List[Stage] = []
    for stage in picked:
        tasks = [stage]
        if stage.task is None:  # a module: its stages
            tasks = [s for s in known.values() if s.module == stage.module and s.task is not None]
        chosen.extend(t for t in tasks if t not in chosen)
    chosen.sort(key=lambda s: (s.module, s.task or 0))
    return chosen


def run_stages(
    chosen: Sequence[Stage],
    *,
    tests: Path,
    root: Optional[Path] = None,
    isolated: bool = True,
    time_limit: Optional[float] = None,
    expected: Optional[Dict[str, str]] = None,
    env: Optional[Dict[str, str]] = None,
    user: Optional[Tuple[int, int]] = None,
) -> Graded:
    """Grade ``chosen`` (task or module stages) in one pytest run over ``tests``; the results in that order.

    ``root``: where the child process starts and imports torchlight from (default: this checkout).
    ``expected``: node id -> stage of every check there must be (see ``child.run_isolated``).
    ``user``: the (uid, gid) the child process runs as (default: this process's).
    """
    start = time.perf_counter()
    if not tests.is_dir():
        raise FileNotFoundError(f"grading found no test folder {tests}. {CHECKOUT_HELP}")
    results = {s.name: GradeResult(s) for s in chosen}
    folders = sorted({tests / f"module{s.module}" for s in chosen if (tests / f"module{s.module}").is_dir()})
    code, output = 0, ""
    if folders:
        args = _pytest_args(folders, " or ".join(s.marker for s in chosen))
        if isolated:
            limit = time_limit if time_limit is not None else TIME_LIMIT
            report = child.run_isolated(root or CHECKOUT, args, time_limit=limit, expected=expected, env=env, user=user)
            broken, rows, output = report.broken, report.rows, report.output
            code = report.code if report.code is not None else 1
            if report.problem:
                code, output = 4, output + "\n" + report.problem
        else:
            broken, rows, code, output = _here(args)
        for raw in broken:
            row, module = _as_row(raw), _module_of(raw["nodeid"])
            for result in results.values():
                if module is None or result.stage.module == module:
                    result.rows.append(row)
        # in collection order (file by file), but stage by stage when grading a whole module
        for raw in sorted(rows, key=lambda r: stage_key(r["stage"])):
            row, module = _as_row(raw), _module_of(raw["nodeid"])
            for result in results.values():
                stage = result.stage
                if (stage.task is None and module == stage.module) or row.stage == stage.name:
                    result.rows.append(row)
    for result in results.values():
        result.seconds = sum(row.seconds for row in result.rows)
        _explain(result, code, output, f"{tests.name}/module{result.stage.module}")
    return Graded(list(results.values()), output, time.perf_counter() - start)


def _pytest_args(folders: Sequence[Path], markexpr: str) -> List[str]:
    return [
        *(str(f) for f in folders),
        "-m",
        markexpr,
        "-p",
        "no:cacheprovider",  # write nothing into the checkout
        "-p",
        "no:faulthandler",  # leaves the notebook kernel's (or outer pytest's) stderr alone
        # pytest's unraisableexception plugin turns errors that Python cannot raise (in __del__)
        # into warnings, which no grade shows; it ends each run with full garbage collections,
        # 0.3-0.7 s in a notebook's process, for every grading cell.
        "-p",
        "no:unraisableexception",
        "-W",  # hypothesis is imported before pytest starts (collector.import_hypothesis)
        "ignore::pytest.PytestAssertRewriteWarning",
        "--import-mode=importlib",  # no sys.path changes in the caller's process
        "--continue-on-collection-errors",  # one broken file must not hide every other result
        # Python's own traceback text: the table shows only each failure's message and example,
        # and pytest's long style re-parses source files per frame (minutes for a whole edition)
        "--tb=native",
    ]


def _here(args: List[str]):
    """Run pytest in this process, quietly: (broken files, rows, exit status, pytest's output)."""
    try:
        import pytest
    except ImportError:
        raise ImportError("grading runs the tests with pytest: pip install -e '.[test]'") from None
    import_hypothesis()
    collector = Collector()
    output = io.StringIO()
    # pytest reports to sys.stdout; the table is the only output the user should see.
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output), warnings.catch_warnings():
        code = pytest.main(args, plugins=[collector])
    rows = collector.results()[len(collector.broken) :]
    return collector.broken, rows, int(code), output.getvalue()


def _as_row(raw: Dict[str, Any]) -> Row:
    return Row(raw["test"], raw["stage"], raw["outcome"], raw["message"], raw["seconds"], raw["task"], raw["nodeid"])


def _module_of(nodeid: str) -> Optional[int]:
    m = re.search(r"(?:^|/)module(\d+)/", nodeid.replace("\\", "/"))
    return int(m.group(1)) if m else None


def _explain(result: GradeResult, code: int, output: str, where: str) -> None:
    """Set ``result.problem`` when the stage cannot pass although no row failed."""
    stage = result.stage
    if code in (2, 3, 4):  # interrupted, internal error, usage error
        tail = "\n".join(output.strip().splitlines()[-8:])
        result.problem = f"pytest could not run the checks (exit code {code}):\n{tail}"
    elif not result.rows:
        result.problem = (
            f"no checks found: nothing in {where} is marked {stage.marker}, so there is nothing to pass yet"
        )
    elif not result.counts.get("passed") and not result.failures:
        result.problem = "every check was skipped: " + result.rows[0].message
