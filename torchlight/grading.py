"""Course tooling: grading, which runs one stage's checks and shows which pass.

A stage is one task of a course module, named ``"1.3"`` (module 1, task 3). Its checks are the
tests in ``tests/module1/`` marked ``task1_3``: property tests and central-difference checks.
``grade("1.3")`` runs them in this Python process (so it sees the code as it is now, including
anything changed in a notebook), shows a pass/fail table and returns a :class:`GradeResult`.

In a notebook::

    from torchlight import grading
    result = grading.grade("1.3")
    assert result.passed

On the command line: ``python -m torchlight.grading 1.3`` (or ``1`` for all of module 1);
``--all`` grades the whole course into one table (``grade_stages``, ``course_table``), and
``--json PATH`` also writes Gradescope's results format (``gradescope``).

The stages and their titles are the ``taskN_K`` markers registered in ``setup.cfg``; the tests
ship with the source checkout, not with an installed package, so grading needs the checkout.
"""

import argparse
import configparser
import contextlib
import functools
import html
import io
import json
import re
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import torchlight

__all__ = [
    "GradeResult",
    "Row",
    "Stage",
    "StageFailed",
    "course_table",
    "grade",
    "grade_stages",
    "gradescope",
    "stages",
]

_CHECKOUT = Path(torchlight.__file__).resolve().parents[1]
_CHECKOUT_HELP = (
    "grading runs the course's test suite, which comes with the source checkout, not with an "
    "installed package. Get the checkout and install it in editable mode:\n"
    "    git clone <torchlight repository> torchlight && cd torchlight && pip install -e '.[test]'"
)
_TASK = re.compile(r"^task(\d+)_(\d+)$")
_MODULE = re.compile(r"^module(\d+)$")


class StageFailed(AssertionError):
    """Raised by ``grade(..., strict=True)`` when a stage does not pass."""


@dataclass(frozen=True)
class Stage:
    """One gradable unit: a task (``"1.3"``) or a whole module (``"1"``)."""

    module: int
    task: Optional[int]
    title: str

    @property
    def name(self) -> str:
        return f"{self.module}" if self.task is None else f"{self.module}.{self.task}"

    @property
    def label(self) -> str:
        return f"Module {self.module}" if self.task is None else f"Stage {self.name}"

    @property
    def marker(self) -> str:
        return f"module{self.module}" if self.task is None else f"task{self.module}_{self.task}"


@dataclass
class Row:
    """The outcome of one check."""

    test: str  # file::function[params], relative to tests/moduleN/
    stage: str  # "1.3", or "" when a file could not even be collected
    outcome: str  # "passed", "failed", "error" (outside the test body) or "skipped"
    message: str = ""  # why it failed or was skipped, shortened
    seconds: float = 0.0
    task: str = ""  # "1.3" when it failed in a student edition's stub for Task 1.3, else ""


