"""The Gradescope autograder bundle (``python -m torchlight.course autograder``), run as Gradescope runs it.

One bundle grades stage 0.2 (partial credit on, a 5 s time limit per check); its run_autograder
runs in a temporary folder laid out as Gradescope's /autograder (``AUTOGRADER_ROOT``) against a
full solution, the edition as handed out (with a rigged grader and tests of its own), a syntax
error and an endless loop. Every run must write the expected results.json.
"""

import functools
import json
import os
import subprocess
import sys
import zipfile

import pytest

from torchlight import grading
from torchlight.course.__main__ import main as course
from torchlight.course.autograder import unpack
from torchlight.grading import processes

pytestmark = pytest.mark.module0

_NEG_LIST = "    return map(neg)(xs)\n"  # neg_list's solution, stage 0.2


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle") / "autograder.zip"
    assert course(["autograder", str(out), "--stages", "0.2", "--time-limit", "5", "--partial-credit"]) == 0
    return out


@pytest.fixture(scope="module")
def solution(bundle):
    """Every file a student writes in, as the reference has it: a full solution."""
    with zipfile.ZipFile(bundle) as z:
        files = json.loads(z.read("autograder.json"))["student_files"]
    return {path: (grading._CHECKOUT / path).read_text() for path in files}


@functools.lru_cache(maxsize=None)
def _nobody_runs_python():
    """Whether the grader, as root, can run this Python as ``nobody`` (as on Gradescope)."""
    user = processes.unprivileged()
    if user is None:
        return False
    try:
        return subprocess.run([sys.executable, "-c", "import numpy"], **processes.as_user(user)).returncode == 0
    except OSError:
        return False


