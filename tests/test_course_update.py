"""``python -m torchlight.course update`` (issue 19, item 6): moving a student's repository onto a
new edition carries their own regions stage by stage, keeps the files they added, copies every
file it changes, and reports conflicts.

Most tests work on the real course: an edition solved through 0.1 with a student's work in stages
0.2 and 0.3, moved onto the edition solved through 0.2. One uses the tiny course of
``test_course.py`` to release a fixed edition (the reference changed) into a git repository.
"""

import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torchlight.course.update")  # an instructors' tool: the student edition has none

from torchlight import grading
from torchlight.course import Course, write_edition
from torchlight.course.__main__ import main
from torchlight.course.source import list_files
from torchlight.course.update import STATE, UpdateError, update

sys.path.insert(0, os.path.dirname(__file__))
from test_course import _course

GIT = shutil.which("git")
ENV = dict(os.environ, GIT_AUTHOR_NAME="s", GIT_AUTHOR_EMAIL="s@x.invalid", GIT_COMMITTER_NAME="s")
ENV["GIT_COMMITTER_EMAIL"] = "s@x.invalid"


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The real course, from a copy of the checkout (which may change while the tests run)."""
    root = tmp_path_factory.mktemp("reference")
    for path in list_files(grading._CHECKOUT):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(grading._CHECKOUT / path, root / path)
    return Course.load(root)


@pytest.fixture(scope="module")
def editions(course, tmp_path_factory):
    """The editions solved through 0.1 (what the student has) and 0.2 (the next one), written once."""
    root = tmp_path_factory.mktemp("editions")
    write_edition(course, root / "0.1", "0.1", git=False)
    write_edition(course, root / "0.2", "0.2", git=False)
    return root


def _write(path: Path, function: str, code: str) -> None:
    """Replace the stub in ``function`` (a .py file's, or a notebook cell's) with ``code``."""
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] == "code" and f"def {function}(" in source:
                cell["source"] = _replace_stub(source, function, code)
        path.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    else:
        path.write_text(_replace_stub(path.read_text(), function, code))


def _replace_stub(text: str, function: str, code: str) -> str:
    lines = text.split("\n")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            stub = next(s for s in node.body if isinstance(s, ast.Raise) and "Task" in ast.unparse(s))
            indent = " " * stub.col_offset
            new = [indent + line for line in code.strip("\n").split("\n")]
            return "\n".join(lines[: stub.lineno - 1] + new + lines[stub.end_lineno :])
    raise AssertionError(f"no stub in {function}")


def _body(path: Path, function: str) -> str:
    """The body of ``function`` in the .py file at ``path``, after its docstring, dedented."""
    lines = path.read_text().split("\n")
    node = next(
        n for n in ast.walk(ast.parse("\n".join(lines))) if isinstance(n, ast.FunctionDef) and n.name == function
    )
    return textwrap.dedent("\n".join(lines[node.body[1].lineno - 1 : node.body[-1].end_lineno]))


def _snapshot(root: Path) -> dict:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def _student_with_work(editions, tmp_path) -> Path:
    """The 0.1 edition with a student's work: two 0.2 functions, the notebook's 0.2 exercise, two
    0.3 methods (one a partial region), a helper and an edited docstring outside the regions, two
    files of their own."""
    student = tmp_path / "student"
    shutil.copytree(editions / "0.1", student)
    scalar = student / "torchlight" / "scalar.py"
    _write(scalar, "neg_list", "out = []  # my neg_list\nfor x in xs:\n    out.append(-x)\nreturn out")
    _write(scalar, "prod", _body(editions / "0.2" / "torchlight" / "scalar.py", "prod"))  # the reference's answer
    notebook = student / "notebooks" / "module0_operators_and_modules.ipynb"
    _write(notebook, "dot", "return sum(zip_with(mul)(xs, ys))")
    nb = json.loads(notebook.read_text())
    nb["cells"][1]["outputs"] = [{"name": "stdout", "output_type": "stream", "text": ["my output\n"]}]
    nb["cells"].insert(
        2, {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": "# my scratch cell"}
    )
    notebook.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    module = student / "torchlight" / "nn" / "module.py"
    _write(module, "children", "return [m for _, m in self.named_children()]  # my children")
    _write(
        module,
        "train",
        'object.__setattr__(self, "training", mode)  # my train\n'
        "for m in self.children():\n    m.train(mode)\nreturn self",
    )
    text = scalar.read_text()
    text = text.replace("import math\n", "import math\n\n\ndef my_helper(x):\n    return x  # my helper\n", 1)
    assert '    """Negate every element."""' in text
    scalar.write_text(text.replace('    """Negate every element."""', '    """Negate every element (my note)."""'))
    (student / "notes.md").write_text("my notes\n")
    (student / "torchlight" / "my_extra.py").write_text("X = 1\n")
    return student


def _state(student):
    """What the update's folder holds (an edition comes with its record, edition.json)."""
    return sorted(p.name for p in (student / STATE).iterdir())


