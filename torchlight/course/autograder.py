"""Course tooling: ``autograder``, a Gradescope autograder bundle and a GitHub Classroom workflow for an edition.

:func:`write_bundle` writes ``OUT.zip``, which Gradescope unpacks into ``/autograder/source``:

- ``setup.sh``: Python, a virtual environment at ``/autograder/venv`` and ``requirements.txt``
  (the edition's dependencies and test extras), once, when Gradescope builds the image;
- ``run_autograder``: for each submission, the instructor's grader (``grader/run.py``, this
  checkout's ``torchlight/grading`` as the package ``torchlight_grading``), which puts only the
  student's files into a fresh copy of ``edition/`` and grades there (see
  ``torchlight/grading/submission.py``); results.json is written whatever the submission does;
- ``edition/``: the edition as handed out (``--solved-through``), with the reference's tests;
- ``reference/``: the solved edition's code (``torchlight/``, ``project/``) and each module's
  probes (``tests/moduleN/judged.py``), against which the grader judges the values a submission
  computes (``torchlight/grading/judged.py``); the grader makes it unreadable to the submission;
- ``autograder.json``: the stages graded, the time limit per check, partial credit, the student's
  files (every ``.py`` file with a region), and, from one grading run of the pristine edition
  here, every check there must be and those that pass as handed out (partial credit leaves them
  out, so an untouched edition scores 0).

Beside it, ``OUT-classroom.yml``: a GitHub Classroom workflow that grades each stage with the
edition's own grader on every push, for the edition's repository as
``.github/workflows/classroom.yml``. It is feedback for the student (the student's repository
holds the grader it runs); the grade that counts comes from the bundle.
"""

import configparser
import json
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from ..grading import judged
from ..grading.runner import TIME_LIMIT, expand, run_stages
from ..grading.stage import find_stage
from .edition import write_edition
from .source import Course

__all__ = ["Bundle", "classroom_workflow", "unpack", "write_bundle"]

_SETUP = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu): Python 3.10
# or later, a virtual environment at /autograder/venv, and what the course's tests need.
# Made by `python -m torchlight.course autograder` (docs/instructors.md).
set -euo pipefail
cd "$(dirname "$0")"
if ! python3 -c "import sys, venv, ensurepip; assert sys.version_info >= (3, 10)" 2>/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv python3-pip
fi
python3 -m venv /autograder/venv
/autograder/venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
"""

_RUN = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission. The instructor's grader (source/grader) copies only
# the student's files into a fresh copy of source/edition, grades there in a child process and
# writes results/results.json, whatever the submission does. AUTOGRADER_ROOT (default /autograder)
# and AUTOGRADER_PYTHON (default its venv's python) let it run elsewhere, as the course's test does.
# Made by `python -m torchlight.course autograder` (docs/instructors.md).
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PY="${AUTOGRADER_PYTHON:-$ROOT/venv/bin/python}"
RESULTS="$ROOT/results/results.json"
AUTOGRADER_ROOT="$ROOT" "$PY" -I "$ROOT/source/grader/run.py"
status=$?
if [ ! -s "$RESULTS" ]; then  # the grader could not even start: still an answer, not a broken autograder
    mkdir -p "$ROOT/results"
    said="The autograder could not start (exit status $status): please tell your instructor."
    printf '{"score": 0, "output": "%s", "tests": []}\\n' "$said" > "$RESULTS"
fi
exit $status
"""

_RUN_PY = '''\
"""The autograder's entry point: run_autograder runs it with ``python -I`` (no PYTHONPATH, no
current folder on the path), so that the only torchlight code this process imports is its own
grader, torchlight_grading, beside this file."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from torchlight_grading.submission import main  # noqa: E402

sys.exit(main())
'''

_WORKFLOW_HEAD = """\
# GitHub Classroom autograding for the torchlight student edition: each stage graded on every push
# by the edition's own grader (python -m torchlight.grading N.K), one point a stage. Put it in the
# assignment's template repository as .github/workflows/classroom.yml. It is feedback: the student's
# repository holds the grader it runs. The grade that counts comes from the Gradescope bundle.
# Made by `python -m torchlight.course autograder` (docs/instructors.md).
name: Autograding Tests
"on":
  - push
  - workflow_dispatch
  - repository_dispatch
permissions:
  checks: write
  actions: read
  contents: read
jobs:
  run-autograding-tests:
    runs-on: ubuntu-latest
    if: github.actor != 'github-classroom[bot]'
    steps:
      - name: Checkout code
        uses: actions/checkout@v4
      - name: Set up Python
        uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      - name: Install the edition
        run: python -m pip install --quiet --disable-pip-version-check -e '.[test]'
"""