@dataclass
class GradeResult:
    """What ``grade`` found: the rows of the table, their counts and ``passed``."""

    stage: Stage
    rows: List[Row] = field(default_factory=list)
    problem: str = ""  # why the stage cannot pass although no row failed (e.g. no tests found)
    seconds: float = 0.0

    @property
    def counts(self) -> Dict[str, int]:
        """Number of checks per outcome, e.g. ``{"passed": 11, "failed": 1}``."""
        counts: Dict[str, int] = {}
        for row in self.rows:
            counts[row.outcome] = counts.get(row.outcome, 0) + 1
        return counts

    @property
    def total(self) -> int:
        return len(self.rows)

    @property
    def failures(self) -> List[Row]:
        return [r for r in self.rows if r.outcome in ("failed", "error")]

    @property
    def passed(self) -> bool:
        """True when at least one check ran and every check passed (skips aside)."""
        return not self.problem and not self.failures and self.counts.get("passed", 0) > 0

    @property
    def not_implemented(self) -> List[str]:
        """The tasks (``["0.1"]``) whose stubs caused every failure; empty if any failure is a real one.

        In a student edition an unwritten function raises ``NotImplementedError("Task 0.1: ...")``;
        a stage whose only failures are such stubs has not been started rather than got wrong.
        """
        failures = self.failures
        if self.problem or not failures or any(not row.task for row in failures):
            return []
        return sorted({row.task for row in failures}, key=_stage_key)

    @property
    def state(self) -> str:
        """One word or phrase for a course table: passed, NOT PASSED, not implemented: Task N.K, ..."""
        if self.passed:
            return "passed"
        if not self.rows and self.problem:
            return "no checks yet"
        if self.rows and all(row.outcome == "skipped" for row in self.rows):
            return "skipped"
        if self.not_implemented:
            return "not implemented: " + ", ".join(f"Task {t}" for t in self.not_implemented)
        return "NOT PASSED"

    @property
    def counted(self) -> bool:
        """Whether the stage asks anything of the student: it has checks and not all were skipped."""
        return self.state not in ("no checks yet", "skipped")

    def summary(self) -> str:
        """One line: the stage and how it went."""
        head = f"{self.stage.label} ({self.stage.title})"
        if self.problem:
            return f"{head}: NOT PASSED. {self.problem}"
        counts = self.counts
        parts = [f"{counts[k]} {k}" for k in ("passed", "failed", "error", "skipped") if counts.get(k)]
        verdict = "PASSED" if self.passed else "NOT PASSED"
        if self.not_implemented:
            verdict += f" ({self.state})"
        return f"{head}: {verdict}, {', '.join(parts)} in {self.seconds:.1f} s"

    def table(self) -> List[Row]:
        """The rows as shown: the cases of one parametrized test folded into one row."""
        groups: Dict[Tuple[str, str], List[Row]] = {}
        for row in self.rows:
            groups.setdefault((row.stage, row.test.split("[", 1)[0]), []).append(row)
        shown = []
        for (stage, test), rows in groups.items():
            if len(rows) == 1:
                shown.append(rows[0])
                continue
            worst = max(rows, key=lambda r: _WORST.index(r.outcome))
            bad = [r for r in rows if r.outcome != "passed"]
            label = f"{test}  ({len(rows)} cases)"
            if bad:
                label = f"{test}  ({len(bad)} of {len(rows)} cases {worst.outcome})"
            notes = [f"[{r.test.partition('[')[2].rstrip(']')}] {r.message}" for r in bad[:3]]
            if len(bad) > 3:
                notes.append(f"... and {len(bad) - 3} more")
            shown.append(Row(label, stage, worst.outcome, "\n".join(notes), sum(r.seconds for r in rows)))
        return shown

    def to_text(self) -> str:
        """The table as plain text."""
        lines = [self.summary()]
        for row in self.table():
            lines.append(f"  {_MARK[row.outcome]:4}  {self._label(row)}")
            lines.extend(f"          {line}" for line in row.message.splitlines())
        return "\n".join(lines)

    def to_html(self) -> str:
        """The table as HTML, for notebooks: failures first and, in a long table, passes folded away."""
        colour = "#1a7f37" if self.passed else "#cf222e"
        out = [
            f'<div style="font-family:sans-serif"><p style="font-weight:bold;color:{colour}">'
            f"{html.escape(self.summary())}</p>"
        ]
        rows = self.table()
        visible, folded = rows, []
        if len(rows) > 12:
            visible = [r for r in rows if r.outcome != "passed"]
            folded = [r for r in rows if r.outcome == "passed"]
        if visible:
            out.append(self._html_rows(visible))
        if folded:
            out.append(f"<details><summary>{len(folded)} passing checks</summary>{self._html_rows(folded)}</details>")
        out.append("</div>")
        return "".join(out)

    def _label(self, row: Row) -> str:
        # A whole module's table says which stage each check belongs to.
        return f"[{row.stage}] {row.test}" if self.stage.task is None and row.stage else row.test

    def _html_rows(self, rows: List[Row]) -> str:
        out = ['<table style="border-collapse:collapse;text-align:left">']
        for row in rows:
            text, colour = _BADGE[row.outcome]
            pre = '<pre style="margin:0;white-space:pre-wrap">'
            message = f"{pre}{html.escape(row.message)}</pre>" if row.message else ""
            out.append(
                '<tr style="border-top:1px solid #ddd;vertical-align:top">'
                f'<td style="padding:2px 8px;color:{colour};font-weight:bold;white-space:nowrap">{text}</td>'
                f'<td style="padding:2px 8px"><code>{html.escape(self._label(row))}</code>{message}</td></tr>'
            )
        out.append("</table>")
        return "".join(out)

    def show(self) -> None:
        """Display the table: HTML inside a Jupyter kernel, plain text elsewhere."""
        if _in_kernel():
            from IPython.display import HTML, display

            display(HTML(self.to_html()))
        else:
            print(self.to_text())

    def __repr__(self) -> str:
        # Short on purpose: grade() has already shown the table, and a notebook cell ending in
        # grade(...) would otherwise show it twice.
        return f"<GradeResult {self.summary()}>"


