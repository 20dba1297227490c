"""Course tooling: writing a student edition, the checkout's files with solution regions replaced by stubs.

:func:`write_edition` copies every file of the course (see :func:`~torchlight.course.source.list_files`)
to a new folder, renders each marked file with the stages after ``solved_through`` stubbed, and
adds what a student repository needs (templates in ``edition_files/``): a README that lists the
commands, a ``.gitignore``, a Makefile (``setup``, ``grade STAGE=N.K``, ``notebook``, ``test``,
``lint``, ``demo``, ``help``), a CI script that grades (green whatever the student's progress, red
only when the tooling breaks), ``project/demo.py`` (``make demo``: it names the stages still to
write before it trains), and (unless ``git=False``) a fresh git repository with one commit and no
reference history. Every notebook loses its outputs. Finally it checks that no marker line is left.

The stubs are laid out as ruff formats them, and the library keeps no name that only a stubbed
region defines or reads, so that a fresh edition passes its own ``make lint``
(:func:`~torchlight.course.lint.lint_edition` checks it).

Left out on purpose: the instructors' tools and notes (``torchlight/course/``, every test module
that imports it, and ``docs/instructors.md``), and the course website's build (``mkdocs.yml``, ``docs/hooks/``,
``docs/assets/``, ``tests/site/``), which generates its pages with ``torchlight.course``. The
instructors' tools hold no solutions, but they are of no use to a student, they test the reference
rather than the edition, and CI in the edition should grade, not regenerate. ``docs/`` keeps its
pages, to read as Markdown.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

from .markers import looks_like_marker
from .source import Course, notebook_without_outputs

__all__ = ["EXCLUDED", "Edition", "GitError", "student_commands", "write_edition"]

EXCLUDED = (
    "torchlight/course/",
    "tests/test_course",  # test_course.py, test_course_*.py: they test the tools
    "docs/instructors.md",
    # the course website: its hooks generate the pages with torchlight.course, absent from an edition
    "mkdocs.yml",
    "docs/hooks/",
    "docs/assets/",
    "tests/site/",
    "tests/test_site_notebook_outputs.py",  # tests docs/hooks, and quotes a solution line to do it
    # the reference's own CI steps (the edition's .ci/run grades instead)
    ".ci/numba-cuda-simulator",
    ".ci/installed-wheel",
)

# Written from the templates in edition_files/ rather than copied from the course.
_REPLACED = ("README.md", "Makefile", ".ci/run")
UPDATE_STATE = ".torchlight-update"  # course update's folder in a student's repository
_TEMPLATES = Path(__file__).resolve().parent / "edition_files"

# make demo trains module 4's network: it waits for the stages of modules 0 to 4 that run on a CPU.
_DEMO_MODULE = 4
_GPU_ONLY = ("torchlight/backends/cuda.py",)

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

    :param course: the reference course (``Course.load``'s).
    :param out: a new or empty folder.
    :param solved_through: the last stage that keeps its solution (None: none does).
    :param git: make the edition a git repository with one commit.
    :raises FileExistsError: when out is there and not empty.
    :raises GitError: when git cannot make the repository (nothing of the edition is left).
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


def edition_record(solved_through: Optional[str], commit: Optional[str]) -> str:
    """The text of ``.torchlight-update/edition.json``: the stages solved and the reference's commit."""
    return json.dumps({"solved_through": solved_through, "source_commit": commit}, indent=1) + "\n"


def source_commit(root: Path) -> Optional[str]:
    """The reference's commit, when its working tree is clean (so that the commit is what was rendered)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=root, capture_output=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root, capture_output=True)
    except OSError:
        return None
    if head.returncode or dirty.returncode or dirty.stdout.strip():
        return None
    return head.stdout.decode().strip() or None


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
        if path.startswith(EXCLUDED) or path in _REPLACED or _tests_the_tools(course.root, path):
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
        else:
            shutil.copyfile(source, target)
        shutil.copymode(source, target)  # scripts stay executable
        written += 1
    written += _student_files(course, out, solved_through)
    # Which edition this is, for `course update` (update.py): with it, an update made from a fresh
    # clone of the student's repository can make this edition again and merge against it.
    record = out / UPDATE_STATE / "edition.json"
    record.parent.mkdir(exist_ok=True)
    record.write_text(edition_record(solved_through, source_commit(course.root)), encoding="utf-8")
    written += 1
    _check_no_markers(out)
    if git:
        _git_init(out)
    return written


_TOOLS_IMPORT = re.compile(r"^(?:from|import) torchlight\.course\b|^from torchlight import course\b", re.M)


def _tests_the_tools(root: Path, path: str) -> bool:
    """A test module that imports torchlight.course: it tests the instructors' tools, which the
    edition leaves out (in it, the module would fail to import and break ``make test``)."""
    if not (path.startswith("tests/") and path.endswith(".py")):
        return False
    return bool(_TOOLS_IMPORT.search((root / path).read_text(encoding="utf-8", errors="replace")))


def student_commands(course: Course) -> List[Tuple[str, str]]:
    """The edition's ``make`` commands, each with what it does: its README, ``make help`` and the
    course site's "Start here" page list them."""
    first = next(iter(course.stages), "0.1")
    demo = _demo_command(_read(course.root / "Makefile")) if (course.root / "project").is_dir() else None
    commands = [
        ("make setup", "makes .venv and installs torchlight into it (your edits count at once)"),
        (f"make grade STAGE={first}", "grades one stage: a table of its checks, green when it passes"),
        ("make grade", "the whole course: every stage and its state"),
        ("make notebook", "the course's notebooks in JupyterLab (installed into .venv the first time)"),
        ("make test", "every test of the course: red until the course is done"),
        ("make lint", "ruff on torchlight/, tests/ and benchmarks/, mypy on torchlight/: it comes clean, keep it so"),
    ]
    if demo is not None:
        commands.append(("make demo", f"module {_DEMO_MODULE}'s network, trained once the stages it needs are written"))
    commands.append(("make help", "this list"))
    return commands


