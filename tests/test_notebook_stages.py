"""torchlight.course.notebook_stages: running a notebook's cells up to a stage, as Run All would.

The runner is tested on small notebooks in a folder laid out like an edition (its own tiny
``torchlight`` package, so that nothing of this checkout is imported by the child); the plan is
tested on the real course: every stage has a section and a grading cell to stop at.
"""

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from torchlight.course import Course
from torchlight.course.notebook_stages import NotebookStage, grading_cell, notebook_plan, run_cells

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("IPython")
pytest.importorskip("matplotlib")


def _notebook(cells):
    def cell(kind, source):
        extra = {"outputs": [], "execution_count": None} if kind == "code" else {}
        return {"cell_type": kind, "metadata": {}, "source": source, **extra}

    return {
        "cells": [cell(kind, source) for kind, source in cells],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


_GRADING = '''
"""A stand-in for torchlight.grading: grade() says whether it really ran."""


class GradeResult:
    def __init__(self, passed, how):
        self.passed, self.how = passed, how

    def show(self):
        print(f"graded ({self.how}): {'PASSED' if self.passed else 'NOT PASSED'}")


class StageFailed(AssertionError):
    pass


def grade(stage, **kwargs):
    result = GradeResult(False, "for real")
    result.show()
    return result
'''


@pytest.fixture
def edition(tmp_path):
    """A folder laid out like an edition: torchlight/ (with grading) and notebooks/."""
    root = tmp_path / "edition"
    (root / "torchlight").mkdir(parents=True)
    (root / "torchlight" / "__init__.py").write_text("")
    (root / "torchlight" / "grading.py").write_text(_GRADING)
    (root / "notebooks").mkdir()
    return root


def _env(edition):
    return dict(os.environ, PYTHONPATH=str(edition), PYTHONDONTWRITEBYTECODE="1")


def _write(edition, cells, name="module0_t.ipynb"):
    (edition / "notebooks" / name).write_text(json.dumps(_notebook(cells)))
    return f"notebooks/{name}"


def _passing_result(edition, path):
    """A pickled GradeResult of the stand-in, as verify's grading subprocess writes it."""
    code = (
        "import pickle, sys\nfrom torchlight.grading import GradeResult\n"
        "pickle.dump(GradeResult(True, 'replayed'), open(sys.argv[1], 'wb'))"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], cwd=edition, env=_env(edition), check=True)


def test_cells_run_as_in_jupyter_and_the_first_error_names_its_cell_and_stub(edition, tmp_path):
    notebook = _write(
        edition,
        [
            ("markdown", "# Module 0\n## 0.1 First"),
            ("code", "%time x = 2 + 2\nimport os\ncwd = os.getcwd()"),  # a magic, in notebooks/
            ("code", "display('shown'); import matplotlib.pyplot as plt\nplt.plot([1, 2]); x"),  # display, a figure
            ("code", "assert os.path.basename(cwd) == 'notebooks', cwd\nassert x == 4"),
            ("markdown", "## 0.2 Second"),
            ("code", "raise NotImplementedError('Task 0.3: implement f in torchlight/f.py; see the notebook')"),
            ("code", "raise AssertionError('never reached')"),
        ],
    )
    ok = run_cells(edition, notebook, 4, env=_env(edition), work=tmp_path / "run")
    assert ok.ok and ok.ran == 3 and ok.cell is None, ok

    stopped = run_cells(edition, notebook, 7, env=_env(edition), work=tmp_path / "run")
    assert not stopped.ok and stopped.ran == 4
    assert stopped.cell == 5 and stopped.stub == "0.3"
    assert stopped.error.startswith("NotImplementedError: Task 0.3: implement f")


def test_an_error_that_no_stub_raised_has_no_stage(edition, tmp_path):
    notebook = _write(edition, [("code", "def f():\n    return 1 / 0\n"), ("code", "f()")])
    run = run_cells(edition, notebook, 2, env=_env(edition), work=tmp_path / "run")
    assert run.cell == 1 and run.stub == "" and run.error.startswith("ZeroDivisionError")
    assert "1 / 0" in run.detail  # the traceback's end, for the report