_WORST = ["passed", "skipped", "failed", "error"]
_MARK = {"passed": "ok", "failed": "FAIL", "error": "ERR", "skipped": "skip"}
_BADGE = {
    "passed": ("✓ pass", "#1a7f37"),
    "failed": ("✗ fail", "#cf222e"),
    "error": ("✗ error", "#cf222e"),
    "skipped": ("– skip", "#6e7781"),
}


def stages(root: Optional[Union[str, Path]] = None) -> Dict[str, Stage]:
    """Every gradable stage by name (``"1.3"``, and ``"1"`` for a whole module), in course order.

    ``root`` is the checkout whose ``setup.cfg`` lists the stages (by default, this one).
    """
    markers = _registered_markers(Path(root) if root is not None else _CHECKOUT)
    found: Dict[str, Stage] = {}
    # "module1: module 1, scalar autodiff" -> module 1 titled "scalar autodiff"
    modules = {
        int(m.group(1)): re.sub(r"^module \d+,\s*", "", title)
        for name, title in markers.items()
        if (m := _MODULE.match(name))
    }
    for name, title in markers.items():
        m = _TASK.match(name)
        if m:
            stage = Stage(int(m.group(1)), int(m.group(2)), title)
            if stage.module not in modules:
                continue
            found.setdefault(str(stage.module), Stage(stage.module, None, modules[stage.module]))
            found[stage.name] = stage
    return found


def grade(
    stage: Union[str, int, float],
    *,
    strict: bool = False,
    show: bool = True,
    tests_dir: Optional[Union[str, Path]] = None,
) -> GradeResult:
    """Run the checks of ``stage`` (``"1.3"``, ``"task1_3"``, or ``"1"`` for a module) and show the table.

    Returns a :class:`GradeResult`; ``result.passed`` says whether every check passed. With
    ``strict=True`` a stage that does not pass raises :class:`StageFailed` after the table is
    shown. ``tests_dir`` replaces the checkout's ``tests/`` folder (for testing the grader).
    """
    chosen = _find_stage(stage)
    tests = Path(tests_dir) if tests_dir is not None else _CHECKOUT / "tests"
    folder = tests / f"module{chosen.module}"
    if not folder.is_dir():
        raise FileNotFoundError(f"grading found no test folder {folder}. {_CHECKOUT_HELP}")

    result = _run(chosen, folder)
    if show:
        result.show()
    if strict and not result.passed:
        raise StageFailed(result.summary())
    return result