def _grade(bundle, tmp_path, files):
    """Lay out /autograder in ``tmp_path``, hand in ``files`` and run run_autograder: results.json."""
    root = tmp_path / "autograder"
    unpack(bundle, root / "source")
    (root / "submission").mkdir()
    for path, text in files.items():
        (root / "submission" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "submission" / path).write_text(text)
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=sys.executable)
    if not _nobody_runs_python():  # this Python lies where only root can read it: grade as root
        env["AUTOGRADER_USER"] = ""
    run = subprocess.run(
        [str(root / "source" / "run_autograder")], env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads((root / "results" / "results.json").read_text())


def test_the_bundle_holds_the_grader_the_edition_and_what_to_grade(bundle):
    with zipfile.ZipFile(bundle) as z:
        names = set(z.namelist())
        config = json.loads(z.read("autograder.json"))
        requirements = z.read("requirements.txt").decode()
        modes = {info.filename: info.external_attr >> 16 for info in z.infolist()}
    assert {"setup.sh", "run_autograder", "grader/run.py", "grader/torchlight_grading/submission.py"} <= names
    assert "edition/tests/module0/test_list_helpers.py" in names and "edition/torchlight/scalar.py" in names
    assert modes["run_autograder"] & 0o111 and modes["setup.sh"] & 0o111
    assert "pytest" in requirements and "hypothesis" in requirements and "numba" in requirements
    assert config["stages"] == ["0.2"] and config["time_limit"] == 5 and config["partial_credit"] is True
    assert "torchlight/scalar.py" in config["student_files"] and "torchlight/grading/__init__.py" not in names
    assert set(config["expected"].values()) == {"0.2"} and len(config["expected"]) == 10
    workflow = bundle.with_name("autograder-classroom.yml").read_text()
    assert "command: python -m torchlight.grading 0.2 --time-limit 5" in workflow
    assert "STAGE-0-2_RESULTS" in workflow and "runners: stage-0-2" in workflow


def test_a_full_solution_scores_every_stage(bundle, tmp_path, solution):
    results = _grade(bundle, tmp_path, solution)
    assert results["score"] == 1.0
    assert [(t["number"], t["score"], t["status"]) for t in results["tests"]] == [("0.2", 1.0, "passed")]
    # ten checks, and the values the code computed, judged against the reference's
    assert "11/11  passed" in results["output"] and "Graded with your files (" in results["output"]
    assert "ok    judged values" in results["tests"][0]["output"], results["tests"][0]["output"]
    assert isinstance(results["execution_time"], int) and results["execution_time"] >= 1


def test_the_edition_as_handed_out_scores_0_and_a_rigged_grader_or_tests_change_nothing(bundle, tmp_path):
    with zipfile.ZipFile(bundle) as z:
        blank = z.read("edition/torchlight/scalar.py").decode()
    rigged = {
        "torchlight/scalar.py": blank,
        # never taken from a submission: the grader, the tests, the pytest settings
        "torchlight/grading/results.py": "raise SystemExit('rigged grader')\n",
        "tests/module0/test_list_helpers.py": "import pytest\n\n@pytest.mark.task0_2\ndef test_map():\n    pass\n",
        "tests/conftest.py": "raise SystemExit('rigged conftest')\n",
        "setup.cfg": "[tool:pytest]\naddopts = -p no:torchlight\n",
    }
    results = _grade(bundle, tmp_path, rigged)
    assert results["score"] == 0.0
    (test,) = results["tests"]
    assert (test["number"], test["score"], test["status"]) == ("0.2", 0.0, "failed")
    assert "not implemented: Task 0.2" in results["output"] and "0/11" in results["output"]
    assert "Graded with your files (1 of" in results["output"]


def test_a_syntax_error_scores_0_with_the_reason(bundle, tmp_path, solution):
    broken = dict(solution)
    broken["torchlight/scalar.py"] += "\ndef half_written(:\n"
    results = _grade(bundle, tmp_path, broken)
    assert results["score"] == 0.0
    (test,) = results["tests"]
    assert test["status"] == "failed" and "SyntaxError" in test["output"], test["output"]


def test_an_endless_loop_times_out_with_a_row_saying_so(bundle, tmp_path, solution):
    looping, scalar = dict(solution), solution["torchlight/scalar.py"]
    assert scalar.count(_NEG_LIST) == 1
    looping["torchlight/scalar.py"] = scalar.replace(_NEG_LIST, "    while True:\n        pass\n")
    results = _grade(bundle, tmp_path, looping)
    (test,) = results["tests"]
    assert test["status"] == "failed" and test["score"] < 1.0
    assert "FAIL  test_list_helpers.py::test_neg_list" in test["output"]
    assert "timed out after 5 s" in test["output"], test["output"]
    # with partial credit its values are judged too, and their probe is stopped as well
    assert "FAIL  judged values" in test["output"] and "timed out after 25 s" in test["output"], test["output"]


def test_the_bundle_holds_the_solved_reference_and_its_probes(bundle):
    with zipfile.ZipFile(bundle) as z:
        names = set(z.namelist())
        solved = z.read("reference/torchlight/scalar.py").decode()
    assert "reference/tests/module0/judged.py" in names and "reference/torchlight/backends/fast.py" in names
    assert _NEG_LIST in solved and "NotImplementedError" not in solved.split("def neg_list")[1].split("def ")[0]
    assert not any(n.startswith("reference/") and ("/notebooks/" in n or n.endswith(".ipynb")) for n in names)


def test_a_submission_that_forges_every_check_still_scores_0(bundle, tmp_path):
    """Stubs, plus code that makes pytest pass every check in the child: the values it computes
    (none: the stubs raise) are judged against the reference's from outside, so the stage fails."""
    with zipfile.ZipFile(bundle) as z:
        blank = z.read("edition/torchlight/scalar.py").decode()
    forged = blank + (
        "\n\ndef _forge():\n"
        "    import _pytest.python\n\n"
        "    _pytest.python.Function.runtest = lambda self: None  # every check passes\n\n\n"
        "_forge()\n"
    )
    results = _grade(bundle, tmp_path, {"torchlight/scalar.py": forged})
    (test,) = results["tests"]
    assert "ok    test_list_helpers.py::test_neg_list" in test["output"], "the forgery did not take: " + test["output"]
    assert (test["score"], test["status"]) == (0.0, "failed"), test["output"]
    assert "FAIL  judged values" in test["output"] and "raised NotImplementedError" in test["output"], test["output"]
