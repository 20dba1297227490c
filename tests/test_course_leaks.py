"""torchlight.course.leaks: no answer ships outside its region in the student edition.

A fresh edition of the real checkout (no git, no stage solved) holds no solution line outside its
region, except the reviewed ALLOWED entries, each of which is still needed; a solution line planted
in another file, whole or inside a longer line, is reported with the file, the line and the stage.
(No solution line is written out here: the planted ones are read from the course.)
"""

import json
import shutil
from pathlib import Path

import pytest

from torchlight.course import Course, write_edition
from torchlight.course.leaks import ALLOWED, MIN_LENGTH, find_leaks, leaks, normalize, solution_lines

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def course():
    return Course.load(ROOT)


@pytest.fixture(scope="module")
def edition(course, tmp_path_factory):
    return write_edition(course, tmp_path_factory.mktemp("leaks") / "edition", git=False).path


def test_a_fresh_edition_shows_no_solution_line_outside_its_region(course, edition):
    assert find_leaks(course, edition) == []


def test_every_allowed_line_is_still_needed(course, edition):
    """Each ALLOWED entry matches a line the search would report: a stale entry must go."""
    found = {(leak.path, leak.line) for leak in leaks(course, edition, allowed={})}
    assert set(ALLOWED) <= found, sorted(set(ALLOWED) - found)
    assert all(reason.strip() for reason in ALLOWED.values())


def _a_line_of(course, stage: str) -> str:
    lines = [line for line, (s, _) in solution_lines(course).items() if s == stage and len(line) >= MIN_LENGTH]
    assert lines, f"stage {stage} has no solution line of {MIN_LENGTH} characters or more"
    return lines[0]


def test_a_planted_copy_is_reported_with_its_file_line_and_stage(course, edition, tmp_path):
    copy = tmp_path / "edition"
    _copy_tree(edition, copy)
    planted = _a_line_of(course, "4.2")
    target = copy / "torchlight" / "backends" / "fast_conv.py"
    text = target.read_text(encoding="utf-8")
    target.write_text(text + "\n\ndef _copied(row, x):\n    " + planted + "\n", encoding="utf-8")
    number = len((text + "\n\ndef _copied(row, x):\n").split("\n"))
    found = find_leaks(course, copy)
    assert len(found) == 1, found
    assert found[0].startswith(f"torchlight/backends/fast_conv.py:{number}: a line of stage 4.2's solution (")
    assert repr(normalize(planted)) in found[0]


def test_a_copy_inside_a_longer_line_and_in_a_notebook_cell_is_reported(course, edition, tmp_path):
    copy = tmp_path / "edition"
    _copy_tree(edition, copy)
    in_docs, in_notebook = _a_line_of(course, "2.1"), _a_line_of(course, "4.1")
    (copy / "docs" / "notes.md").write_text(f"# Notes\n\nThe trick is `{in_docs}`, see?\n", encoding="utf-8")
    notebook = {"cells": [{"cell_type": "markdown", "source": ["Intro\n", f"    {in_notebook}\n"]}], "nbformat": 4}
    (copy / "notebooks" / "extra.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    found = {leak.where: leak.stage for leak in leaks(course, copy)}
    assert found == {"docs/notes.md:3": "2.1", "notebooks/extra.ipynb, cell 1, line 2": "4.1"}


def test_hints_and_short_lines_are_not_leaks(course, edition, tmp_path):
    copy = tmp_path / "edition"
    _copy_tree(edition, copy)
    line = _a_line_of(course, "3.1")
    (copy / "docs" / "notes.md").write_text(f"{line[: MIN_LENGTH - 1]}\n# HINT: {line}\n", encoding="utf-8")
    assert find_leaks(course, copy) == []


def _copy_tree(source: Path, target: Path) -> None:
    shutil.copytree(source, target)