def test_an_untouched_edition_becomes_the_new_edition(course, editions, tmp_path):
    student = tmp_path / "student"
    shutil.copytree(editions / "0.1", student)
    said = []
    assert update(course, student, "0.2", say=said.append) == 0, said[0]
    after = _snapshot(student)
    # the new edition's files, its record of which edition it is included; besides, only the
    # update's own folder (the kept base, the backup)
    record = f"{STATE}/edition.json"
    assert {p: h for p, h in after.items() if not p.startswith(STATE) or p == record} == _snapshot(editions / "0.2")
    assert "stage 0.2: 8 regions now hold the reference's code" in said[0]


def test_update_carries_the_students_work_stage_by_stage(course, editions, tmp_path):
    student = _student_with_work(editions, tmp_path)
    module_before = (student / "torchlight" / "nn" / "module.py").read_text()
    said = []
    assert update(course, student, "0.2", say=said.append) == 1  # 1: there is a conflict to look at
    report = said[0]
    [backup] = [p for p in (student / STATE).iterdir() if p.name != "base" and p.is_dir()]

    # stage 0.2: the reference's code; the student's own version saved and listed
    scalar = (student / "torchlight" / "scalar.py").read_text()
    reference = (editions / "0.2" / "torchlight" / "scalar.py").read_text()
    assert "my neg_list" not in scalar and "return map(neg)(xs)" in scalar
    assert "my neg_list" in (backup / "mine" / "torchlight" / "scalar.py").read_text()
    assert "torchlight/scalar.py: neg_list: your code was replaced" in report
    assert "(prod)" not in report  # the student's prod was the reference's already
    assert (
        "|     out = []  # my neg_list" in report
        and "|     out = []  # my neg_list" in (backup / "REPORT.md").read_text()
    )
    nb = json.loads((student / "notebooks" / "module0_operators_and_modules.ipynb").read_text())
    dot = next("".join(c["source"]) for c in nb["cells"] if "def dot(" in "".join(c["source"]))
    assert "NotImplementedError" not in dot and "sum(zip_with(mul)(xs, ys))" not in dot
    assert "notebooks/module0_operators_and_modules.ipynb: cell 22 (dot): your code was replaced" in report
    assert nb["cells"][2]["source"] == "# my scratch cell"  # the student's cells and outputs stay
    assert nb["cells"][1]["outputs"][0]["text"] == ["my output\n"]

    # outside the regions: the helper the student added is kept; the edited docstring is a
    # conflict (no earlier edition to tell who changed it): the edition's in place, both kept
    assert "def my_helper(x):\n    return x  # my helper\n" in scalar
    assert scalar.replace("\n\ndef my_helper(x):\n    return x  # my helper\n", "") == reference
    assert "(my note)" in (backup / "mine" / "torchlight" / "scalar.py").read_text()
    assert (backup / "edition" / "torchlight" / "scalar.py").read_text() == reference
    assert "conflicts (1)" in report
    assert 'yours:       """Negate every element (my note)."""' in report
    assert 'edition:     """Negate every element."""' in report

    # stage 0.3: the student's code, untouched; their own files kept
    assert (student / "torchlight" / "nn" / "module.py").read_text() == module_before
    assert "stage 0.3: your code kept in 2 regions" in report
    assert (student / "notes.md").read_text() == "my notes\n"
    assert (student / "torchlight" / "my_extra.py").read_text() == "X = 1\n"
    assert "notes.md" in report and "torchlight/my_extra.py" in report

    # a second update changes nothing and reports nothing to do
    before = _snapshot(student)
    said.clear()
    assert update(course, student, "0.2", say=said.append) == 0, said[0]
    assert "nothing to change" in said[0] and "conflict" not in said[0]
    assert _snapshot(student) == before


