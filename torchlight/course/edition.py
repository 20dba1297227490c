"""Course tooling: writing a student edition, the checkout's files with solution regions replaced by stubs.

:func:`write_edition` copies every file of the course (see :func:`~torchlight.course.source.list_files`)
to a new folder, renders each marked file with the stages after ``solved_through`` stubbed, and
adds what a student repository needs: a student README, a ``.gitignore``, a ``make setup``
target, and (unless ``git=False``) a fresh git repository with one commit and no reference
history. Every notebook loses its outputs. Finally it checks that no marker line is left.

Left out on purpose: the instructors' tools and notes (``torchlight/course/``, its tests, and
``docs/instructors.md``). They hold no solutions, but they are of no use to a student, they test
the reference rather than the edition, and CI in the edition should grade, not regenerate. The
edition's ``.ci/run`` drops the line that runs ``python -m torchlight.course``.
"""

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

from .markers import looks_like_marker
from .source import Course, notebook_without_outputs

__all__ = ["EXCLUDED", "Edition", "GitError", "write_edition"]

EXCLUDED = ("torchlight/course/", "tests/test_course.py", "tests/test_course_git_failure.py", "docs/instructors.md")

_GITIGNORE = """.venv/
__pycache__/
build/
torchlight/*.so
*.egg-info/
.pytest_cache/
.hypothesis/
.ipynb_checkpoints/
*.nbi
*.nbc
out/
"""

_SETUP_TARGET = """
# Added by the student edition: set up .venv without running anything.
.PHONY: setup
setup: $(VENV)/.installed
"""

_README = """# torchlight: the student edition

You are going to build torchlight, a small deep-learning framework: scalar operators, automatic
differentiation, tensors, fast kernels and networks, one stage at a time. Every function you
write is already in place with its signature and docstring; its body raises
`NotImplementedError("Task N.K: ...")`, naming the stage, what to write and where the course
explains it.

## Set up and grade (two commands)

```
make setup                                     # makes .venv and installs torchlight into it
.venv/bin/python -m torchlight.grading --all   # the whole course: every stage and its state
```

(Without `make`: `python3 -m venv .venv && .venv/bin/pip install -e '.[test]'`.)

## Working through the course

- Open the notebooks in `notebooks/` in order (`.venv/bin/pip install jupyterlab`, then
  `.venv/bin/jupyter lab notebooks/`). Each stage ends with a grading cell.
- Grade one stage in a terminal: `.venv/bin/python -m torchlight.grading {first}`. It passes
  when every check is green; `--all` shows your progress through the whole course.
- A stage's tests use only what that stage and the ones before it build: work in order.
- `.venv/bin/python -m torchlight.grading --list` lists the stages.
{solved}
Everything else (the tests in `tests/`, the training scripts in `project/`, the docs in `docs/`)
is there to read and run. The checks of a stage are `pytest -m taskN_K`
(`.venv/bin/python -m pytest -m task0_1`).
"""


@dataclass
class Edition:
    """What :func:`write_edition` wrote."""

    path: Path
    files: int
    stubbed: List[str]  # stages whose regions became stubs
    solved: List[str]  # stages whose regions kept their solutions


def write_edition(course: Course, out, solved_through: Optional[str] = None, git: bool = True) -> Edition:
    """Write the student edition of ``course`` to the new folder ``out`` and return what it holds.

    Stages up to ``solved_through`` (in course order) keep their reference solutions; every other
    stage's regions become stubs. ``out`` must not exist or be empty. When anything fails midway
    (git missing or failing, a full disk), what was written is removed again (``out`` itself too,
    unless it was there before), so that the same command can simply be run again.
    """
    out = Path(out).resolve()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FileExistsError(f"{out} already exists and is not empty; choose a new folder")
    if course.root == out or course.root in out.parents and not _ignored(course.root, out):
        raise ValueError(f"{out} lies inside the checkout; write the edition somewhere git ignores or outside it")
    solved = course.through(solved_through)
    existed = out.exists()
    out.mkdir(parents=True, exist_ok=True)
    try:
        written = _write_files(course, out, solved, solved_through, git)
    except BaseException:
        _remove_partial(out, keep_folder=existed)
        raise
    staged = course.staged()
    return Edition(out, written, [s for s in staged if not solved(s)], [s for s in staged if solved(s)])


def _remove_partial(out: Path, keep_folder: bool) -> None:
    """Remove a partly written edition: ``out``'s contents, and ``out`` unless it was there before."""
    if keep_folder:
        for entry in out.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
    else:
        shutil.rmtree(out, ignore_errors=True)


