"""torchlight.grading: a stage's checks run in-process and come back as a pass/fail table."""

import json
import subprocess
import sys
import textwrap

import pytest

import torchlight.scalar
from torchlight import grading
from torchlight.grading.collector import arguments, stub_task
from torchlight.grading.stage import find_stage

# Grading runs tests/module0 inside this process; these tests live outside tests/moduleN, so
# grading never collects (and recurses into) itself.
pytestmark = [pytest.mark.module0, pytest.mark.task0_1]


def test_a_real_stage_passes_and_counts_its_checks():
    result = grading.grade("0.1", show=False)
    assert result.passed, result.to_text()
    # every check ran and passed, but those compared with PyTorch, skipped where it is not installed
    skipped = [row for row in result.rows if row.outcome == "skipped"]
    assert result.counts["passed"] > 0 and result.counts["passed"] + len(skipped) == result.total
    assert all("torch" in row.message for row in skipped), [row.message for row in skipped]
    assert all(row.stage == "0.1" for row in result.rows)
    assert "PASSED" in result.summary()


def test_a_broken_operator_fails_the_stage_and_the_table_names_the_test(monkeypatch, capsys):
    # grading runs pytest in this process, so the checks see the patched operator.
    monkeypatch.setattr(torchlight.scalar, "mul", lambda x, y: x * y + 1.0)
    result = grading.grade("task0_1")
    assert not result.passed
    failed = {row.test: row for row in result.failures}
    assert "test_operators.py::test_mul" in failed
    assert failed["test_operators.py::test_mul"].message  # the failing case is shown
    shown = capsys.readouterr().out  # outside a notebook, the table is printed as text
    assert "NOT PASSED" in shown and "FAIL  test_operators.py::test_mul" in shown
    assert "test_operators.py::test_mul" in result.to_html()


def test_strict_grading_raises_when_the_stage_fails(tmp_path):
    suite = _suite(tmp_path, "import pytest\n\n@pytest.mark.task0_1\ndef test_one():\n    assert 1 == 2\n")
    with pytest.raises(grading.StageFailed):
        grading.grade("0.1", strict=True, show=False, tests_dir=suite)


def test_unknown_stage_lists_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown stage '9\.9'") as info:
        grading.grade("9.9")
    assert "1.3  chain rule" in str(info.value)
    with pytest.raises(ValueError, match="unknown stage"):
        grading.grade("task1_99")


def test_stage_names_in_every_spelling():
    table = grading.stages()
    assert table["1.3"].marker == "task1_3" and table["1.3"].title == "chain rule"
    assert table["1"].marker == "module1" and table["1"].task is None
    assert find_stage("task1_3") == find_stage("1.3") == find_stage(1.3)
    assert find_stage("module0") == find_stage(0) == table["0"]


def _suite(tmp_path, source):
    """A throwaway tests folder with one module-0 test file."""
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    task0_1: operators\n    task0_2: lists\n")
    # pytest imports the file as "<folder>.module0.test_fake": a folder name unique to this
    # test keeps it from finding another test's module of the same name in sys.modules.
    suite = tmp_path / f"suite_{tmp_path.name}"
    (suite / "module0").mkdir(parents=True)
    (suite / "module0" / "test_fake.py").write_text(textwrap.dedent(source))
    return suite


def test_a_falsifying_example_is_shortened_into_the_row(tmp_path):
    suite = _suite(
        tmp_path,
        """
        import pytest
        from hypothesis import given, strategies as st

        pytestmark = pytest.mark.task0_1

        @given(st.integers(0, 10))
        def test_small(x):
            assert x < 3, f"{x} is too big"

        def test_fine():
            pass
        """,
    )
    result = grading.grade("0.1", tests_dir=suite, show=False)
    assert result.counts == {"failed": 1, "passed": 1}
    (row,) = result.failures
    assert row.test == "test_fake.py::test_small"
    assert "3 is too big" in row.message
    assert "Falsifying example: test_small(x=3)" in row.message


def test_a_stage_without_checks_is_not_passed(tmp_path):
    suite = _suite(tmp_path, "import pytest\n\n@pytest.mark.task0_1\ndef test_one():\n    pass\n")
    result = grading.grade("0.2", tests_dir=suite, show=False)
    assert not result.passed and result.total == 0
    assert "no checks found" in result.summary()


def test_a_file_that_cannot_be_imported_is_an_error_row(tmp_path):
    suite = _suite(tmp_path, "import pytest\nfrom torchlight import no_such_name\n")
    result = grading.grade("0.1", tests_dir=suite, show=False)
    assert not result.passed
    assert result.failures[0].outcome == "error"
    assert "no_such_name" in result.failures[0].message


def test_a_missing_tests_folder_says_grading_needs_the_checkout(tmp_path):
    with pytest.raises(FileNotFoundError, match="pip install -e"):
        grading.grade("0.1", tests_dir=tmp_path / "nowhere")