def grade_stages(
    names: Sequence[Union[str, int, float]] = (),
    *,
    tests_dir: Optional[Union[str, Path]] = None,
) -> List[GradeResult]:
    """Grade several stages in one pytest run: one :class:`GradeResult` per task stage, in course order.

    ``names`` are stages as for :func:`grade`; a module stands for each of its stages, and no
    names means the whole course. A test file that cannot be imported is an error row in every
    chosen stage of its module. A stage whose module has no test folder gets no checks.
    """
    known = stages()
    picked = [_find_stage(n) for n in names] or list(known.values())
    chosen: List[Stage] = []
    for stage in picked:
        tasks = [stage]
        if stage.task is None:  # a module: its stages
            tasks = [s for s in known.values() if s.module == stage.module and s.task is not None]
        chosen.extend(t for t in tasks if t not in chosen)
    chosen.sort(key=lambda s: (s.module, s.task))
    tests = Path(tests_dir) if tests_dir is not None else _CHECKOUT / "tests"
    if not tests.is_dir():
        raise FileNotFoundError(f"grading found no test folder {tests}. {_CHECKOUT_HELP}")

    results = {s.name: GradeResult(s) for s in chosen}
    folders = sorted({tests / f"module{s.module}" for s in chosen if (tests / f"module{s.module}").is_dir()})
    code, output = 0, ""
    if folders:
        collector, code, output, _ = _pytest(folders, " or ".join(s.marker for s in chosen))
        collector.results()  # settles rows that never ran
        for row, module in zip(collector.broken, collector.broken_modules, strict=True):
            for result in results.values():
                if module is None or result.stage.module == module:
                    result.rows.append(row)
        for row in collector.rows.values():
            if row.stage in results:
                results[row.stage].rows.append(row)
    for result in results.values():
        result.seconds = sum(row.seconds for row in result.rows)
        _explain(result, code, output, f"{tests.name}/module{result.stage.module}")
    return list(results.values())


def course_table(results: Sequence[GradeResult]) -> str:
    """The whole course at a glance: one line per stage (checks passed of total, state), then what failed."""
    lines = [f"{'stage':6} {'':36} {'checks':>7}  state"]
    module = None
    for r in results:
        if r.stage.module != module:
            module = r.stage.module
            lines.append(f"Module {module}")
        checks = f"{r.counts.get('passed', 0)}/{r.total}" if r.rows else "-"
        lines.append(f"  {r.stage.name:4} {r.stage.title[:36]:36} {checks:>7}  {r.state}")
    counted = [r for r in results if r.counted]
    lines.append(f"{sum(r.passed for r in counted)} of {len(counted)} stages passed")
    if len(counted) < len(results):
        lines[-1] += f" ({len(results) - len(counted)} more have no checks to run yet)"
    wrong = [r for r in counted if not r.passed and not r.not_implemented]
    for r in wrong:
        lines.append(f"\n{r.summary()}")
        for row in r.failures[:3]:
            first = row.message.splitlines()[0] if row.message else ""
            lines.append(f"  {_MARK[row.outcome]:4}  {row.test}: {first}")
        if len(r.failures) > 3:
            lines.append(f"  ... and {len(r.failures) - 3} more: python -m torchlight.grading {r.stage.name}")
    return "\n".join(lines)


def gradescope(results: Sequence[GradeResult], *, partial_credit: bool = False) -> dict:
    """The results in Gradescope's autograder format: one test per stage, worth 1 point.

    A stage scores 1 when it passes and 0 otherwise; with ``partial_credit`` a stage that does
    not pass scores the fraction of its checks that passed. Each test's output is the stage's
    table; stages with nothing to run (no checks, or all skipped) are left out.
    """
    tests: List[Dict[str, Any]] = []
    for r in results:
        if not r.counted:
            continue
        ran = r.counts.get("passed", 0) + len(r.failures)
        score = 1.0 if r.passed else (r.counts.get("passed", 0) / ran if partial_credit and ran else 0.0)
        tests.append(
            {
                "name": f"Stage {r.stage.name}: {r.stage.title}",
                "number": r.stage.name,
                "score": round(score, 4),
                "max_score": 1.0,
                "status": "passed" if r.passed else "failed",
                "output": r.to_text(),
            }
        )
    return {
        "score": round(sum(t["score"] for t in tests), 4),
        "execution_time": round(sum(r.seconds for r in results)),
        "output": course_table(results),
        "tests": tests,
    }


