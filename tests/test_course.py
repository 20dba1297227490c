"""torchlight.course: solution markers, the student edition, the stages listing and verify.

Most tests run on a small synthetic course in tmp_path (a torchlight package of two functions,
their tests, a notebook); one reads the real checkout. In this file marker lines are written
``@BEGIN 0.1`` / ``@END 0.1`` and expanded by ``_marked``: a real marker here would make this
file part of the course.
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import torchlight
from torchlight import grading
from torchlight.course import Course, MarkerError, find_regions, leaks, render, verify, write_edition
from torchlight.course.listing import stage_listing
from torchlight.utils import cli

BEGIN, END = "# BEGIN" + " SOLUTION", "# END" + " SOLUTION"


def _marked(text: str) -> str:
    return textwrap.dedent(text).replace("@BEGIN", BEGIN).replace("@END", END)


def _lines(text: str):
    return _marked(text).split("\n")


def _at(i):
    return f"f.py:{i + 1}"


# -- markers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, error",
    [
        (
            "@BEGIN 0.1\nx\n@BEGIN 0.2\ny\n@END 0.2\n@END 0.1\n",
            r"f.py:3: BEGIN SOLUTION 0.2 inside the region of stage 0.1 opened at f.py:1",
        ),
        ("x\n@END 0.1\n", r"f.py:2: END SOLUTION 0.1 without a BEGIN"),
        (
            "@BEGIN 0.1\nx\n@END 0.2\n",
            r"f.py:3: END SOLUTION 0.2 closes the region BEGIN SOLUTION 0.1 opened at f.py:1",
        ),
        ("@BEGIN 0.1\nx\n", r"f.py:1: BEGIN SOLUTION 0.1 is never closed"),
        ("@BEGIN 0.1\n\n@END 0.1\n", r"f.py:1: the region of stage 0.1 is empty"),
        ("x = 1\n# BEGIN SOLUTION\n", r"f.py:2: malformed solution marker"),
        ("x = 1\n#begin solution 1.2\n", r"f.py:2: malformed solution marker"),
        ("@BEGIN 1\nx\n@END 1\n", r"f.py:1: malformed solution marker"),
    ],
)
def test_marker_errors_name_the_line(text, error):
    with pytest.raises(MarkerError, match=error):
        find_regions(_lines(text), _at)


def test_render_keeps_indentation_hints_and_solved_bodies():
    lines = _lines(
        """\
        def f(x):
            "doc"
            @BEGIN 0.1: the answer
            # HINT: add one
            #   (then return it)

            # a private note: a blank line ends the hint
            y = x + 1
            return y
            @END 0.1
        """
    )
    (region,) = find_regions(lines, _at)
    assert (region.stage, region.begin, region.end, region.indent, region.text) == ("0.1", 2, 9, "    ", "the answer")
    stub = render(lines, [region], lambda r: False, lambda r: "raise NotImplementedError('Task 0.1')")
    assert stub == [
        "def f(x):",
        '    "doc"',
        "    # HINT: add one",
        "    #   (then return it)",
        "    raise NotImplementedError('Task 0.1')",
        "",
    ]
    solved = render(lines, [region], lambda r: True, lambda r: "unused")
    assert (
        "\n".join(solved) == 'def f(x):\n    "doc"\n    # HINT: add one\n    #   (then return it)\n\n'
        "    # a private note: a blank line ends the hint\n    y = x + 1\n    return y\n"
    )


# -- a synthetic course ---------------------------------------------------------------------


def _notebook(cells):
    return json.dumps(
        {
            "cells": [
                {
                    "cell_type": kind,
                    "metadata": {},
                    "source": source,
                    **(
                        {"outputs": [{"output_type": "stream", "name": "stdout", "text": "2\n"}], "execution_count": 3}
                        if kind == "code"
                        else {}
                    ),
                }
                for kind, source in cells
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def _course(tmp_path, *, ops=None, tests=None) -> Path:
    """A tiny course: stages 0.1-0.3 (0.3 without regions), torchlight.ops, tests, a notebook."""
    root = tmp_path / "src"
    (root / "torchlight").mkdir(parents=True)
    (root / "tests" / "module0").mkdir(parents=True)
    (root / "notebooks").mkdir()
    (root / ".ci").mkdir()
    (root / "setup.cfg").write_text(
        "[tool:pytest]\ntestpaths = tests\npythonpath = .\naddopts = --strict-markers -q\nmarkers =\n"
        "    module0: module 0, basics\n    task0_1: doubling\n    task0_2: tripling\n    task0_3: later\n"
    )
    # ruff's rules as the course's; its line length stays ruff's default, 88 (see the stubs below),
    # but for the grader and its command line's parser, copied in from the checkout, which is
    # written to the checkout's 120
    (root / "ruff.toml").write_text(
        '[lint]\nselect = ["E", "F", "W", "I", "B"]\n\n[lint.per-file-ignores]\n"torchlight/grading/*" = ["E501"]\n'
        '"torchlight/utils/cli.py" = ["E501"]\n'
        '\n[format]\nexclude = ["torchlight/grading/*", "torchlight/utils/cli.py"]\n'
    )
    (root / "torchlight" / "__init__.py").write_text('from . import ops\n\n__all__ = ["ops"]\n')
    # the grader, a package: the edition grades with it
    grader = Path(grading.__file__).parent
    shutil.copytree(grader, root / "torchlight" / "grading", ignore=shutil.ignore_patterns("__pycache__"))
    # and the parser of its command line
    (root / "torchlight" / "utils").mkdir()
    (root / "torchlight" / "utils" / "__init__.py").write_text('"""the command lines\' parser"""\n')
    shutil.copy(Path(cli.__file__), root / "torchlight" / "utils" / "cli.py")
    (root / "torchlight" / "course").mkdir()
    (root / "torchlight" / "course" / "__init__.py").write_text('"""instructors only"""\n')
    (root / "torchlight" / "ops.py").write_text(
        _marked(
            ops
            or '''\
            """Module 0: two small functions."""


            def double(x):
                """2 x"""
                @BEGIN 0.1
                return 2 * x
                @END 0.1


            def triple(x):
                """3 x"""
                if x is None:
                    raise TypeError("a number, please")
                @BEGIN 0.2: multiply by three
                # HINT: x + x + x works too
                return 3 * x
                @END 0.2
            '''
        )
    )
    (root / "tests" / "module0" / "test_ops.py").write_text(
        tests
        or textwrap.dedent(
            """\
            import pytest

            from torchlight import ops


            @pytest.mark.task0_1
            @pytest.mark.parametrize("x", [0, 1, 5])
            def test_double(x):
                assert ops.double(x) == x + x


            @pytest.mark.task0_2
            def test_triple():
                assert ops.triple(2) == 6


            @pytest.mark.task0_2
            def test_triple_checks_its_input():
                with pytest.raises(TypeError):
                    ops.triple(None)
            """
        )
    )
    (root / "notebooks" / "module0_basics.ipynb").write_text(
        _notebook(
            [
                ("markdown", "# Module 0\n## 0.1 Doubling\n"),
                (
                    "code",
                    _marked(
                        "from torchlight import ops\n@BEGIN 0.1\nanswer = ops.double(1)\n@END 0.1\nassert answer == 2"
                    ),
                ),
                ("markdown", "## 0.2 Tripling\n"),
            ]
        )
    )
    (root / "README.md").write_text("# the reference\n")
    (root / "Makefile").write_text("VENV := .venv\n$(VENV)/.installed: setup.cfg\n\ttouch $@\n")
    (root / ".ci" / "run").write_text("#!/bin/sh\nmake test\n.venv/bin/python -m torchlight.course verify\n")
    os.chmod(root / ".ci" / "run", 0o755)
    (root / "docs").mkdir()
    (root / "docs" / "instructors.md").write_text("how to make an edition\n")
    return root