def test_command_line():
    run = subprocess.run(
        [sys.executable, "-m", "torchlight.grading", "0.2"], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("Stage 0.2 (list helpers): PASSED")
    assert "session starts" not in run.stdout + run.stderr  # pytest's own report stays hidden


def test_command_line_writes_results_json_even_for_a_usage_error(tmp_path):
    path = tmp_path / "results.json"
    bad = subprocess.run(
        [sys.executable, "-m", "torchlight.grading", "7.1", "--json", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "unknown stage '7.1'" in bad.stderr
    results = json.loads(path.read_text())
    assert results["score"] == 0.0 and results["tests"] == [] and "unknown stage '7.1'" in results["output"]


# -- several stages at once, stubs, --all and Gradescope ------------------------------------

STUBBED = """
import pytest
from hypothesis import given, strategies as st

def double(x):
    raise NotImplementedError("Task 0.1: implement double in ops.py; see the notebook")

@pytest.mark.task0_1
@given(st.floats(0, 1))
def test_double_property(x):
    assert double(x) == 2 * x

@pytest.mark.task0_1
def test_double_quoted():
    with pytest.raises(RuntimeError, match="two"):  # NotImplementedError is a RuntimeError
        double(1)

@pytest.mark.task0_2
def test_wrong():
    assert 1 + 1 == 3

@pytest.mark.task0_2
def test_right():
    pass
"""


def test_grade_stages_splits_one_run_by_stage_and_names_stubs(tmp_path):
    results = grading.grade_stages(["0.1", "0.2"], tests_dir=_suite(tmp_path, STUBBED))
    first, second = results
    assert [r.stage.name for r in results] == ["0.1", "0.2"]
    assert first.total == 2 and not first.passed
    assert [row.task for row in first.rows] == ["0.1", "0.1"]
    assert first.not_implemented == ["0.1"] and first.state == "not implemented: Task 0.1"
    assert "NOT PASSED (not implemented: Task 0.1)" in first.summary()
    # hypothesis stopped at the stub: no shrinking, no falsifying example, the stub's message shown
    (prop,) = [row for row in first.rows if "property" in row.test]
    assert prop.message.startswith("NotImplementedError: Task 0.1: implement double") and prop.seconds < 2
    assert second.state == "NOT PASSED" and second.counts == {"failed": 1, "passed": 1}
    table = grading.course_table(results)
    assert "0.1  operators" in table and "0/2  not implemented: Task 0.1" in table
    assert "1/2  NOT PASSED" in table and "FAIL  test_fake.py::test_wrong" in table
    assert "0 of 2 stages passed" in table


def test_gradescope_results_one_test_per_stage(tmp_path):
    results = grading.grade_stages(["0"], tests_dir=_suite(tmp_path, STUBBED))
    assert [r.stage.name for r in results] == ["0.1", "0.2", "0.3", "0.4"]  # a module stands for its stages
    assert [r.state for r in results][2:] == ["no checks yet", "no checks yet"]
    out = grading.gradescope(results)
    assert set(out) == {"score", "execution_time", "output", "tests"}
    assert [(t["number"], t["score"], t["max_score"], t["status"]) for t in out["tests"]] == [
        ("0.1", 0.0, 1.0, "failed"),
        ("0.2", 0.0, 1.0, "failed"),
    ]
    assert out["tests"][1]["name"] == "Stage 0.2: list helpers" and "test_wrong" in out["tests"][1]["output"]
    partial = grading.gradescope(results, partial_credit=True)
    assert [t["score"] for t in partial["tests"]] == [0.0, 0.5] and partial["score"] == 0.5


def test_stub_task_looks_through_causes_groups_and_quotes():
    stub = NotImplementedError("Task 1.2: implement mul in x.py; see y")
    assert stub_task(stub) == "1.2"
    try:
        try:
            raise stub
        except NotImplementedError as e:
            raise RuntimeError("backward failed") from e
    except RuntimeError as wrapped:
        assert stub_task(wrapped) == "1.2"

    class Group(Exception):  # hypothesis's distinct failures (an ExceptionGroup from Python 3.11)
        def __init__(self, *exceptions):
            self.exceptions = exceptions

    assert stub_task(Group(stub, NotImplementedError("Task 1.3: a; see b"))) == "1.2"
    assert stub_task(Group(stub, AssertionError("1 != 2"))) == ""
    quoted = AssertionError("Regex pattern did not match.\n Actual message: 'Task 2.1: f; see g'")
    assert stub_task(quoted) == "2.1"
    assert stub_task(NotImplementedError("Module [Net] is missing forward")) == ""
    assert stub_task(AssertionError("assert 7.0 == 6.0")) == ""


def test_command_line_all_and_json(tmp_path):
    suite = _suite(tmp_path, STUBBED)
    path = tmp_path / "results.json"
    run = subprocess.run(
        [sys.executable, "-m", "torchlight.grading", "--all", "--tests-dir", str(suite), "--json", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "not implemented: Task 0.1" in run.stdout and "1.1  central difference" in run.stdout
    assert json.loads(path.read_text())["tests"][0]["number"] == "0.1"
    both = subprocess.run(
        [sys.executable, "-m", "torchlight.grading", "--all", "0.1"], capture_output=True, text=True, timeout=60
    )
    assert both.returncode == 2
    verbose = subprocess.run(
        [sys.executable, "-m", "torchlight.grading", "0.2", "--tests-dir", str(suite), "--verbose"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "pytest's own output" in verbose.stdout and "1 failed, 1 passed" in verbose.stdout, verbose.stdout


# -- what a failure shows, how long grading takes, what counts -------------------------------


def test_every_failure_of_an_exception_group_is_shown_with_its_example(tmp_path):
    suite = _suite(
        tmp_path,
        """
        import pytest
        from hypothesis import given, strategies as st

        pytestmark = pytest.mark.task0_1

        @given(st.integers(0, 10), st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1))
        def test_two_ways(x, ab):
            if x % 2:
                raise ValueError(f"odd {x}")
            assert x < 0, f"{x} is not negative"
        """,
    )
    (row,) = grading.grade("0.1", tests_dir=suite, show=False).failures
    lines = row.message.splitlines()
    assert lines[0] == "Hypothesis found 2 distinct failures."
    assert "(1) ValueError: odd 1" in lines and "(2) AssertionError: 0 is not negative" in lines
    examples = [line.strip() for line in lines if "Falsifying example" in line]
    assert examples == [
        "Falsifying example: test_two_ways(x=1, ab=[(0.0, 0.0)])",
        "Falsifying example: test_two_ways(x=0, ab=[(0.0, 0.0)])",
    ]


def test_nested_arguments_of_an_example_print_whole():
    block = "\n    ab=(\n        [0.0],\n        [1.0, 2.0],\n    ),\n    n=1,  # or any other generated value\n"
    assert arguments(block) == "ab=([0.0], [1.0, 2.0]), n=1"
    assert arguments("\n    steps=[\n        (0, 0, 0),\n    ],\n") == "steps=[(0, 0, 0)]"
    assert arguments("\n    x=3,\n") == "x=3"


def test_grading_bounds_hypothesis_shrinking_and_puts_it_back(tmp_path):
    from hypothesis import Phase, settings
    from hypothesis.internal.conjecture import engine

    before = (engine.MAX_SHRINKING_SECONDS, settings.get_current_profile_name())
    suite = _suite(
        tmp_path,
        """
        import pytest
        from hypothesis import Phase, given, settings, strategies as st
        from hypothesis.internal.conjecture import engine

        from torchlight.grading import collector

        @pytest.mark.task0_1
        @given(st.integers())
        def test_bounded(x):
            assert engine.MAX_SHRINKING_SECONDS == collector.SHRINK_SECONDS
            assert settings.default.database is None and Phase.explain not in settings.default.phases
        """,
    )
    assert grading.grade("0.1", tests_dir=suite, show=False).passed
    assert (engine.MAX_SHRINKING_SECONDS, settings.get_current_profile_name()) == before
    assert Phase.explain in settings.default.phases


def _result(stage, *rows):
    return grading.GradeResult(grading.stages()[stage], [grading.Row(*row) for row in rows])


def test_partial_credit_counts_only_the_stages_own_checks():
    given_check = ("test_a.py::test_given", "0.3", "passed", "", 0.0, "", "tests/module0/test_a.py::test_given")
    stub = ("test_a.py::test_stub", "0.3", "failed", "Task 0.3: ...", 0.0, "0.3", "tests/module0/test_a.py::test_stub")
    earlier = ("test_a.py::test_early", "0.3", "failed", "Task 0.1: ...", 0.0, "0.1", "tests/module0/test_a.py::t")
    right = ("test_a.py::test_right", "0.3", "passed", "", 0.0, "", "tests/module0/test_a.py::test_right")
    wrong = ("test_a.py::test_wrong", "0.3", "failed", "assert 1 == 2", 0.0, "", "tests/module0/test_a.py::test_wrong")
    given = {given_check[-1]}

    def score(result, given=None):
        return grading.gradescope([result], partial_credit=True, given=given)["tests"][0]["score"]

    # untouched: the given check passes, the stage's own checks reach its stub (or an earlier one)
    assert score(_result("0.3", given_check, stub), given) == 0.0
    assert score(_result("0.3", given_check, stub)) == 0.0 and score(_result("0.3", given_check, earlier)) == 0.0
    # written, half right: the given check is left out of the fraction when it is known
    assert score(_result("0.3", given_check, right, wrong), given) == 0.5
    assert score(_result("0.3", given_check, right, wrong)) == round(2 / 3, 4)


def test_skipped_checks_are_not_in_the_checks_column_and_execution_time_is_the_given_wall_time():
    skipped = ("test_a.py::test_torch", "0.1", "skipped", "could not import 'torch'", 0.0, "", "x::test_torch")
    passed = ("test_a.py::test_ok", "0.1", "passed", "", 2.0, "", "x::test_ok")
    result = _result("0.1", passed, passed, skipped)
    table = grading.course_table([result])
    assert "2/2  passed" in table and "1 checks skipped, not counted" in table
    assert grading.gradescope([result], execution_time=12.6)["execution_time"] == 13
