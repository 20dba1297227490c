"""Grading that nothing in a submission can influence: hostile code in a student edition.

An edition solved through 0.3 gets hostile code in place of one solution of stage 0.2
(``neg_list``, which only 0.2's ``test_neg_list`` calls); stages 0.2 and 0.3 are graded with the
reference's grader, whose process never imports the edition's code. Stage 0.3 must still pass,
0.2 must fail with the reason, and the grader must always answer.
"""

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from torchlight import grading
from torchlight.course import Course, write_edition

pytestmark = pytest.mark.module0

_SOLUTION = "    return map(neg)(xs)\n"  # neg_list's body, stage 0.2


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("hostile") / "edition"
    write_edition(Course.load(grading._CHECKOUT), out, "0.3", git=False)
    scalar = out / "torchlight" / "scalar.py"
    pristine = scalar.read_text()
    assert pristine.count(_SOLUTION) == 1
    yield out
    scalar.write_text(pristine)


@pytest.fixture
def submit(edition, monkeypatch, tmp_path):
    """Put ``body`` in place of neg_list's solution; the grading child writes no bytecode, no cache here."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")  # a rewritten scalar.py is never read from a stale .pyc
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    monkeypatch.setenv("TORCHLIGHT_EXAMPLES", "5")
    scalar = edition / "torchlight" / "scalar.py"
    pristine = scalar.read_text()

    def put(body: str, at_import: str = "") -> None:
        code = textwrap.indent(textwrap.dedent(body).strip(), "    ") + "\n"
        scalar.write_text(pristine.replace(_SOLUTION, code) + at_import)

    yield put
    scalar.write_text(pristine)


def _grade(edition, time_limit=60.0):
    by_stage = {r.stage.name: r for r in grading.grade_stages(["0.2", "0.3"], root=edition, time_limit=time_limit)}
    return by_stage["0.2"], by_stage["0.3"]


def _row(result, name):
    (row,) = [r for r in result.rows if r.test.startswith(name)]
    return row


def test_a_submission_that_patches_the_grader_and_forges_a_report_changes_nothing(edition, submit):
    submit(
        """
        import glob, os, tempfile
        import torchlight.grading as grading
        from torchlight.grading import results
        grading.GradeResult.passed = property(lambda self: True)
        results.GradeResult.passed = property(lambda self: True)
        print("Stage 0.2 (list helpers): PASSED, 10 passed")
        for path in glob.glob(os.path.join(tempfile.gettempdir(), "torchlight-grading-*", "events")):
            with open(path, "a") as report:  # lines without the grader's key
                report.write('0 [900, "row", {"nodeid": "x", "stage": "0.2", "outcome": "passed"}]\\n')
                report.write('0 [901, "done", {"code": 0}]\\n')
        return [-x + 1 for x in xs]
        """
    )
    lists, modules = _grade(edition)
    assert modules.passed, modules.to_text()
    assert not lists.passed and lists.state == "NOT PASSED"
    assert _row(lists, "test_list_helpers.py::test_neg_list").outcome == "failed"
    assert [r.test for r in lists.failures] == ["test_list_helpers.py::test_neg_list"]
    assert all(r.nodeid.startswith("tests/module0/") for r in lists.rows)  # no forged row
    assert grading.GradeResult.passed.fget(lists) is False  # this process's grader is untouched


def test_sys_exit_in_a_check_is_a_failure(edition, submit):
    submit("import sys\nsys.exit(0)")
    lists, modules = _grade(edition)
    assert modules.passed and not lists.passed
    row = _row(lists, "test_list_helpers.py::test_neg_list")
    assert row.outcome == "failed" and "SystemExit" in row.message


@pytest.mark.parametrize(
    "body, reason",
    [
        ("import os\nos._exit(0)", "exited with status 0 before the check finished"),
        ("raise KeyboardInterrupt", "stopped pytest itself"),
    ],
)
def test_a_check_that_ends_the_process_fails_and_the_other_stages_still_run(edition, submit, body, reason):
    submit(body)
    lists, modules = _grade(edition)
    assert modules.passed, modules.to_text()  # run again in a fresh process after the stop
    row = _row(lists, "test_list_helpers.py::test_neg_list")
    assert row.outcome == "failed" and reason in row.message, row.message
    assert not lists.passed
    # the rest of stage 0.2 did not run: it fails anyway, and may end the process again
    others = [r for r in lists.rows if r is not row]
    assert others and all(r.outcome in ("passed", "error") for r in others)
    assert all("stopped the checks" in r.message for r in others if r.outcome == "error")


def test_an_endless_loop_times_out_with_a_clear_row(edition, submit):
    submit("while True:\n    pass")
    began = time.perf_counter()
    lists, modules = _grade(edition, time_limit=3)
    assert time.perf_counter() - began < 45
    assert modules.passed and not lists.passed
    row = _row(lists, "test_list_helpers.py::test_neg_list")
    assert row.outcome == "failed" and row.message == "timed out after 3 s"


def test_a_submission_that_raises_at_import_fails_every_stage_with_the_reason(edition, submit):
    submit("return [-x for x in xs]", at_import='\nraise RuntimeError("boom at import")\n')
    lists, modules = _grade(edition)
    for result in (lists, modules):
        assert not result.passed and result.failures
        assert all(r.outcome == "error" for r in result.failures)
        assert any("boom at import" in r.message for r in result.failures), result.to_text()


def test_the_command_line_writes_results_even_when_the_process_is_killed(edition, submit, tmp_path):
    submit("import os\nos._exit(0)")
    out = tmp_path / "results.json"
    run = subprocess.run(
        [sys.executable, "-m", "torchlight.grading", "0.2", "0.3", "--json", str(out), "--time-limit", "30"],
        cwd=edition,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    results = json.loads(out.read_text())
    assert [(t["number"], t["score"]) for t in results["tests"]] == [("0.2", 0.0), ("0.3", 1.0)]
    assert "exited with status 0" in results["tests"][0]["output"]