def test_tasks_say_what_to_write_and_where(tmp_path):
    course = Course.load(_course(tmp_path))
    assert list(course.stages) == ["0.1", "0.2", "0.3"]
    assert course.staged() == ["0.1", "0.2"]
    by = {(t.path, t.label): t for t in course.tasks}
    double = by["torchlight/ops.py", "double"]
    assert double.whole and double.where == "torchlight/ops.py:6"
    assert (
        double.message
        == 'Task 0.1: implement double in torchlight/ops.py; see notebooks/module0_basics.ipynb, section "0.1 Doubling"'
    )
    triple = by["torchlight/ops.py", "triple"]
    assert not triple.whole
    assert triple.message.startswith(
        'Task 0.2: multiply by three in torchlight/ops.py; see notebooks/module0_basics.ipynb, section "0.2 Tripling"'
    )
    cell = by["notebooks/module0_basics.ipynb", "cell 2"]
    assert (
        cell.message
        == 'Task 0.1: write the answer to this exercise; see notebooks/module0_basics.ipynb, section "0.1 Doubling"'
    )
    listing = stage_listing(course)
    assert (
        "0.1   doubling (2 regions)\n        notebooks/module0_basics.ipynb: cell 2\n        torchlight/ops.py: double"
        in listing
    )
    assert "0.3   later: no regions yet" in listing


