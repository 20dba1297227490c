"""Course tooling: linting a student edition as its own ``make lint`` does.

A fresh edition must pass its own lint: ``ruff check`` and ``ruff format --check`` on
``torchlight/``, ``tests/`` and ``benchmarks/`` with the edition's configuration (the repository's
``pyproject.toml``), and mypy on ``torchlight/``. ``project/`` is left out: its training loops hold
stages whose stubs leave names that only the solution assigns (the loss, read after the step),
which ruff reports until the student writes the stage.
Two things can break it that the reference's lint never sees: a stub laid out otherwise than ruff
formats it (the renderer lays them out as ruff does: :func:`~torchlight.course.markers.raise_statement`),
and library code around a region that reads a name only the region assigns (F821), or assigns a
name only the region reads (F841, F401). The cure for those is in the library: a region that
returns its value or ends its function, or a given name marked for the stage's code.

:func:`lint_edition` runs the tools on an edition and returns what they found, one problem per
string; an empty list means clean. A tool that is not installed is a problem too (install the
``lint`` extra: ``pip install -e '.[lint]'``).
"""

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List, Sequence

__all__ = ["LINTED", "TYPED", "lint_edition"]

# What the edition's `make lint` checks (edition_files/Makefile): ruff on LINTED, mypy on TYPED.
LINTED = ("torchlight", "tests", "benchmarks")
TYPED = ("torchlight",)


def lint_edition(path: Path, mypy: bool = True) -> List[str]:
    """The problems ruff (and, with ``mypy``, mypy) finds in the edition at ``path``; [] when clean."""
    path = Path(path)
    linted = [name for name in LINTED if (path / name).exists()]  # (the Makefile's $(wildcard ...))
    problems = _run(path, "ruff check", ["ruff", "check", "--no-cache", "--output-format", "concise", *linted])
    check_format = ["ruff", "format", "--no-cache", "--check", "--output-format", "concise", *linted]
    found = _run(path, "ruff format --check", check_format)
    if any("unexpected argument" in line for line in found):  # a ruff before --output-format here
        found = _run(path, "ruff format --check", [a for a in check_format if a not in ("--output-format", "concise")])
    problems += found
    if mypy:
        with tempfile.TemporaryDirectory() as cache:  # nothing written into the edition
            problems += _run(path, "mypy", ["mypy", "--cache-dir", cache, "--no-error-summary", *TYPED])
    return problems


def _run(path: Path, name: str, command: Sequence[str]) -> List[str]:
    tool = command[0]
    try:
        run = subprocess.run([sys.executable, "-m", *command], cwd=path, capture_output=True, text=True)
    except OSError as exc:
        return [f"{name}: could not run ({exc})"]
    said = (run.stdout + run.stderr).splitlines()
    if run.returncode == 0:
        return []
    if any(f"No module named {tool}" in line for line in said):
        return [f"{name}: {tool} is not installed here; install the lint extra: pip install -e '.[lint]'"]
    found = [line.strip() for line in said if _finding(tool, line)]
    if not found:  # the tool failed without a finding to show: its last words
        found = [line.strip() for line in said[-5:] if line.strip()] or [f"exit status {run.returncode}"]
    return [f"{name}: {line}" for line in found]


def _finding(tool: str, line: str) -> bool:
    """A line of a tool's output that names one problem in one file."""
    line = line.strip()
    if tool == "ruff" and line.startswith("Would reformat:"):
        return True
    if not line.startswith(LINTED):
        return False
    if tool == "mypy":
        return ": error:" in line
    return True