def _find_stage(stage: Union[str, int, float]) -> Stage:
    name = str(stage).strip()
    m = _TASK.match(name) or _MODULE.match(name)
    if m:
        name = ".".join(m.groups())
    known = stages()
    if name not in known:
        raise ValueError(f"unknown stage {stage!r}; the stages are:\n{_listing(known)}")
    return known[name]


def _listing(known: Dict[str, Stage]) -> str:
    return "\n".join(
        f"  {s.name:4} {s.title}" if s.task is not None else f"  {s.name:4} Module {s.module}: {s.title}"
        for s in known.values()
    )


def _registered_markers(root: Path) -> Dict[str, str]:
    # setup.cfg's [tool:pytest] markers is the one list of stages: pytest enforces it
    # (--strict-markers), so grading cannot drift from what the tests use.
    cfg = root / "setup.cfg"
    if not cfg.is_file():
        raise FileNotFoundError(f"grading found no {cfg}. {_CHECKOUT_HELP}")
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(cfg, encoding="utf-8")
    markers: Dict[str, str] = {}
    for line in parser.get("tool:pytest", "markers", fallback="").splitlines():
        name, _, title = line.partition(":")
        if name.strip():
            markers[name.strip()] = title.strip()
    return markers


class _Collector:
    """A pytest plugin that records each test's outcome instead of printing it."""

    def __init__(self):
        self.rows: Dict[str, Row] = {}
        self.broken: List[Row] = []  # files that failed to import
        self.broken_modules: List[Optional[int]] = []  # the module folder of each broken file
        self.wrapped: list = []  # (hypothesis handle, its original inner test)

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.broken.append(Row(_short_id(report.nodeid) or "(collection)", "", "error", _shorten(report)))
            m = re.search(r"(?:^|/)module(\d+)/", report.nodeid.replace("\\", "/"))
            self.broken_modules.append(int(m.group(1)) if m else None)

    def pytest_exception_interact(self, node, call, report) -> None:
        # Called after every failing phase with the exception itself: note whether a stub raised it.
        row = self.rows.get(getattr(node, "nodeid", ""))
        if row is not None and report.failed and not row.task and call.excinfo is not None:
            row.task = _stub_task(call.excinfo.value)
            if isinstance(call.excinfo.value, _StubReached):
                row.message = str(call.excinfo.value)  # the stub's own words, not our wrapper's name

    def pytest_collection_finish(self, session) -> None:
        for item in session.items:
            self.rows[item.nodeid] = Row(_short_id(item.nodeid), _stage_of(item), "pending")
            # A property test that reaches a stub fails on every input: hypothesis would spend
            # seconds shrinking an example that says nothing. Stop it at the first stub instead.
            handle = getattr(getattr(item, "obj", None), "hypothesis", None)
            inner = getattr(handle, "inner_test", None)
            if handle is not None and inner is not None and not any(h is handle for h, _ in self.wrapped):
                self.wrapped.append((handle, inner))
                handle.inner_test = _stop_at_stub(inner)

    def pytest_sessionfinish(self, session) -> None:
        for handle, inner in self.wrapped:  # the test functions outlive this run (in a notebook)
            handle.inner_test = inner
        self.wrapped.clear()

    def pytest_runtest_logreport(self, report) -> None:
        row = self.rows.get(report.nodeid)
        if row is None:
            return
        row.seconds += report.duration
        if row.outcome not in ("pending", "passed"):
            return  # keep the first problem (a teardown error after a failure adds nothing)
        if report.failed:
            row.outcome = "failed" if report.when == "call" else "error"
            row.message = _shorten(report)
        elif report.skipped:
            row.outcome = "passed" if hasattr(report, "wasxfail") else "skipped"
            row.message = _skip_reason(report)
        elif report.when == "call":
            row.outcome = "passed"

    def results(self) -> List[Row]:
        for row in self.rows.values():
            if row.outcome == "pending":  # the run stopped before reaching it
                row.outcome, row.message = "error", "collected but never run"
        # In collection order (file by file), but stage by stage when grading a whole module.
        rows = sorted(self.rows.values(), key=lambda r: [int(n) for n in r.stage.split(".") if n])
        return self.broken + rows