@pytest.mark.parametrize(
    "ops, error",
    [
        ("@BEGIN 0.1\nX = 1\n@END 0.1\n", r"torchlight/ops.py:1: the region of stage 0.1 is not inside a function"),
        (
            "def f():\n    @BEGIN 0.9\n    return 1\n    @END 0.9\n",
            r"torchlight/ops.py:2: stage 0.9 is not a course stage",
        ),
        (
            "def f():\n@BEGIN 0.1\n    return 1\n@END 0.1\n",
            r"torchlight/ops.py:2: indent BEGIN SOLUTION 0.1 like the code",
        ),
        ("def f():\n    @BEGIN 0.1\n    return 1\n", r"torchlight/ops.py:2: BEGIN SOLUTION 0.1 is never closed"),
    ],
)
def test_misplaced_regions_are_errors(tmp_path, ops, error):
    with pytest.raises(MarkerError, match=error):
        Course.load(_course(tmp_path, ops=ops))


def test_a_marker_in_a_markdown_cell_is_an_error(tmp_path):
    root = _course(tmp_path)
    (root / "notebooks" / "module0_basics.ipynb").write_text(_notebook([("markdown", _marked("@BEGIN 0.1\n"))]))
    with pytest.raises(
        MarkerError, match=r"module0_basics.ipynb, cell 1, line 1: solution markers belong in code cells"
    ):
        Course.load(root)


def _run(args, cwd, **kw):
    env = dict(os.environ, PYTHONPATH=str(cwd), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, **kw)


def test_the_student_edition(tmp_path):
    course = Course.load(_course(tmp_path))
    out = tmp_path / "edition"
    edition = write_edition(course, out)
    assert edition.stubbed == ["0.1", "0.2"] and edition.solved == []
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and ".git" not in p.parts)
    assert files == [
        ".ci/run",
        ".gitignore",
        ".torchlight-update/edition.json",  # which edition this is, for course update
        "Makefile",
        "README.md",
        "notebooks/module0_basics.ipynb",
        "ruff.toml",
        "setup.cfg",
        "tests/module0/test_ops.py",
        "torchlight/__init__.py",
        *sorted(f"torchlight/grading/{p.name}" for p in Path(grading.__file__).parent.glob("*.py")),
        "torchlight/ops.py",
        "torchlight/utils/__init__.py",
        "torchlight/utils/cli.py",
    ]  # no course package, no instructors' notes
    record = json.loads((out / ".torchlight-update" / "edition.json").read_text())
    assert record == {"solved_through": None, "source_commit": None}  # (the tiny course is no git checkout)
    ops = (out / "torchlight" / "ops.py").read_text()
    assert "SOLUTION" not in ops and "2 * x" not in ops and "3 * x" not in ops
    # stubs laid out as ruff formats them (line length 88 here: no pyproject.toml)
    assert '    """2 x"""\n    raise NotImplementedError(\n        "Task 0.1: implement double in torchlight' in ops
    assert (
        '        raise TypeError("a number, please")\n    # HINT: x + x + x works too\n'
        '    raise NotImplementedError(\n        "Task 0.2: multiply by three' in ops
    )
    (cell,) = [
        c
        for c in json.loads((out / "notebooks" / "module0_basics.ipynb").read_text())["cells"]
        if c["cell_type"] == "code"
    ]
    assert "".join(cell["source"]).startswith(
        'from torchlight import ops\nraise NotImplementedError(\n    "Task 0.1: write the answer'
    )
    assert cell["outputs"] == [] and cell["execution_count"] is None
    assert "student edition" in (out / "README.md").read_text() and "grading --all" in (out / "README.md").read_text()
    assert "torchlight.course" not in (out / ".ci" / "run").read_text() and os.access(out / ".ci" / "run", os.X_OK)
    assert "setup: $(VENV)/.installed" in (out / "Makefile").read_text()
    assert ".venv/" in (out / ".gitignore").read_text()
    if shutil.which("git"):
        log = subprocess.run(["git", "log", "--oneline"], cwd=out, capture_output=True, text=True, check=True).stdout
        assert len(log.splitlines()) == 1
    # import works; a stub raises only when called, with its task
    run = _run(
        ["-c", "import torchlight.ops as o\ntry:\n    o.double(1)\nexcept NotImplementedError as e:\n    print(e)"], out
    )
    assert run.stdout.startswith("Task 0.1: implement double"), run.stderr
    with pytest.raises(FileExistsError):
        write_edition(course, out)