@dataclass
class Bundle:
    """What :func:`write_bundle` wrote."""

    path: Path  # the zip
    workflow: Path  # the GitHub Classroom workflow beside it
    stages: List[str]
    checks: int  # every check of those stages
    given: int  # those that pass in the edition as handed out


def write_bundle(
    course: Course,
    out,
    stages: Sequence[str] = (),
    solved_through: Optional[str] = None,
    *,
    time_limit: float = TIME_LIMIT,
    partial_credit: bool = False,
) -> Bundle:
    """Write the Gradescope bundle ``out`` (a ``.zip``) and the Classroom workflow beside it.

    ``stages`` (default: every stage with regions that ``solved_through`` leaves to the student;
    a module stands for its stages) are graded, each check for at most ``time_limit`` seconds.
    """
    out = Path(out).resolve()
    if out.suffix != ".zip":
        raise ValueError(f"{out.name}: the bundle is a .zip file (Gradescope's autograder upload)")
    solved = course.through(solved_through)
    names = [s.name for s in expand(stages, course.root)] if stages else [s for s in course.staged() if not solved(s)]
    if not names:
        raise ValueError(f"no stage to grade: every stage with regions is solved through {solved_through}")
    with tempfile.TemporaryDirectory(prefix="torchlight-autograder-") as tmp:
        edition = write_edition(course, Path(tmp) / "edition", solved_through, git=False).path
        reference = write_edition(course, Path(tmp) / "reference", list(course.stages)[-1], git=False).path
        expected, given = _baseline(edition, names, time_limit, Path(tmp) / "cache")
        _probes_run(reference, names, time_limit, Path(tmp) / "cache")
        config = {
            "stages": names,
            "time_limit": time_limit,
            "partial_credit": partial_credit,
            "student_files": [p for p in course.marked_files if p.endswith(".py")],
            "expected": expected,
            "given": given,
        }
        out.parent.mkdir(parents=True, exist_ok=True)
        _zip(out, edition, reference, course.root / "torchlight" / "grading", config)
    workflow = out.with_name(out.stem + "-classroom.yml")
    workflow.write_text(classroom_workflow(course, names, time_limit), encoding="utf-8")
    return Bundle(out, workflow, names, len(expected), len(given))


def classroom_workflow(course: Course, names: Sequence[str], time_limit: float = TIME_LIMIT) -> str:
    """A GitHub Classroom workflow grading ``names``, one step (one point) a stage, then the reporter."""
    lines = [_WORKFLOW_HEAD]
    ids = []
    for name in names:
        step = "stage-" + name.replace(".", "-")
        ids.append(step)
        title = json.dumps(f"Stage {name}: {course.stages.get(name, '')}")
        lines.append(
            f"      - name: {title}\n"
            f"        id: {step}\n"
            "        uses: classroom-resources/autograding-command-grader@v1\n"
            "        with:\n"
            f"          test-name: {title}\n"
            '          setup-command: ""\n'
            f"          command: python -m torchlight.grading {name} --time-limit {time_limit:g}\n"
            "          timeout: 20\n"  # minutes, for installing and grading the stage
            "          max-score: 1\n"
        )
    env = "".join(f'          {i.upper()}_RESULTS: "${{{{ steps.{i}.outputs.result }}}}"\n' for i in ids)
    lines.append(
        "      - name: Autograding Reporter\n"
        "        uses: classroom-resources/autograding-grading-reporter@v1\n"
        f"        env:\n{env}"
        "        with:\n"
        f"          runners: {','.join(ids)}\n"
    )
    return "".join(lines)


