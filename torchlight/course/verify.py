"""Course tooling: ``verify``, proving, stage by stage, that the student edition works.

For every stage t that has regions, in course order:

1. in an edition solved through the stage before t, ``import torchlight`` works and stage t's
   tests fail, every failure raised by a Task t stub (not an ImportError, not another stage's
   stub, not a wrong answer in code the student was given);
2. in an edition solved through t, stage t's tests pass;
3. once, in the full student edition, grading fails and shows every stage with regions as not
   passed, naming the task not implemented: ``python -m torchlight.grading <those stages> --json``,
   or with ``whole_course=True`` ``python -m torchlight.grading --all --json``. Both grade
   through the same code (``grading.grade_stages``); once every stage has regions they grade the
   same stages. Until then ``--all`` also runs every later module's tests against module 0's
   stubs, which costs minutes where the fast backend tries to compile a stub (see
   docs/instructors.md);
4. in an edition solved through t (the edition of step 2), the notebook that teaches t runs from
   its first cell through t's grading cell (to its end for its last stage) without an error, as
   Run All would run it for a student who has done every stage up to t: a cell that reaches a
   later stage's stub, or fails any other way, is named with the stage it needs
   (``notebook_stages.py``);
5. once, in the edition as handed out (every stage a stub): no solution line appears outside its
   region (``leaks.find_leaks``) and the edition's own ``make lint`` is clean (``lint.lint_edition``).

Step 2 grades stage t alone, not every stage up to t: each earlier stage s passed in its own
step 2 while t was still a stub, so its tests do not reach t's code, and putting t's solution
back cannot change them. ``cumulative=True`` grades every stage up to t all the same.

Speed: one edition is written once, in a temporary folder; between steps only the marked files
are rewritten (a region patched in or out), and each step is one subprocess that grades only the
stages concerned (one pytest run, ``grading.grade_stages``). A step that checks "t passes" and
the next one's "t' fails" need the same edition when no stage with regions lies between them, so
they share a subprocess. The edition has its own numba and kernel caches (``NUMBA_CACHE_DIR``,
``TORCHLIGHT_CACHE_DIR``) and writes no bytecode, so nothing mixes with the checkout's.

The notebook runs of step 4 go alongside the grading, in a second copy of the edition that a
thread patches stage by stage: one fresh interpreter per stage, on the other core. A grading cell
shows the result that step 2 found in the same edition state (the grading subprocess pickles it)
instead of grading again; the notebook's other cells are what costs time.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

from .edition import write_edition
from .leaks import find_leaks
from .lint import lint_edition
from .notebook_stages import NotebookRun, NotebookStage, notebook_plan, run_cells
from .source import Course
from .tasks import notebook_headings, section_of_cell

__all__ = ["verify"]

# Run inside the edition by a fresh interpreter: grade some stages and dump every row as JSON.
_PROBE = r"""
import json, os, pickle, sys, traceback
stages, out, edition = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
save, keep = sys.argv[4], json.loads(sys.argv[5])  # the results that the notebook runs replay
try:
    import torchlight
    from torchlight import grading
    where = os.path.dirname(os.path.dirname(os.path.realpath(torchlight.__file__)))
    if where != os.path.realpath(edition):
        raise ImportError(f"torchlight was imported from {where}, not from the edition")
except BaseException:
    result = {"import_error": traceback.format_exc(limit=-4)}
else:
    graded = grading.grade_stages(stages)
    result = {"stages": {
        r.stage.name: {"passed": r.passed, "problem": r.problem,
                       "rows": [[row.test, row.outcome, row.message, row.task] for row in r.rows]}
        for r in graded}}
    for r in graded:
        if r.stage.name in keep:
            path = os.path.join(save, r.stage.name + ".pickle")
            with open(path + ".part", "wb") as f:
                pickle.dump(r, f)
            os.replace(path + ".part", path)  # whole or not at all: a notebook run may be waiting
with open(out, "w") as f:
    json.dump(result, f)