def test_solved_through_keeps_the_earlier_stages(tmp_path):
    course = Course.load(_course(tmp_path))
    edition = write_edition(course, tmp_path / "ed", "0.1", git=False)
    assert edition.solved == ["0.1"] and edition.stubbed == ["0.2"]
    ops = (tmp_path / "ed" / "torchlight" / "ops.py").read_text()
    assert "    return 2 * x\n" in ops and "Task 0.2: multiply by three" in ops and "SOLUTION" not in ops
    with pytest.raises(ValueError, match="unknown stage '7.7'"):
        write_edition(course, tmp_path / "ed2", "7.7")


def test_git_ignored_files_stay_out(tmp_path):
    if not shutil.which("git"):
        pytest.skip("needs git")
    root = _course(tmp_path)
    (root / ".gitignore").write_text("secret.txt\n")
    (root / "secret.txt").write_text("answers")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    course = Course.load(root)
    assert "secret.txt" not in course.files and ".gitignore" in course.files
    write_edition(course, tmp_path / "ed", git=False)
    assert not (tmp_path / "ed" / "secret.txt").exists()


def test_grading_all_in_an_edition_names_the_missing_task(tmp_path):
    out = tmp_path / "ed"
    write_edition(Course.load(_course(tmp_path)), out, "0.1", git=False)
    run = _run(["-m", "torchlight.grading", "--all", "--json", "results.json"], out)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "0.1  doubling" in run.stdout and "3/3  passed" in run.stdout
    assert "not implemented: Task 0.2" in run.stdout and "0.3  later" in run.stdout and "no checks yet" in run.stdout
    results = json.loads((out / "results.json").read_text())
    assert [(t["number"], t["score"], t["max_score"], t["status"]) for t in results["tests"]] == [
        ("0.1", 1.0, 1.0, "passed"),
        ("0.2", 0.0, 1.0, "failed"),
    ]
    assert results["score"] == 1.0 and "test_triple" in results["tests"][1]["output"]
    # held-back checks, kept out of the edition's tests/, grade with --tests-dir
    (out / "heldback" / "module0").mkdir(parents=True)
    (out / "heldback" / "module0" / "test_more.py").write_text(
        "import pytest\nfrom torchlight import ops\n\n"
        "@pytest.mark.task0_1\ndef test_double_big():\n    assert ops.double(10**6) == 2 * 10**6\n"
    )
    held = _run(["-m", "torchlight.grading", "0.1", "--tests-dir", "heldback"], out)
    assert held.returncode == 0 and "Stage 0.1 (doubling): PASSED, 1 passed" in held.stdout, held.stdout + held.stderr