def test_a_dry_run_says_what_would_change_and_writes_nothing(course, editions, tmp_path, capsys):
    student = _student_with_work(editions, tmp_path)
    before = _snapshot(student)
    code = main(["--source", str(course.root), "update", str(student), "--solved-through", "0.2", "--dry-run"])
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith("Dry run: updating ")
    assert "stage 0.2: 7 regions now hold the reference's code" in out and "(a dry run: nothing was written)" in out
    assert _snapshot(student) == before and _state(student) == ["edition.json"]  # the edition's own record alone


def test_update_refuses_what_is_not_a_student_edition(course, tmp_path):
    with pytest.raises(UpdateError, match="not a student edition"):
        update(course, tmp_path, "0.2")
    with pytest.raises(UpdateError, match="is a reference checkout"):
        update(course, grading._CHECKOUT, "0.2")


def _git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True)


@pytest.mark.skipif(GIT is None, reason="needs git")
def test_fixed_editions_into_a_git_repository(tmp_path, capsys):
    """The reference changes a docstring next to a region and a test; the student has written 0.2 and
    changed a line outside the regions. The edition records the reference's commit it was made from,
    so the update makes the edition they had again and takes each side's change without a conflict;
    after that, the commit the update recorded does the same for an update from a fresh clone. A
    dirty working tree is refused unless --force."""
    root = _course(tmp_path)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "v1")
    student = tmp_path / "student"
    assert main(["--source", str(root), "student", str(student), "--solved-through", "0.1"]) == 0
    ops = student / "torchlight" / "ops.py"
    _write(ops, "triple", "return x * 3  # mine")
    ops.write_text(ops.read_text().replace('"""Module 0: two small functions."""', '"""Module 0: my notes."""'))
    capsys.readouterr()

    # uncommitted work: refused, nothing written
    args = ["--source", str(root), "update", str(student)]
    assert main(args) == 2
    assert "uncommitted changes (torchlight/ops.py)" in capsys.readouterr().err
    assert _state(student) == ["edition.json"]  # the edition's own record alone: nothing written
    _git(student, "commit", "-qam", "my work")

    # a fixed edition: a new docstring for triple, a test changed
    source_ops = root / "torchlight" / "ops.py"
    source_ops.write_text(source_ops.read_text().replace('"""3 x"""', '"""3 x, for a number x (fixed)"""'))
    test = root / "tests" / "module0" / "test_ops.py"
    test.write_text(test.read_text().replace("ops.triple(2) == 6", "ops.triple(2) == 6 and ops.triple(0) == 0"))
    _git(root, "commit", "-qam", "v2")
    assert main(args) == 0
    said = capsys.readouterr().out
    assert "compared with the edition you had: made again from the reference at the commit" in said
    assert "conflict" not in said
    assert "stage 0.2: your code kept in 1 region" in said
    new = ops.read_text()
    assert '"""Module 0: my notes."""' in new and '"""3 x, for a number x (fixed)"""' in new
    assert "return x * 3  # mine" in new and '"""3 x"""' not in new
    assert "ops.triple(0) == 0" in (student / "tests" / "module0" / "test_ops.py").read_text()

    # with the update committed, the same update again changes nothing
    _git(student, "add", "-A")
    _git(student, "commit", "-qm", "update")
    assert main(args) == 0
    assert "nothing to change" in capsys.readouterr().out

    # another fix, into a fresh clone (no .torchlight-update/base/): the edition of the last update
    # is made again from the reference at the commit it recorded
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(student), str(clone))
    assert not (clone / STATE / "base").exists() and (clone / STATE / "edition.json").is_file()
    source_ops.write_text(source_ops.read_text().replace('"""2 x"""', '"""2 x (fixed again)"""'))
    _git(root, "commit", "-qam", "v3")
    assert main(["--source", str(root), "update", str(clone)]) == 0
    said = capsys.readouterr().out
    assert "made again from the reference at the commit" in said and "conflict" not in said
    cloned = (clone / "torchlight" / "ops.py").read_text()
    assert '"""2 x (fixed again)"""' in cloned and '"""Module 0: my notes."""' in cloned
    assert "return x * 3  # mine" in cloned

    # --force works on a dirty tree, and still copies what it changes
    ops.write_text(ops.read_text() + "\n# dirty\n")
    assert main(args + ["--solved-through", "0.2"]) == 2
    assert main(args + ["--solved-through", "0.2", "--force"]) == 0
    assert "return x * 3  # mine" not in ops.read_text() and "# dirty" in ops.read_text()
    backup = sorted(p for p in (student / STATE).iterdir() if p.is_dir() and p.name != "base")[-1]
    assert "return x * 3  # mine" in (backup / "mine" / "torchlight" / "ops.py").read_text()