"""


@dataclass
class _Check:
    """What verify found for one stage."""

    stage: str
    title: str
    regions: int
    without: str = "not run"  # step 1, in words
    with_: str = "not run"  # step 2, in words
    notebook: str = "not run"  # step 4, in words
    problems: List[str] = field(default_factory=list)


@dataclass
class _Probe:
    """One subprocess: the edition with ``solved`` stages, stages that must fail and must pass."""

    solved: FrozenSet[str]
    fail: List[str] = field(default_factory=list)
    pass_: List[Tuple[str, str]] = field(default_factory=list)  # (the stage checked, a stage that must pass)


class _Edition:
    """The one edition that verify patches in place between steps."""

    def __init__(self, course: Course, path: Path):
        self.course, self.path = course, path
        self.current: Dict[str, str] = {p: (path / p).read_text(encoding="utf-8") for p in course.marked_files}
        self.clock = time.time()

    def solve(self, solved: FrozenSet[str]) -> None:
        """Rewrite the marked files so that exactly the stages in ``solved`` keep their solutions."""
        for path in self.course.marked_files:
            text = self.course.render(path, lambda s: s in solved)
            if text != self.current[path]:
                (self.path / path).write_text(text, encoding="utf-8")
                # A new, later mtime each time: caches keyed on (mtime, size) never see a stale file.
                self.clock = max(self.clock + 1.0, time.time())
                os.utime(self.path / path, (self.clock, self.clock))
                self.current[path] = text


def verify(
    course: Course,
    stages: Optional[Sequence[str]] = None,
    *,
    cumulative: bool = False,
    whole_course: bool = False,
    keep: bool = False,
    notebooks: bool = True,
    timeout: float = 1200.0,
    say: Callable[[str], None] = print,
) -> int:
    """Run the checks above for ``stages``; 0 when all hold.

    :param course: the reference course (``Course.load``'s).
    :param stages: the stages to check (default: every stage with regions).
    :param cumulative: with stage t solved, grade every stage up to t.
    :param whole_course: in the full edition, grade the whole course, not only the stages with regions.
    :param keep: keep the temporary edition (its path is said).
    :param notebooks: run each stage's notebook (step 4).
    :param timeout: the seconds one grading or notebook run may take.
    :param say: where progress lines go.
    :raises ValueError: for a stage without regions.
    """
    start = time.perf_counter()
    staged = course.staged()
    todo = list(staged) if not stages else list(stages)
    for t in todo:
        if t not in staged:
            raise ValueError(
                f"stage {t} has no regions to verify; the stages with regions are {', '.join(staged) or 'none'}"
            )
    if not todo:
        say("no stage has solution regions yet: nothing to verify")
        return 1
    order = list(course.stages)
    counts = {s: sum(1 for t in course.tasks if t.stage == s) for s in staged}
    checks = {t: _Check(t, course.stages[t], counts[t]) for t in todo}

    def solved_before(t: str, inclusive: bool) -> FrozenSet[str]:
        i = order.index(t) + (1 if inclusive else 0)
        return frozenset(s for s in staged if order.index(s) < i)

    probes: List[_Probe] = []
    for k, t in enumerate(todo):
        for solved, kind in ((solved_before(t, False), "fail"), (solved_before(t, True), "pass")):
            if not probes or probes[-1].solved != solved:
                probes.append(_Probe(solved))
            if kind == "fail":
                probes[-1].fail.append(t)
            else:
                probes[-1].pass_.extend((t, s) for s in (todo[: k + 1] if cumulative else [t]))

    work = Path(tempfile.mkdtemp(prefix="torchlight-verify-"))
    chain: Optional[_NotebookChain] = None
    try:
        say(f"writing the student edition in {work / 'edition'}")
        write_edition(course, work / "edition", None, git=False)
        say(f"the engine's path in the edition: {_carry_native(course.root, work / 'edition')}")
        fresh = _fresh_edition_problems(course, work / "edition", say)
        edition = _Edition(course, work / "edition")
        env = dict(
            os.environ,
            PYTHONPATH=str(edition.path),
            PYTHONDONTWRITEBYTECODE="1",
            NUMBA_CACHE_DIR=str(work / "numba_cache"),
            TORCHLIGHT_CACHE_DIR=str(work / "torchlight_cache"),
            # Every check runs, each property with 5 random cases: verify asks whether a stage goes
            # red without its code and green with it; the breadth of 25 cases is the suite's job.
            TORCHLIGHT_EXAMPLES=os.environ.get("TORCHLIGHT_EXAMPLES", "5"),
        )
        if notebooks:
            chain = _NotebookChain(course, work, env, todo, lambda t: solved_before(t, True), timeout, say)
            chain.start()
        graded_dir = work / "graded"
        graded_dir.mkdir()
        for probe in probes:
            edition.solve(probe.solved)
            asked = list(dict.fromkeys(probe.fail + [s for _, s in probe.pass_]))
            label = f"solved through {_last(probe.solved, order) or 'nothing'}"
            began = time.perf_counter()
            own = [s for t, s in probe.pass_ if t == s]  # each stage's result with its code, for the notebooks
            found = _run_probe(edition.path, work, asked, env, timeout, graded_dir, own)
            if chain is not None:
                chain.graded(own)
            say(f"  {label:28} graded {', '.join(asked)} in {time.perf_counter() - began:.1f} s")
            for t in probe.fail:
                _judge_without(checks[t], found)
            for t, s in probe.pass_:
                _judge_with(checks[t], s, found, own=t == s)
        edition.solve(frozenset())
        began = time.perf_counter()
        graded = [] if whole_course else staged
        full_ok, table = _full_edition(edition.path, work, env, graded, todo, checks, timeout)
        say(
            f"  {'full student edition':28} graded {', '.join(graded) or '--all'}"
            f" in {time.perf_counter() - began:.1f} s"
        )
        if chain is not None:
            began = time.perf_counter()
            chain.join()
            say(
                f"  {'notebooks':28} {len(chain.runs)} run(s): {chain.seconds:.0f} s ({chain.cpu:.0f} s of CPU)"
                f" beside the grading; verify waited {time.perf_counter() - began:.1f} s for them at the end"
            )
            _judge_notebooks(course, chain, checks)
    finally:
        if chain is not None:
            chain.halt()
        if keep:
            say(f"kept the edition and its caches in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    say("")
    say(
        f"{'':3} {'stage':5} {'title':28} {'regions':>7}  {'without its code':42}  {'with its code':20}"
        + ("  its notebook, solved through it" if notebooks else "")
    )
    for t in todo:
        c = checks[t]
        mark = "ok" if not c.problems else "BAD"
        line = f"{mark:3} {c.stage:5} {c.title[:28]:28} {c.regions:>7}  {c.without:42}  {c.with_:20}"
        say((line + "  " + c.notebook) if notebooks else line.rstrip())
    say("")
    say("full student edition:")
    say("\n".join("    " + line for line in table.splitlines()))
    bad = [c for c in checks.values() if c.problems]
    for c in bad:
        say(f"\nstage {c.stage}:")
        say("\n".join(f"  - {p}" for p in c.problems))
    if fresh:
        say("\nthe fresh edition:")
        say("\n".join(f"  - {p}" for p in fresh))
    ok = not bad and full_ok and not fresh
    wrong = [f"{len(bad)} stage(s) wrong"] + ([] if full_ok else ["the full edition"])
    wrong += [f"{len(fresh)} problem(s) in the fresh edition"] if fresh else []
    verdict = "passed" if ok else f"FAILED ({', '.join(wrong)})"
    say(f"\nverify {verdict}: {len(todo)} stage(s) checked in {time.perf_counter() - start:.0f} s")
    return 0 if ok else 1


def _fresh_edition_problems(course: Course, path: Path, say: Callable[[str], None]) -> List[str]:
    """What is wrong with the edition as handed out: a solution line outside its region (an answer
    shipped in another file), or a finding of the edition's own ``make lint``."""
    began = time.perf_counter()
    problems = [f"answer outside its region: {leak}" for leak in find_leaks(course, path)]
    problems += [f"make lint: {finding}" for finding in lint_edition(path)]
    say(f"  {'fresh edition':28} leak search and make lint in {time.perf_counter() - began:.1f} s")
    return problems


def _last(solved: FrozenSet[str], order: List[str]) -> str:
    return max(solved, key=order.index) if solved else ""


def _carry_native(root: Path, edition: Path) -> str:
    """Copy the checkout's built native apply (compiled from the same source, which has no solution
    region) into the edition, so that the stages are graded with it on: it must leave the student's
    code on the path. Returns which path the edition runs."""
    built = sorted((root / "torchlight").glob("_native_apply*.so")) + sorted(
        (root / "torchlight").glob("_native_apply*.pyd")
    )
    if not built or os.environ.get("TORCHLIGHT_NATIVE") == "0":
        return "python (the native apply is not built here, or TORCHLIGHT_NATIVE=0)"
    for path in built:
        shutil.copy2(path, edition / "torchlight" / path.name)
    return f"native ({built[0].name})"


def _run_probe(
    edition: Path, work: Path, stages: List[str], env: dict, timeout: float, save: Path, keep: List[str]
) -> dict:
    out = work / "probe.json"
    out.unlink(missing_ok=True)
    cmd = [sys.executable, "-c", _PROBE, json.dumps(stages), str(out), str(edition), str(save), json.dumps(keep)]
    try:
        run = subprocess.run(cmd, cwd=edition, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"import_error": f"grading {', '.join(stages)} took longer than {timeout:.0f} s"}
    if not out.exists():
        return {"import_error": f"the grading subprocess died (exit code {run.returncode}):\n{run.stderr[-2000:]}"}
    return json.loads(out.read_text())


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _judge_without(check: _Check, found: dict) -> None:
    t = check.stage
    if "import_error" in found:
        check.without = "import torchlight FAILED"
        check.problems.append(f"solved through the stage before {t}: {found['import_error'].strip()}")
        return
    r = found["stages"][t]
    rows = r["rows"]
    failed = [row for row in rows if row[1] in ("failed", "error")]
    if not rows:
        check.without = "no checks"
        check.problems.append(f"stage {t} has regions but no checks: {r['problem']}")
        return
    check.without = f"{len(failed)} of {len(rows)} fail" + (", all at Task " + t + " stubs" if failed else "")
    if r["passed"] or not failed:
        check.without = "PASSES"
        check.problems.append(f"stage {t} passes with its regions stubbed: its tests do not reach the code it asks for")
    stray = [row for row in failed if row[3] != t]
    if stray:
        check.without = f"{len(stray)} of {len(failed)} failures not from Task {t}"
        for test, outcome, message, task in stray[:5]:
            why = f"the Task {task} stub" if task else _first_line(message) or outcome
            check.problems.append(f"without its code, {test} fails at {why}, not at a Task {t} stub")
        if len(stray) > 5:
            check.problems.append(f"... and {len(stray) - 5} more")


def _judge_with(check: _Check, stage: str, found: dict, own: bool) -> None:
    if "import_error" in found:
        check.with_ = "import torchlight FAILED"
        check.problems.append(f"solved through {check.stage}: {found['import_error'].strip()}")
        return
    r = found["stages"][stage]
    rows = r["rows"]
    passed = sum(1 for row in rows if row[1] == "passed")
    if own:
        check.with_ = f"{passed}/{len(rows)} pass" if r["passed"] else f"FAILS ({passed}/{len(rows)} pass)"
    elif not r["passed"]:
        check.with_ = f"stage {stage} FAILS"
    if not r["passed"]:
        failed = [row for row in rows if row[1] in ("failed", "error")]
        check.problems.append(
            f"solved through {check.stage}, stage {stage} does not pass: {r['problem'] or ''}".rstrip(": ")
        )
        for test, outcome, message, _ in failed[:5]:
            check.problems.append(f"  {test}: {outcome}: {_first_line(message)}")


def _full_edition(
    edition: Path, work: Path, env: dict, graded: List[str], todo: List[str], checks: Dict[str, _Check], timeout: float
):
    """Step 3: grading ``graded`` (or --all) in the full student edition; returns (all as expected, a table)."""
    out = work / "gradescope.json"
    cmd = [sys.executable, "-m", "torchlight.grading", *(graded or ["--all"]), "--json", str(out)]
    try:
        run = subprocess.run(cmd, cwd=edition, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        for t in todo:
            checks[t].problems.append(f"grading --all in the full student edition took longer than {timeout:.0f} s")
        return False, ""
    ok = True
    if run.returncode != 1:
        ok = False
        checks[todo[0]].problems.append(
            f"grading in the full student edition exited with {run.returncode}, not 1:\n{run.stderr[-2000:]}"
        )
    results: Dict[str, Any] = json.loads(out.read_text()) if out.exists() else {"tests": [], "output": ""}
    entries = {e["number"]: e for e in results["tests"]}
    for t in todo:
        entry = entries.get(t)
        summary = _first_line(entry["output"]) if entry else ""
        if entry is None or entry["status"] == "passed" or "not implemented: " not in summary:
            ok = False
            checks[t].problems.append(
                f"in the full student edition grading should show stage {t} as not implemented; it shows: "
                + (summary or "nothing")
            )
    return ok, results["output"]


class _NotebookChain(threading.Thread):
    """Step 4, beside the grading: for each stage t, in course order, a second copy of the edition
    is solved through t and t's notebook is run through t's grading cell in a fresh interpreter.

    The grading cells replay what step 2 found (the pickles in ``work/graded``): the run for t
    waits at a grading cell until the main thread's probe has graded that stage, or grades it
    itself when no result comes (``graded`` leaves a ``.none`` file for a stage without one).
    """

    def __init__(
        self,
        course: Course,
        work: Path,
        env: dict,
        todo: List[str],
        solved: Callable[[str], FrozenSet[str]],
        timeout: float,
        say: Callable[[str], None],
    ):
        super().__init__(name="torchlight-verify-notebooks", daemon=True)
        self.course, self.todo, self.solved, self.timeout, self.say = course, todo, solved, timeout, say
        self.plan = notebook_plan(course.root, todo)
        self.graded_dir = work / "graded"
        self.work = work / "notebook-runs"
        # A copy of the edition before any step patched it (the native apply carried in too).
        shutil.copytree(work / "edition", work / "notebook-edition", symlinks=True)
        self.edition = _Edition(course, work / "notebook-edition")
        # Kernel caches of its own: the two editions are patched to different stages at the same
        # time, and a kernel cache removes the files of a kernel whose code has changed as stale,
        # so a shared cache would have each side delete the other's kernels mid-run.
        self.env = dict(
            env,
            PYTHONPATH=str(self.edition.path),
            NUMBA_CACHE_DIR=str(work / "notebook_numba_cache"),
            TORCHLIGHT_CACHE_DIR=str(work / "notebook_torchlight_cache"),
        )
        self.runs: Dict[str, NotebookRun] = {}
        self.seconds = 0.0  # running cells, not waiting for grading results
        self.cpu = 0.0
        self.failure = ""  # what stopped the thread, if anything did
        self._halt = threading.Event()

    def graded(self, stages: Sequence[str]) -> None:
        """The main thread graded ``stages``: where no result was saved, say so to a waiting run."""
        for s in stages:
            path = self.graded_dir / f"{s}.pickle"
            if not path.exists():
                Path(f"{path}.none").touch()

    def halt(self) -> None:
        """Stop after the current run (which finds every result given up on), and wait for it."""
        self._halt.set()
        self.graded_dir.mkdir(exist_ok=True)
        self.graded(self.todo)
        self.join()

    def run(self) -> None:
        order = list(self.course.stages)
        try:
            for t in self.todo:
                item = self.plan[t]
                if self._halt.is_set() or not isinstance(item, NotebookStage):
                    continue
                self.edition.solve(self.solved(t))
                replay = {s: self.graded_dir / f"{s}.pickle" for s in self.todo if order.index(s) <= order.index(t)}
                run = run_cells(
                    self.edition.path,
                    item.notebook,
                    item.stop,
                    env=self.env,
                    work=self.work,
                    replay=replay,
                    wait=self.timeout,
                    timeout=2 * self.timeout,
                )
                self.runs[t] = run
                self.seconds += run.seconds - run.waited
                self.cpu += run.cpu
                state = "ok" if run.ok else f"FAILS at cell {run.cell + 1}" if run.cell is not None else "FAILS"
                waited = f" (and {run.waited:.1f} s waiting for grading)" if run.waited >= 0.05 else ""
                self.say(
                    f"  {'solved through ' + t:28} ran {item.notebook.split('/')[-1]} cells 1-{item.stop}:"
                    f" {state} in {run.seconds - run.waited:.1f} s{waited}"
                )
        except Exception as exc:  # reported as every remaining stage's problem, not lost in a thread
            self.failure = f"{type(exc).__name__}: {exc}"


def _judge_notebooks(course: Course, chain: _NotebookChain, checks: Dict[str, _Check]) -> None:
    order = list(course.stages)
    headings: Dict[str, list] = {}
    for t, check in checks.items():
        item, run = chain.plan[t], chain.runs.get(t)
        if isinstance(item, str):  # nothing to run (tests/test_notebook_stages.py asks for a section)
            check.notebook = "no notebook section"
            continue
        if run is None:
            check.notebook = "not run"
            check.problems.append(f"{item.notebook} was not run for it: {chain.failure or 'the runs stopped'}")
            continue
        if run.ok:
            check.notebook = f"cells 1-{item.stop} run ({run.seconds - run.waited:.0f} s)"
            if item.grading is None:
                check.notebook += ", no grading cell"
            continue
        if run.cell is None:
            check.notebook = "could not run"
            check.problems.append(f"solved through {t}, {item.notebook} could not be run: {run.detail}")
            continue
        if item.notebook not in headings:
            cells = json.loads((course.root / item.notebook).read_text(encoding="utf-8"))["cells"]
            headings[item.notebook] = notebook_headings(cells)
        section = section_of_cell(run.cell, headings[item.notebook])
        where = f"{item.notebook}, cell {run.cell + 1}" + (f' (section "{section}")' if section else "")
        if run.stub and order.index(run.stub) > order.index(t):
            check.notebook = f"cell {run.cell + 1} needs {run.stub}"
            check.problems.append(
                f"solved through {t}, {where} reaches the stub of Task {run.stub}, a later stage: {run.error}"
            )
        elif run.cell == item.grading:
            check.notebook = f"grading cell {run.cell + 1} fails"
            check.problems.append(f"solved through {t}, {where}, its grading cell, fails: {run.error}")
        else:
            check.notebook = f"cell {run.cell + 1} fails"
            detail = "\n".join("      " + line for line in run.detail.splitlines()[-4:])
            check.problems.append(f"solved through {t}, {where} fails: {run.error}\n{detail}")