def _run(stage: Stage, folder: Path) -> GradeResult:
    collector, code, output, seconds = _pytest([folder], stage.marker)
    result = GradeResult(stage, collector.results(), seconds=seconds)
    _explain(result, code, output, f"{folder.parent.name}/{folder.name}")
    return result


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


def _pytest(folders: Sequence[Path], markexpr: str) -> Tuple[_Collector, int, str, float]:
    """Run the tests in ``folders`` selected by ``markexpr`` in this process, quietly."""
    try:
        import pytest
    except ImportError:
        raise ImportError("grading runs the tests with pytest: pip install -e '.[test]'") from None
    collector = _Collector()
    args = [
        *(str(f) for f in folders),
        "-m",
        markexpr,
        "-p",
        "no:cacheprovider",  # write nothing into the checkout
        "-p",
        "no:faulthandler",  # leaves the notebook kernel's (or outer pytest's) stderr alone
        "--import-mode=importlib",  # no sys.path changes in the caller's process
        "--continue-on-collection-errors",  # one broken file must not hide every other result
        # Python's own traceback text: the table shows only each failure's message and example,
        # and pytest's long style re-parses source files per frame (minutes for a whole edition)
        "--tb=native",
        "-q",
    ]
    output = io.StringIO()
    start = time.perf_counter()
    # pytest reports to sys.stdout; the table is the only output the user should see.
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output), warnings.catch_warnings():
        code = pytest.main(args, plugins=[collector])
    return collector, int(code), output.getvalue(), time.perf_counter() - start


_STUB = re.compile(r"^Task (\d+\.\d+):")
_QUOTED_STUB = re.compile(r"\bTask (\d+\.\d+): [^\n]*; see ")


class _StubReached(BaseException):
    """A stub's NotImplementedError on its way out of a property test.

    Not an ``Exception``, so hypothesis lets it through at once instead of shrinking; pytest
    still reports it as the test's failure, with the stub's error as its cause.
    """


def _stop_at_stub(inner):
    @functools.wraps(inner)
    def run(*args, **kwargs):
        try:
            return inner(*args, **kwargs)
        except NotImplementedError as exc:
            if _STUB.match(str(exc)):
                raise _StubReached(f"NotImplementedError: {exc}") from exc
            raise

    return run