def _write_files(course: Course, out: Path, solved, solved_through: Optional[str], git: bool) -> int:
    """Write the edition's files into the empty folder ``out`` (and make it a repository); how many."""
    written = 0
    for path in course.files:
        if path.startswith(EXCLUDED) or path == "README.md":
            continue
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        source = course.root / path
        if path in course.marked_files:
            target.write_text(course.render(path, solved), encoding="utf-8")
        elif path.endswith(".ipynb"):
            target.write_text(
                notebook_without_outputs(json.loads(source.read_text(encoding="utf-8"))), encoding="utf-8"
            )
        elif path == ".ci/run":
            target.write_text(_without_course(source.read_text(encoding="utf-8")), encoding="utf-8")
        else:
            shutil.copyfile(source, target)
        shutil.copymode(source, target)  # .ci/run stays executable
        written += 1
    written += _student_files(course, out, solved_through)
    _check_no_markers(out)
    if git:
        _git_init(out)
    return written


def _student_files(course: Course, out: Path, solved_through: Optional[str]) -> int:
    first = next(iter(course.stages), "0.1")
    solved = ""
    if solved_through is not None:
        solved = f"- Stages up to {solved_through} come solved: your instructor has given you their code.\n"
    (out / "README.md").write_text(_README.format(first=first, solved=solved), encoding="utf-8")
    gitignore = out / ".gitignore"
    if not gitignore.exists():
        gitignore.write_text(_GITIGNORE, encoding="utf-8")
    makefile = out / "Makefile"
    if makefile.exists():
        text = makefile.read_text(encoding="utf-8")
        if "$(VENV)/.installed:" in text and "\nsetup:" not in text:
            makefile.write_text(text.rstrip("\n") + "\n" + _SETUP_TARGET, encoding="utf-8")
    return 2


def _without_course(script: str) -> str:
    """A CI script without its ``torchlight.course`` lines (and the comments just above them)."""
    kept: List[str] = []
    for line in script.splitlines(keepends=True):
        if "torchlight.course" in line:
            while kept and kept[-1].lstrip().startswith("#") and not kept[-1].startswith("#!"):
                kept.pop()
            continue
        kept.append(line)
    return "".join(kept)


def _check_no_markers(out: Path) -> None:
    """Fail loudly if any file of the edition still holds a marker line (a solution would leak)."""
    for path in sorted(out.rglob("*")):
        if not path.is_file() or ".git" in path.relative_to(out).parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        places = [(str(path), text)]
        if path.suffix == ".ipynb":  # look inside each cell, not at the JSON's quoted lines
            cells = json.loads(text).get("cells", [])
            places = [(f"{path}, cell {i + 1}", "".join(c.get("source", ""))) for i, c in enumerate(cells)]
        for where, body in places:
            for n, line in enumerate(body.splitlines(), 1):
                if looks_like_marker(line):
                    raise RuntimeError(f"{where}, line {n}: a solution marker is left in the edition: {line.strip()!r}")


def _ignored(root: Path, path: Path) -> bool:
    try:
        run = subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=root, capture_output=True)
    except OSError:  # no git: nothing counts as ignored
        return False
    return run.returncode == 0


def _git_init(out: Path) -> None:
    """A fresh repository with the edition as its one commit (students fork or clone it)."""
    env = dict(os.environ, GIT_AUTHOR_NAME="torchlight course", GIT_AUTHOR_EMAIL="course@torchlight.invalid")
    env.update(GIT_COMMITTER_NAME=env["GIT_AUTHOR_NAME"], GIT_COMMITTER_EMAIL=env["GIT_AUTHOR_EMAIL"])
    try:
        for cmd in (
            ["git", "init", "-q"],
            ["git", "add", "-A"],
            ["git", "commit", "-q", "-m", "torchlight student edition"],
        ):
            subprocess.run(cmd, cwd=out, env=env, check=True, capture_output=True)
    except FileNotFoundError:
        raise GitError("git was not found (is it installed and on PATH?); install it, or pass --no-git") from None
    except OSError as exc:
        raise GitError(f"git could not be run ({exc}); pass --no-git to write the edition without it") from None
    except subprocess.CalledProcessError as exc:
        said = (exc.stderr or b"").decode(errors="replace").strip().splitlines()
        reason = said[-1].strip() if said else "no message"
        raise GitError(
            f"'{' '.join(exc.cmd)}' failed with exit status {exc.returncode} ({reason}); fix git or pass --no-git"
        ) from None


class GitError(RuntimeError):
    """git could not make the edition a repository (missing, or a command failed): one line saying which."""
