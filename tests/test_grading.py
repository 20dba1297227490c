"""torchlight.grading: a stage's checks run in-process and come back as a pass/fail table."""

import subprocess
import sys
import textwrap

import pytest

import torchlight.scalar
from torchlight import grading

# Grading runs tests/module0 inside this process; these tests live outside tests/moduleN, so
# grading never collects (and recurses into) itself.
pytestmark = [pytest.mark.module0, pytest.mark.task0_1]


def test_a_real_stage_passes_and_counts_its_checks():
    result = grading.grade("0.1", show=False)
    assert result.passed, result.to_text()
    assert result.total > 0 and result.counts["passed"] == result.total
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
    with pytest.raises(grading.StageFailed):
        grading.grade("0.1", strict=True, show=False)


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
    assert grading._find_stage("task1_3") == grading._find_stage("1.3") == grading._find_stage(1.3)
    assert grading._find_stage("module0") == grading._find_stage(0) == table["0"]


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
    bad = subprocess.run(
        [sys.executable, "-m", "torchlight.grading", "7.1"], capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 2 and "unknown stage '7.1'" in bad.stderr