def _stub_task(exc: Optional[BaseException]) -> str:
    """The task whose stub raised ``exc`` (directly, as a cause, or in every member of a group), else ""."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, NotImplementedError):
            m = _STUB.match(str(exc))
            if m:
                return m.group(1)
        members = getattr(exc, "exceptions", None)  # hypothesis reports distinct failures as a group
        if isinstance(members, (list, tuple)) and members:
            tasks = {_stub_task(e) for e in members}
            return min(tasks, key=_stage_key) if "" not in tasks else ""
        # A stub's message caught and quoted by a check (pytest.raises(RuntimeError, match=...)
        # catches NotImplementedError, a RuntimeError, and quotes it): stubs say "...; see ...".
        quoted = _QUOTED_STUB.search(str(exc))
        if quoted:
            return quoted.group(1)
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return ""


def _stage_key(name: str) -> List[int]:
    return [int(n) for n in name.split(".") if n]


def _stage_of(item) -> str:
    for mark in item.iter_markers():
        m = _TASK.match(mark.name)
        if m:
            return ".".join(m.groups())
    return ""


def _short_id(nodeid: str) -> str:
    # "tests/module1/test_scalar.py::test_add" -> "test_scalar.py::test_add"
    path, sep, rest = nodeid.partition("::")
    return Path(path).name + sep + rest


_EXAMPLE = re.compile(r"(?:Falsifying example|Failing test case): (\w+)\((.*?)\n\)", re.DOTALL)
_NOISE = ("Use -v to get more diff", "Full diff:")


def _shorten(report, max_lines: int = 6, width: int = 160) -> str:
    """The failing case in a few lines: the error message and hypothesis's falsifying example."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    example = _EXAMPLE.search(text) or _EXAMPLE.search(re.sub(r"(?m)^E {1,7}", "", report.longreprtext))
    text = _EXAMPLE.sub("", text)
    lines = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(_NOISE):
            continue
        if line.startswith("You can reproduce this example"):
            break
        lines.append(line if len(line) <= width else line[: width - 3] + "...")
    if len(lines) > max_lines:
        lines = lines[:max_lines] + ["..."]
    if example:
        lines.append(f"Falsifying example: {example.group(1)}({_arguments(example.group(2))})")
    return "\n".join(lines)


def _arguments(block: str) -> str:
    # "\n    a=0.0,  # or any other generated value\n    b=1.0," -> "a=0.0, b=1.0"
    parts = []
    for line in block.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip().rstrip(",")
        if line:
            parts.append(line)
    joined = ", ".join(parts)
    return joined if len(joined) <= 300 else joined[:297] + "..."


def _skip_reason(report) -> str:
    if isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    return ""


def _in_kernel() -> bool:
    """True inside a Jupyter kernel (where HTML can be displayed)."""
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    ip = shell.get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m torchlight.grading 1.3 [1.4 ...]``: grade stages; exit status 0 if all passed."""
    parser = argparse.ArgumentParser(
        prog="python -m torchlight.grading", description="Run course stages' checks and show a pass/fail table."
    )
    parser.add_argument("stages", nargs="*", help='stages such as "1.3", "task1_3", or "1" for a whole module')
    parser.add_argument("--list", action="store_true", help="list the stages and exit")
    parser.add_argument("--all", action="store_true", help="grade the whole course and show one table")
    parser.add_argument("--json", metavar="PATH", help="also write the results in Gradescope's format to PATH")
    parser.add_argument(
        "--partial-credit", action="store_true", help="with --json: a stage scores the fraction of its checks passed"
    )
    parser.add_argument(
        "--tests-dir", metavar="DIR", help="grade against DIR/moduleN/ (held-back tests) instead of tests/"
    )
    ns = parser.parse_args(argv)
    if ns.list:
        print(_listing(stages()))
        return 0
    if ns.all == bool(ns.stages):
        parser.print_usage()
        print("name stages, or --all for the whole course; the stages are:\n" + _listing(stages()))
        return 2
    try:
        if not ns.all and not ns.json:
            results = [grade(s, tests_dir=ns.tests_dir) for s in ns.stages]
            return 0 if all(r.passed for r in results) else 1
        results = grade_stages(ns.stages, tests_dir=ns.tests_dir)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if ns.all:
        print(course_table(results))
    else:
        for r in results:
            r.show()
    if ns.json:
        Path(ns.json).write_text(json.dumps(gradescope(results, partial_credit=ns.partial_credit), indent=2) + "\n")
    # Everything asked must pass; a stage with nothing to run yet asks nothing.
    counted = [r for r in results if r.counted]
    return 0 if counted and all(r.passed for r in counted) else 1


if __name__ == "__main__":
    sys.exit(main())