def test_verify_passes_on_a_good_course(tmp_path):
    said = []
    assert verify(Course.load(_course(tmp_path)), say=said.append) == 0, "\n".join(said)
    report = "\n".join(said)
    assert "verify passed: 2 stage(s) checked" in report
    assert "3 of 3 fail, all at Task 0.1 stubs" in report and "1 of 2 fail, all at Task 0.2 stubs" in report


def test_verify_judges_what_a_stub_should_cause():
    # The judging alone, on grading rows as the probe returns them: [test, outcome, message, task].
    from torchlight.course.verify import _Check, _judge_with, _judge_without

    def found(passed, *rows):
        return {"stages": {"0.2": {"passed": passed, "problem": "", "rows": [list(r) for r in rows]}}}

    good = _Check("0.2", "tripling", 1)
    _judge_without(
        good,
        found(False, ("t.py::a", "failed", "NotImplementedError: Task 0.2: x", "0.2"), ("t.py::b", "passed", "", "")),
    )
    assert good.without == "1 of 2 fail, all at Task 0.2 stubs" and not good.problems

    blind = _Check("0.2", "tripling", 1)  # its tests never reach its code
    _judge_without(blind, found(True, ("t.py::a", "passed", "", "")))
    assert blind.without == "PASSES" and "passes with its regions stubbed" in blind.problems[0]

    stray = _Check("0.2", "tripling", 1)  # reaches a later stage's stub, or fails for another reason
    _judge_without(
        stray,
        found(
            False,
            ("t.py::a", "failed", "NotImplementedError: Task 0.3: y", "0.3"),
            ("t.py::b", "error", "ImportError: no name", ""),
        ),
    )
    assert stray.without == "2 of 2 failures not from Task 0.2"
    assert "t.py::a fails at the Task 0.3 stub" in stray.problems[0] and "ImportError: no name" in stray.problems[1]

    broken = _Check("0.2", "tripling", 1)
    _judge_without(broken, {"import_error": "Traceback ...\nSyntaxError: bad"})
    assert broken.without == "import torchlight FAILED" and "SyntaxError" in broken.problems[0]

    wrong = _Check("0.2", "tripling", 1)  # with its code, a check still fails
    _judge_with(wrong, "0.2", found(False, ("t.py::a", "failed", "assert 5 == 6", "")), own=True)
    assert wrong.with_ == "FAILS (0/1 pass)" and "assert 5 == 6" in wrong.problems[1]


# -- the real course --------------------------------------------------------------------------


def test_the_real_course_marks_module_0():
    course = Course.load(Path(torchlight.__file__).resolve().parents[1])
    assert {"0.1", "0.2", "0.3", "0.4"} <= set(course.staged())
    listing = stage_listing(course)
    assert "torchlight/scalar.py: mul, add, neg" in listing
    assert "torchlight/nn/module.py: Module.named_children" in listing
    assert all(t.message.startswith(f"Task {t.stage}: ") for t in course.tasks)


def _solution_lines(root: Path):
    """(stage, where, number of code lines) for every region of the checkout at ``root``."""
    found = []
    for path, cell, lines, regions in leaks._regions(Course.load(root)):
        for region in regions:
            code = [s for s in region.body(lines) if s.strip() and not s.strip().startswith("#")]
            where = f"{path}:{region.begin + 1}" if cell < 0 else f"{path}, cell {cell + 1}:{region.begin + 1}"
            found.append((region.stage, where, len(code)))
    return found


def test_the_real_course_has_even_stages():
    # Issue 19: no region over 30 lines of code, no stage over about 50 (here: 55), so that each
    # stage is one idea a student can hold. Blank lines, comments and hints do not count.
    found = _solution_lines(Path(torchlight.__file__).resolve().parents[1])
    long_regions = [f"{where} (stage {stage}): {n} lines" for stage, where, n in found if n > 30]
    assert not long_regions, "regions over 30 lines of code:\n" + "\n".join(long_regions)
    per_stage: dict = {}
    for stage, _, n in found:
        per_stage[stage] = per_stage.get(stage, 0) + n
    long_stages = [f"stage {stage}: {n} lines" for stage, n in per_stage.items() if n > 55]
    assert not long_stages, "stages over 55 lines of code:\n" + "\n".join(long_stages)
