"""The student edition as a repository of its own (issue 19, item 5): green and helpful from day one.

A fresh edition of this checkout (``--no-git``) passes its own ``make lint``; its Makefile has the
student's commands; ``make demo`` in a blank edition names the stages still to write and stops
without a traceback, and runs the training once they are written; its CI script grades and passes
whatever the progress, failing only when grading ends without results; nothing it keeps names a
file it left out (the website's build). The whole file takes well under a minute: nothing here
grades or trains (the training script is run with ``--help``; grading is a stand-in).
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from torchlight.course import Course, write_edition
from torchlight.course.lint import lint_edition
from torchlight.course.markers import raise_statement

ROOT = Path(__file__).resolve().parents[1]
make = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


@pytest.fixture(scope="module")
def course():
    return Course.load(ROOT)


@pytest.fixture(scope="module")
def blank(course, tmp_path_factory):
    """A fresh edition, nothing solved."""
    out = tmp_path_factory.mktemp("blank") / "edition"
    write_edition(course, out, git=False)
    return out


def _make(edition: Path, *args: str, python: str = sys.executable) -> subprocess.CompletedProcess:
    """``make ARGS`` in the edition, with .venv taken as set up and ``python`` as its interpreter."""
    venv = edition.parent / "venv"
    venv.mkdir(exist_ok=True)
    (venv / ".installed").touch()  # newer than the files it depends on: nothing to install
    return subprocess.run(
        ["make", "--no-print-directory", *args, f"VENV={venv}", f"PY={python}"],
        cwd=edition,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_fresh_edition_lints_clean(blank):
    # ruff only: mypy over the edition (lint_edition's default, as its `make lint`) takes 15-40 s
    # here, and what a stub can break, a name only its region defines, ruff's F821 finds too.
    pytest.importorskip("ruff")
    assert lint_edition(blank, mypy=False) == []


def test_lint_edition_names_each_problem(tmp_path):
    pytest.importorskip("ruff")
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (tmp_path / "torchlight").mkdir()
    (tmp_path / "torchlight" / "ops.py").write_text("def f( ):\n    return out\n")
    problems = lint_edition(tmp_path, mypy=False)
    assert problems == [
        "ruff check: torchlight/ops.py:2:12: F821 Undefined name `out`",
        "ruff format --check: torchlight/ops.py:1:7: unformatted: File would be reformatted",
    ] or (  # a ruff without --output-format for `format --check` names the file only
        problems[0] == "ruff check: torchlight/ops.py:2:12: F821 Undefined name `out`"
        and "torchlight/ops.py" in problems[1]
    )


def test_the_makefile_has_the_students_commands(blank):
    makefile = (blank / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, re.MULTILINE))
    assert {"setup", "grade", "notebook", "test", "lint", "demo", "help", "clean"} <= targets
    assert "docs" not in targets and "mkdocs" not in makefile  # the website is not in the edition
    readme = (blank / "README.md").read_text()
    for command in ("make setup", "make grade STAGE=0.1", "make grade ", "make notebook", "make demo", "make lint"):
        assert command in readme and command.strip() in makefile


@make
def test_make_grade_grades_a_stage_or_the_course(blank):
    one = _make(blank, "-n", "grade", "STAGE=1.3")
    assert one.returncode == 0 and f"{sys.executable} -m torchlight.grading 1.3" in one.stdout, one.stderr
    every = _make(blank, "-n", "grade")
    assert every.returncode == 0 and f"{sys.executable} -m torchlight.grading --all" in every.stdout


@make
def test_make_demo_names_the_stages_still_to_write(blank):
    run = _make(blank, "demo")
    said = run.stdout + run.stderr
    assert run.returncode != 0 and "Traceback" not in said, said
    assert "Still to write: 0.1, 0.2, 0.3," in said and "make grade STAGE=0.1" in said
    assert "3.4" not in said.split("Still to write:")[1]  # the cuda backend's stages run only on a GPU


@make
def test_make_demo_trains_once_its_stages_are_written(course, blank, tmp_path):
    out = tmp_path / "edition"
    write_edition(course, out, solved_through="4.5", git=False)
    run = _make(out, "demo", "ARGS=--help")  # the training script's help: it got that far
    said = run.stdout + run.stderr
    assert run.returncode == 0 and "Traceback" not in said, said
    assert "--epochs" in said and "Still to write" not in said


def test_the_ci_script_grades_and_fails_only_when_grading_breaks(blank, tmp_path):
    script = (blank / ".ci" / "run").read_text()
    assert os.access(blank / ".ci" / "run", os.X_OK)
    assert "torchlight.grading --all" in script and "make test" not in script and "make lint" not in script
    if shutil.which("make") is None or shutil.which("bash") is None:
        pytest.skip("needs make and bash")
    # A stand-in for .venv/bin/python: grading that fails stages but writes its results, then
    # grading that dies first. The set-up counts as done.
    ci = tmp_path / "ci"
    shutil.copytree(blank / ".ci", ci / ".ci")
    shutil.copy(blank / "Makefile", ci / "Makefile")
    for name in ("setup.cfg", "pyproject.toml", "setup.py"):
        shutil.copy(blank / name, ci / name)
    shutil.copytree(blank / "torchlight" / "_native", ci / "torchlight" / "_native")  # (the C sources)
    (ci / ".venv" / "bin").mkdir(parents=True)
    (ci / ".venv" / ".installed").touch()
    python = ci / ".venv" / "bin" / "python"
    for body, code, words in [
        ('echo "0 of 28 stages passed"; echo "{}" > "$5"; exit 1', 0, "0 of 28 stages passed"),
        ('echo "SyntaxError" >&2; exit 1', 1, "without writing its results"),
    ]:
        python.write_text(f"#!/bin/sh\n{body}\n")
        python.chmod(0o755)
        run = subprocess.run([str(ci / ".ci" / "run")], cwd=ci, capture_output=True, text=True, timeout=60)
        assert run.returncode == code and words in run.stdout + run.stderr, run.stdout + run.stderr


def test_nothing_kept_names_a_file_left_out(blank):
    assert not (blank / "torchlight" / "course").exists() and not (blank / "docs" / "instructors.md").exists()
    for test in (blank / "tests").rglob("*.py"):  # make test collects every one
        assert not re.search(r"^(?:from|import) torchlight\.course\b", test.read_text(), re.MULTILINE), test
    mkdocs = blank / "mkdocs.yml"
    if mkdocs.exists():  # then every page and hook it names is there
        text = mkdocs.read_text()
        docs = blank / (re.search(r"^docs_dir:\s*(\S+)", text, re.MULTILINE) or ["", "docs"])[1]
        for page in re.findall(r"([\w/.-]+\.md)\s*$", text, re.MULTILINE):
            assert (docs / page).is_file(), page
        for hook in re.findall(r"^\s*-\s*(\S+\.py)\s*$", text, re.MULTILINE):
            assert (blank / hook).is_file(), hook
    named = re.compile(r"\b((?:docs|tests|torchlight|project|notebooks)/[\w/.-]*\w)")
    for name in ("Makefile", ".ci/run", "README.md"):
        for path in named.findall((blank / name).read_text()):
            assert (blank / path).exists(), f"{name} names {path}, which the edition does not have"


@pytest.mark.parametrize("indent", ["", "        "])
@pytest.mark.parametrize(
    "message",
    [
        "Task 0.1: short",
        "Task 1.5: the optimizer's step in project/x.py; " + 'see notebooks/m.ipynb, section "1.5 Training"' * 2,
        "Task 2.1: " + "word " * 40 + "; see " + "x" * 130,
    ],
)
def test_stubs_are_laid_out_as_ruff_formats_them(message, indent):
    pytest.importorskip("ruff")
    statement = raise_statement("NotImplementedError", message, indent, 120)
    assert eval(" ".join(statement.split("\n")).removeprefix("raise ")).args == (message,)  # one constant
    depth = len(indent) // 4  # the statement inside functions nested that deep
    source = "".join("    " * i + f"def f{i}():\n" for i in range(depth))
    source += "".join(f"{indent}{line}\n" for line in statement.split("\n"))
    formatted = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--isolated", "--line-length", "120", "-"],
        input=source,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert formatted == source