def _student_files(course: Course, out: Path, solved_through: Optional[str]) -> int:
    """Write the README, Makefile, CI script, .gitignore and demo of the edition; how many files."""
    first = next(iter(course.stages), "0.1")
    makefile = _read(course.root / "Makefile")
    demo = _demo_command(makefile) if (course.root / "project").is_dir() else None
    commands = student_commands(course)
    width = max(len(c) for c, _ in commands) + 2
    solved = ""
    if solved_through is not None:
        solved = f"- Stages up to {solved_through} come solved: your instructor has given you their code.\n"
    readme = _template("README.md").format(
        first=first, solved=solved, commands="".join(f"{c.ljust(width)}# {what}\n" for c, what in commands)
    )
    written = [_write(out / "README.md", readme)]
    help_lines = "".join(f'\t@echo "{c.ljust(width)}{what}"\n' for c, what in commands)
    demo_rule = "# project/demo.py names the stages still to write, if any, before it trains.\n"
    demo_rule += "demo: $(VENV)/.installed\n\t$(PY) -m project.demo $(ARGS)\n\n"
    makefile_text = (
        _template("Makefile")
        .replace("@HELP@", help_lines)
        .replace("@INSTALL_RULE@", _install_rule(makefile, out))
        .replace("@DEMO_PHONY@", " demo" if demo is not None else "")
        .replace("@DEMO_RULE@", demo_rule if demo is not None else "")
    )
    written.append(_write(out / "Makefile", makefile_text))
    written.append(_write(out / ".ci" / "run", _template("ci_run"), executable=True))
    if demo is not None:
        written.append(_write(out / "project" / "demo.py", _demo_script(course, demo)))
    gitignore = out / ".gitignore"
    if not gitignore.exists():
        written.append(_write(gitignore, _GITIGNORE))
    return len(written)


def _template(name: str) -> str:
    return (_TEMPLATES / name).read_text(encoding="utf-8")


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def _write(path: Path, text: str, executable: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if executable:
        path.chmod(0o755)
    return path


def _rule(makefile: str, target: str) -> Tuple[str, List[str]]:
    """The prerequisites and recipe lines of ``target``'s rule in a Makefile ("", [] if none)."""
    lines = makefile.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(f"{target}:"):
            recipe = []
            for following in lines[i + 1 :]:
                if not following.startswith("\t"):
                    break
                recipe.append(following)
            return line[len(target) + 1 :].strip(), recipe
    return "", []


def _install_rule(makefile: str, out: Path) -> str:
    """The course Makefile's rule that makes .venv (less any prerequisite the edition lacks), or a
    plain one when it has none."""
    prerequisites, recipe = _rule(makefile, "$(VENV)/.installed")
    if not recipe:
        prerequisites = "setup.cfg"
        recipe = [
            "\t$(PYTHON) -m venv $(VENV)",
            "\t$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]'",
            "\ttouch $@",
        ]
    kept = [p for p in prerequisites.split() if (out / p).exists()]
    return "\n".join([f"$(VENV)/.installed: {' '.join(kept)}".rstrip(), *recipe])


def _demo_command(makefile: str) -> Optional[List[str]]:
    """What the course's ``make demo`` runs: the module after ``$(PY) -m``, then its options."""
    for line in _rule(makefile, "demo")[1]:
        found = re.match(r"\s*\$\(PY\) -m (.+)$", line)
        if found:
            return shlex.split(found.group(1))
    return None


def _demo_stages(course: Course) -> List[str]:
    """The stages ``make demo`` waits for: those of modules 0 to 4 with code outside the cuda backend."""
    on_cpu = {t.stage for t in course.tasks if t.cell is None and t.path not in _GPU_ONLY}
    return [s for s in course.staged() if int(s.split(".")[0]) <= _DEMO_MODULE and s in on_cpu]


def _demo_script(course: Course, command: List[str]) -> str:
    """project/demo.py with the stages it waits for and the command it runs filled in."""
    needed = "".join(f'    "{s}",\n' for s in _demo_stages(course))
    return (
        _template("demo.py")
        .replace("NEEDED: List[str] = []\n", f"NEEDED: List[str] = [\n{needed}]\n")
        .replace("COMMAND: List[str] = []", f"COMMAND: List[str] = {json.dumps(command)}")
    )


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
