"""Course tooling: what grading found, and how it is shown: a stage's table, the course table, Gradescope's JSON.

:class:`GradeResult` holds one stage's :class:`Row` s (one per check) and says whether the stage
passed; ``course_table`` shows many stages at a glance; ``gradescope`` writes them in Gradescope's
autograder results format. Nothing here runs a check.
"""

import html
import sys
from dataclasses import dataclass, field
from typing import Any, Collection, Dict, List, Optional, Sequence, Tuple

from .stage import Stage, stage_key

__all__ = ["JUDGED", "GradeResult", "Row", "StageFailed", "course_table", "gradescope"]

JUDGED = "judged::"  # the node id of a stage's judged values: "judged::2.3"


class StageFailed(AssertionError):
    """Raised by ``grade(..., strict=True)`` when a stage does not pass."""


@dataclass
class Row:
    """The outcome of one check."""

    test: str  # file::function[params], relative to tests/moduleN/
    stage: str  # "1.3", or "" when a file could not even be collected
    outcome: str  # "passed", "failed", "error" (outside the test body, or the check never finished) or "skipped"
    message: str = ""  # why it failed or was skipped, shortened
    seconds: float = 0.0
    task: str = ""  # "1.3" when it failed in a student edition's stub for Task 1.3, else ""
    nodeid: str = ""  # pytest's id, "tests/module1/test_x.py::test_y" (the file's for an import error)


@dataclass
class GradeResult:
    """What ``grade`` found: the rows of the table, their counts and ``passed``."""

    stage: Stage
    rows: List[Row] = field(default_factory=list)
    problem: str = ""  # why the stage cannot pass although no row failed (e.g. no tests found)
    seconds: float = 0.0
    judged: Optional[Tuple[int, int]] = None  # (agreed, total) judged values, where the autograder judged them

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
    def ran(self) -> int:
        """The checks that ran: every row but the skipped ones (a PyTorch comparison without torch)."""
        return self.total - self.counts.get("skipped", 0)

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
        return sorted({row.task for row in failures}, key=stage_key)

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


def course_table(results: Sequence[GradeResult]) -> str:
    """The whole course at a glance: one line per stage (checks passed of those run, state), then what failed.

    The checks column leaves out skipped checks (PyTorch comparisons where torch is not installed):
    a stage that passes shows ``41/41``, not ``41/59``.

    :param results: one GradeResult per stage, in course order (``grade_stages``'s).
    """
    lines = [f"{'stage':6} {'':36} {'checks':>7}  state"]
    module = None
    skipped = 0
    for r in results:
        if r.stage.module != module:
            module = r.stage.module
            lines.append(f"Module {module}")
        checks = f"{r.counts.get('passed', 0)}/{r.ran}" if r.rows else "-"
        lines.append(f"  {r.stage.name:4} {r.stage.title[:36]:36} {checks:>7}  {r.state}")
        skipped += r.counts.get("skipped", 0)
    counted = [r for r in results if r.counted]
    lines.append(f"{sum(r.passed for r in counted)} of {len(counted)} stages passed")
    if len(counted) < len(results):
        lines[-1] += f" ({len(results) - len(counted)} more have no checks to run yet)"
    if skipped:
        lines.append(f"{skipped} checks skipped, not counted (PyTorch comparisons need torch installed)")
    wrong = [r for r in counted if not r.passed and not r.not_implemented]
    for r in wrong:
        lines.append(f"\n{r.summary()}")
        for row in r.failures[:3]:
            first = row.message.splitlines()[0] if row.message else ""
            lines.append(f"  {_MARK[row.outcome]:4}  {row.test}: {first}")
        if len(r.failures) > 3:
            lines.append(f"  ... and {len(r.failures) - 3} more: python -m torchlight.grading {r.stage.name}")
    return "\n".join(lines)


def gradescope(
    results: Sequence[GradeResult],
    *,
    partial_credit: bool = False,
    given: Optional[Collection[str]] = None,
    execution_time: Optional[float] = None,
) -> Dict[str, Any]:
    """The results in Gradescope's autograder format: one test per stage, worth 1 point.

    A stage scores 1 when it passes and 0 otherwise. With ``partial_credit`` a stage that does not
    pass scores the fraction of **its own** checks that passed: ``given`` is the node ids of the
    checks that pass in the edition as handed out (they test code the student was given), and those
    are left out; an untouched edition scores 0. Without ``given``, a stage that still reaches a stub
    (its own or an earlier stage's) scores 0, and another the fraction of the checks that ran. Each test's output is the
    stage's table; stages with nothing to run (no checks, or all skipped) are left out.
    ``execution_time`` is the wall time of the run (default: the checks' own time, added up).

    :param results: one GradeResult per stage (``grade_stages``'s).
    :param partial_credit: a stage that does not pass scores the fraction of its checks that passed.
    :param given: the node ids of the checks that pass in the edition as handed out.
    :param execution_time: the run's wall time in seconds.
    :returns: the dict to write as Gradescope's results.json.
    """
    given = set(given) if given is not None else None
    tests: List[Dict[str, Any]] = []
    for r in results:
        if not r.counted:
            continue
        score = 1.0 if r.passed else (_partial(r, given) if partial_credit else 0.0)
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
    seconds = execution_time if execution_time is not None else sum(r.seconds for r in results)
    return {
        "score": round(sum(t["score"] for t in tests), 4),
        "execution_time": round(seconds),
        "output": course_table(results),
        "tests": tests,
    }


def _partial(r: GradeResult, given: Optional[Collection[str]]) -> float:
    ran = [row for row in r.rows if row.outcome != "skipped" and not row.nodeid.startswith(JUDGED)]
    if given is not None:
        ran = [row for row in ran if row.nodeid not in given]
    elif any(row.task for row in r.failures):  # it still reaches a stub: not all of it is written
        return 0.0
    fraction = sum(row.outcome == "passed" for row in ran) / len(ran) if ran else 0.0
    if r.judged is not None:  # the checks' own report counts for no more than the values judged outside
        agreed, total = r.judged
        fraction = min(fraction, agreed / total if total else 0.0)
    return fraction


def _in_kernel() -> bool:
    """True inside a Jupyter kernel (where HTML can be displayed)."""
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    ip = shell.get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None