def test_grading_cells_replay_verifys_results_and_wait_for_them(edition, tmp_path):
    notebook = _write(
        edition,
        [
            ("code", "from pathlib import Path\n\nPath('../started').touch()"),
            ("code", "from torchlight import grading\n\nresult = grading.grade('0.1')\nassert result.passed"),
            ("code", "result = grading.grade('0.2')\nassert result.passed"),
        ],
    )
    graded = tmp_path / "graded"
    graded.mkdir()
    _passing_result(edition, graded / "0.1.pickle")
    _passing_result(edition, tmp_path / "0.2.pickle")

    def grade_later():  # 0.2's result comes while the notebook runs, as when verify's grading ends later
        for _ in range(600):
            if (edition / "started").exists():
                break
            time.sleep(0.1)
        time.sleep(1.0)
        os.replace(tmp_path / "0.2.pickle", graded / "0.2.pickle")

    later = threading.Thread(target=grade_later)
    later.start()
    replay = {"0.1": graded / "0.1.pickle", "0.2": graded / "0.2.pickle"}
    run = run_cells(edition, notebook, 3, env=_env(edition), work=tmp_path / "run", replay=replay, wait=60)
    later.join()
    assert run.ok, run
    assert run.replayed == ["0.1", "0.2"] and run.waited > 0.5

    # No result will come (verify's grading failed): the cell grades for real.
    (graded / "0.2.pickle").unlink()
    Path(f"{graded / '0.2.pickle'}.none").touch()
    run = run_cells(edition, notebook, 3, env=_env(edition), work=tmp_path / "run", replay=replay, wait=60)
    assert run.replayed == ["0.1"] and run.cell == 2 and run.error.startswith("AssertionError"), run


def test_a_run_that_cannot_start_says_why(edition, tmp_path):
    notebook = _write(edition, [("code", "import os\nos._exit(3)")])
    run = run_cells(edition, notebook, 1, env=_env(edition), work=tmp_path / "run")
    assert not run.ok and run.cell is None and "exit code 3" in run.detail


def test_the_grading_cell_is_found_by_its_call():
    cells = [
        {"cell_type": "code", "source": "grading.grade('0.10')"},
        {"cell_type": "markdown", "source": "grade('0.1')"},
        {"cell_type": "code", "source": ["result = grading.grade(\n", '    "0.1")']},
    ]
    assert grading_cell(cells, "0.1") == 2 and grading_cell(cells, "0.10") == 0 and grading_cell(cells, "0.2") is None


def test_every_stage_has_a_notebook_section_that_ends_in_its_grading_cell():
    """What verify's notebook runs stop at: each stage's grading cell, in its module's notebook."""
    course = Course.load(ROOT)
    plan = notebook_plan(ROOT, list(course.stages))
    missing = {s: item for s, item in plan.items() if not isinstance(item, NotebookStage) or item.grading is None}
    assert not missing, missing
    for stage, item in plan.items():
        cells = json.loads((ROOT / item.notebook).read_text(encoding="utf-8"))["cells"]
        later = [i for i in range(item.grading + 1, len(cells)) if grading_cell(cells[i : i + 1], stage) is not None]
        assert not later, f"{item.notebook}: stage {stage} is graded again in cell {later[0] + 1}"
        assert item.start < item.grading, f"{item.notebook}: the grading cell of {stage} comes before its section"
    # Each notebook's last stage runs it to its end; the others stop after their grading cell.
    for notebook in {item.notebook for item in plan.values()}:
        items = sorted((item for item in plan.values() if item.notebook == notebook), key=lambda i: i.start)
        total = len(json.loads((ROOT / notebook).read_text(encoding="utf-8"))["cells"])
        assert [i.stop for i in items] == [i.grading + 1 for i in items[:-1]] + [total]
    # A stage's run is the same when verify checks it alone.
    for stage in ("0.1", "1.3", "3.2", "3.5"):
        assert notebook_plan(ROOT, [stage]) == {stage: plan[stage]}