def test_a_region_that_cannot_be_found_leaves_the_file_as_the_student_has_it(course, editions, tmp_path):
    """The line just above a partial region changed: where the student's code starts is unknown, so
    the file stays theirs, the conflict names the region, and the edition's file is put beside it."""
    student = tmp_path / "student"
    shutil.copytree(editions / "0.1", student)
    module = student / "torchlight" / "nn" / "module.py"
    _write(module, "train", "self._my_mode = mode\nreturn self")
    text = module.read_text()
    module.write_text(
        text.replace('raise ValueError(f"training mode is expected', 'raise TypeError(f"training mode is expected')
    )
    before = module.read_text()
    said = []
    assert update(course, student, "0.3", say=said.append) == 1
    assert module.read_text() == before
    assert "torchlight/nn/module.py: where your code for 0.3 Module.train is could not be told apart" in said[0]
    [backup] = [p for p in (student / STATE).iterdir() if p.is_dir() and p.name != "base"]
    assert (backup / "edition" / "torchlight" / "nn" / "module.py").read_text() == (
        course.render("torchlight/nn/module.py", course.through("0.3"))
    )
    assert "Task 0.3: implement Module.eval" in before  # no 0.3 region was solved


def test_three_way_merge_takes_each_sides_change_and_flags_both():
    from torchlight.course.update import MINE, NEW, _merge3

    base = ["a", "b", "c", "d", "e"]
    mine = ["a", "B", "c", "d", "e", "mine"]  # changed b, added a line at the end
    new = ["a", "b", "c", "D", "e", "new"]  # changed d, added a line at the end
    merged, conflicts = [], []
    for chunk in _merge3(base, new, mine):
        merged += [(mine if side == MINE else new)[i] for side, i in chunk.refs]
        if chunk.conflict:
            conflicts.append((chunk.both, [mine[j] for j in chunk.mine], [new[i] for i in chunk.new]))
    assert merged == ["a", "B", "c", "D", "e", "new", "mine"]
    assert conflicts == [(True, ["mine"], ["new"])]
    both_changed = [(c.conflict, c.refs) for c in _merge3(["x"], ["y"], ["z"])]
    assert both_changed == [(True, [(NEW, 0)])]