def _baseline(edition: Path, names: List[str], time_limit: float, cache: Path):
    """Grade the pristine edition: every check there must be (node id -> stage) and those that pass."""
    env = dict(
        os.environ,
        PYTHONDONTWRITEBYTECODE="1",
        NUMBA_CACHE_DIR=str(cache / "numba"),
        TORCHLIGHT_CACHE_DIR=str(cache / "kernels"),
    )
    chosen = [find_stage(n, edition) for n in names]
    graded = run_stages(chosen, tests=edition / "tests", root=edition, time_limit=time_limit, env=env)
    expected: Dict[str, str] = {}
    given: List[str] = []
    for result in graded.results:
        broken = [row for row in result.rows if not row.stage]
        if broken:
            raise ValueError(
                f"the edition's checks of stage {result.stage.name} cannot all be collected, so the bundle would "
                f"grade every submission 0: {broken[0].test}: {broken[0].message}"
            )
        if not result.rows:
            raise ValueError(f"stage {result.stage.name} has no checks to grade: {result.problem}")
        for row in result.rows:
            expected[row.nodeid] = result.stage.name
            if row.outcome == "passed":
                given.append(row.nodeid)
    return expected, given


def _probes_run(reference: Path, names: List[str], time_limit: float, cache: Path) -> None:
    """Run the reference's probes of ``names`` once: a bundle whose reference cannot judge is refused."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", NUMBA_CACHE_DIR=str(cache / "numba"))
    env["TORCHLIGHT_CACHE_DIR"] = str(cache / "kernels")
    try:
        judged.reference_values(reference, names, time_limit=max(5 * time_limit, 120), env=env)
    except RuntimeError as e:
        raise ValueError(f"{e}: no submission could be judged with this bundle") from None


def _reference_files(reference: Path) -> List[Path]:
    """What the bundle keeps of the solved edition: its code and the probes."""
    keep = [p for part in ("torchlight", "project") for p in sorted((reference / part).rglob("*"))]
    keep += sorted(reference.glob("tests/module*/judged.py"))
    return [p for p in keep if p.is_file() and "__pycache__" not in p.parts]


def _zip(out: Path, edition: Path, reference: Path, grader: Path, config: dict) -> None:
    part = out.with_name(out.name + ".part")
    with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as z:
        _add(z, "setup.sh", _SETUP, executable=True)
        _add(z, "run_autograder", _RUN, executable=True)
        _add(z, "requirements.txt", _requirements(edition))
        _add(z, "autograder.json", json.dumps(config, indent=1) + "\n")
        _add(z, "grader/run.py", _RUN_PY)
        for path in sorted(grader.glob("*.py")):
            _add(z, f"grader/torchlight_grading/{path.name}", path.read_text(encoding="utf-8"))
        for path in sorted(edition.rglob("*")):
            rel = path.relative_to(edition)
            if path.is_file() and not {"__pycache__", ".hypothesis", ".pytest_cache", ".git"} & set(rel.parts):
                _add(z, f"edition/{rel.as_posix()}", path.read_bytes(), executable=os.access(path, os.X_OK))
        for path in _reference_files(reference):
            _add(z, f"reference/{path.relative_to(reference).as_posix()}", path.read_bytes())
    part.replace(out)


def _add(z: zipfile.ZipFile, name: str, data, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))  # the same bytes for the same bundle
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (0o755 if executable else 0o644) << 16
    z.writestr(info, data)


def _requirements(edition: Path) -> str:
    """The edition's dependencies and its test extras, one a line, for pip (pyproject.toml or setup.cfg)."""
    needs: List[str] = []
    pyproject = edition / "pyproject.toml"
    try:
        import tomllib

        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}) if pyproject.exists() else {}
        needs = list(project.get("dependencies", [])) + list(project.get("optional-dependencies", {}).get("test", []))
    except ImportError:  # Python 3.10: setup.cfg only
        pass
    if not needs:
        cfg = configparser.ConfigParser(interpolation=None)
        cfg.read(edition / "setup.cfg", encoding="utf-8")
        needs = cfg.get("options", "install_requires", fallback="").split("\n")
        needs += cfg.get("options.extras_require", "test", fallback="").split("\n")
    needs = [n.strip() for n in needs if n.strip() and not n.strip().startswith("#")]
    if not any(n.startswith("pytest") for n in needs):
        raise ValueError("found no test dependencies (pytest) in the edition's pyproject.toml or setup.cfg")
    return "".join(f"{n}\n" for n in needs)


def unpack(bundle: Path, source: Path) -> None:
    """Unpack ``bundle`` into ``source`` as Gradescope does (file modes kept), for trying it out."""
    with zipfile.ZipFile(bundle) as z:
        for info in z.infolist():
            target = source / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            with z.open(info) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.chmod(target, (info.external_attr >> 16) & 0o777 or 0o644)
