"""Course tooling: moving a student's repository onto a new edition (``course update``).

An instructor releases a new edition: solved through a later stage (after a module's deadline,
its reference answers), or with fixes. :func:`update` carries a student's repository onto it:

- **Regions.** The edition keeps no marker a student could delete, so each region is found in
  the student's file from what surrounds it: the enclosing function (from the course's tasks;
  a region that is a function's whole body is that body, after the docstring, whatever the
  docstring says now) and otherwise the unchanged lines on either side. A region of a stage up to
  ``solved_through`` takes the reference's code (the student's own version, when it differs, is
  saved and listed); any later region keeps the student's code, or the new stub if they wrote
  none. In a notebook, the student's cells are matched to the edition's by the same means.
- **Everything else** is merged line by line (cell by cell in a notebook) against the edition
  the student last received, when that is known: ``.torchlight-update/base/``, the copy every
  update keeps; else the edition ``.torchlight-update/edition.json`` names (every edition comes
  with one, and each update rewrites it), made again from the reference at the commit recorded
  there; else, in a git repository, its first commit. A change
  on one side only is taken, a change on both is a conflict. When it is not known, every
  difference is a conflict except lines the student added to a file with regions, which are
  kept. A conflict puts the edition's text in place (both, when both sides only added lines) and
  is reported.
- **Files.** Files the student added are kept; a file the edition dropped is removed only when
  the student never changed it. Every file the update changes or removes is first copied to
  ``.torchlight-update/<time>/mine/``; for every file with a conflict the new edition's version
  is also written to ``.torchlight-update/<time>/edition/``; ``REPORT.md`` there says what
  happened. ``dry_run`` reports without writing. In a git repository with uncommitted changes
  the update refuses unless ``force``.
"""

import ast
import difflib
import json
import re
import shutil
import subprocess
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Hashable, List, Optional, Sequence, Tuple, Union

from .edition import UPDATE_STATE, edition_record, source_commit, write_edition
from .source import Course, list_files
from .tasks import Task

__all__ = ["UpdateError", "update"]

STATE = UPDATE_STATE  # the update's folder in the student's repository
_SENTINEL = re.compile(r"^\x00region (\d+)\x00$")
_MAGIC = re.compile(r"^\s*[%!]")
_SOLVED_LINE = re.compile(r"^.*Stages up to \d+\.\d+ come solved.*\n?", re.MULTILINE)

MINE, NEW = "mine", "new"
Ref = Tuple[str, int]  # (MINE or NEW, index in that side's sequence)


class UpdateError(RuntimeError):
    """The update was refused (a dirty git working tree, not a student edition): one line saying why."""


# -- merging sequences ---------------------------------------------------------------------


@dataclass
class _Chunk:
    """A run of the merged sequence, each item taken from one side; a conflict records both sides."""

    refs: List[Ref]
    conflict: bool = False
    mine: range = range(0)
    new: range = range(0)
    both: bool = False  # both sides only added items here: both were kept


def _matcher(a: Sequence[Hashable], b: Sequence[Hashable]) -> difflib.SequenceMatcher:
    return difflib.SequenceMatcher(None, a, b, autojunk=False)  # type: ignore[arg-type]


def _merge2(new: Sequence[Hashable], mine: Sequence[Hashable]) -> List[_Chunk]:
    """Without the common ancestor: the student's added items are kept, the edition's added items
    taken, and a stretch that differs on both sides is a conflict resolved to the edition's."""
    chunks = []
    for tag, i1, i2, j1, j2 in _matcher(new, mine).get_opcodes():
        if tag in ("equal", "insert"):
            chunks.append(_Chunk([(MINE, j) for j in range(j1, j2)]))
        elif tag == "delete":
            chunks.append(_Chunk([(NEW, i) for i in range(i1, i2)]))
        else:
            chunks.append(_Chunk([(NEW, i) for i in range(i1, i2)], True, range(j1, j2), range(i1, i2)))
    return chunks


def _merge3(base: Sequence[Hashable], new: Sequence[Hashable], mine: Sequence[Hashable]) -> List[_Chunk]:
    """A three-way merge (the merge3 algorithm): between stretches where all three agree, a side
    that changed wins over one that did not; where both changed differently, a conflict: the
    edition's replaces the student's, except that when both only added items, both are kept (the
    edition's first)."""
    syncs: List[Tuple[int, int, int, int]] = []  # base start, base end, mine start, new start
    ma = _matcher(base, mine).get_matching_blocks()
    mb = _matcher(base, new).get_matching_blocks()
    ia = ib = 0
    while ia < len(ma) and ib < len(mb):
        abase, amatch, alen = ma[ia]
        bbase, bmatch, blen = mb[ib]
        lo, hi = max(abase, bbase), min(abase + alen, bbase + blen)
        if lo < hi:
            syncs.append((lo, hi, amatch + lo - abase, bmatch + lo - bbase))
        if abase + alen < bbase + blen:
            ia += 1
        else:
            ib += 1
    syncs.append((len(base), len(base), len(mine), len(new)))
    chunks: List[_Chunk] = []
    iz = im = inew = 0
    for zlo, zhi, mlo, nlo in syncs:
        b, m, n = list(base[iz:zlo]), list(mine[im:mlo]), list(new[inew:nlo])
        if b or m or n:
            mine_refs = [(MINE, j) for j in range(im, mlo)]
            new_refs = [(NEW, i) for i in range(inew, nlo)]
            if m == n or n == b:
                chunks.append(_Chunk(mine_refs))
            elif m == b:
                chunks.append(_Chunk(new_refs))
            elif not b:
                chunks.append(_Chunk(new_refs + mine_refs, True, range(im, mlo), range(inew, nlo), both=True))
            else:
                chunks.append(_Chunk(new_refs, True, range(im, mlo), range(inew, nlo)))
        size = zhi - zlo
        if size:
            chunks.append(_Chunk([(MINE, j) for j in range(mlo, mlo + size)]))
        iz, im, inew = zhi, mlo + size, nlo + size
    return chunks


def _merge(base: Optional[Sequence[Hashable]], new: Sequence[Hashable], mine: Sequence[Hashable]) -> List[_Chunk]:
    return _merge2(new, mine) if base is None else _merge3(base, new, mine)


# -- regions -------------------------------------------------------------------------------


@dataclass
class _Unit:
    """A .py file or notebook cell of the new edition with regions: the text around the regions
    (``skeleton``, one sentinel line per region), and each region's task and text in the edition."""

    path: str
    cell: Optional[int]
    skeleton: List[str]
    tasks: List[Task]
    fills: List[List[str]]
    solved: List[bool]


def _sentinel(k: int) -> str:
    return f"\x00region {k}\x00"


def _which(line: object) -> Optional[int]:
    m = _SENTINEL.match(line) if isinstance(line, str) else None
    return int(m.group(1)) if m else None


def _is_raise(lines: List[str]) -> bool:
    try:
        tree = ast.parse(textwrap.dedent("\n".join(lines)))
    except SyntaxError:
        return False
    return len(tree.body) == 1 and isinstance(tree.body[0], ast.Raise)


def _units(course: Course, path: str, solved: Callable[[str], bool]) -> Dict[int, _Unit]:
    """The units of marked file ``path`` (key -1 for a .py file, else the cell index), with each
    region's text exactly as the edition renders it (checked)."""
    marked = course._marked[path]  # the course's own record of the file's regions
    if -1 in marked.cells:
        rendered = {-1: course.render(path, solved).split("\n")}
    else:
        cells = json.loads(course.render(path, solved))["cells"]
        rendered = {i: _cell_lines(cells[i]) for i in marked.cells}
    units = {}
    for key, lines in marked.cells.items():
        regions, tasks = marked.regions[key], marked.tasks[key]
        skeleton: List[str] = []
        pos = 0
        for k, region in enumerate(regions):
            skeleton += lines[pos : region.begin] + [_sentinel(k)]
            pos = region.end + 1
        skeleton += lines[pos:]
        out, c, fills = rendered[key], 0, []
        for item in skeleton:
            which = _which(item)
            if which is None:
                if c >= len(out) or out[c] != item:
                    raise RuntimeError(f"{path}: the edition's text does not follow its regions near {item!r}")
                c += 1
                continue
            k, region = which, regions[which]
            if solved(region.stage):
                fill = region.body(lines)
            else:  # the hints, then the stub statement: the shortest run of lines that parses
                start = c + len(region.hints(lines))
                n = next((n for n in range(1, len(out) - start + 1) if _is_raise(out[start : start + n])), 0)
                fill = out[c : start + n]
            if not fill or out[c : c + len(fill)] != fill:
                raise RuntimeError(
                    f"{path}: the edition's text of region {k + 1} ({region.stage}) is not where expected"
                )
            fills.append(fill)
            c += len(fill)
        if c != len(out):
            raise RuntimeError(f"{path}: the edition's text does not follow its regions")
        units[key] = _Unit(
            path, None if key == -1 else key, skeleton, list(tasks), fills, [solved(r.stage) for r in regions]
        )
    return units


def _functions(tree: ast.AST) -> Dict[str, List[Union[ast.FunctionDef, ast.AsyncFunctionDef]]]:
    """Every function by qualified name, named as :func:`~torchlight.course.tasks.enclosing_function` names them."""
    found: Dict[str, List[Union[ast.FunctionDef, ast.AsyncFunctionDef]]] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    found.setdefault(name, []).append(child)
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return found


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _body_span(node: Union[ast.FunctionDef, ast.AsyncFunctionDef], lines: List[str]) -> Optional[Tuple[int, int]]:
    """Lines [start, end) of a function's body after its docstring, with the comments around it."""
    body = list(node.body)
    first = body[0]
    if first.lineno == node.lineno:  # def f(): return 1
        return None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        start = first.end_lineno or first.lineno  # the line after the docstring (0-based)
        body = body[1:]
    else:
        start = first.lineno - 1
        while start - 1 >= node.lineno and (_is_comment(lines[start - 1]) or not lines[start - 1].strip()):
            start -= 1
    end = (body[-1].end_lineno or body[-1].lineno) if body else start
    if body:
        indent = len(lines[body[0].lineno - 1]) - len(lines[body[0].lineno - 1].lstrip())
        while end < len(lines) and _is_comment(lines[end]) and len(lines[end]) - len(lines[end].lstrip()) >= indent:
            end += 1
    return start, end


def _trim(span: Tuple[int, int], lines: List[str], skeleton: List[str], at: int) -> Tuple[int, int]:
    """A function body's span without the comment lines the edition has outside the region (a hint
    above it, a note below it), where the student's file still has them."""
    start, end = span
    before = at
    while before > 0 and _which(skeleton[before - 1]) is None and _is_comment(skeleton[before - 1]):
        before -= 1
    for line in skeleton[before:at]:
        if start < end and lines[start] == line:
            start += 1
    after = at + 1
    while after < len(skeleton) and _which(skeleton[after]) is None and _is_comment(skeleton[after]):
        after += 1
    for line in reversed(skeleton[at + 1 : after]):
        if end > start and lines[end - 1] == line:
            end -= 1
    return start, end


def _locate(unit: _Unit, lines: List[str]) -> Optional[List[Tuple[int, int]]]:
    """Where each region of ``unit`` lies in ``lines`` (a student's file or cell), as [start, end)
    spans in order; None when a region cannot be told apart from the text around it."""
    located: List[Tuple[int, int]] = []
    for span in _spans(unit, lines):
        if span is None or span[0] > span[1] or (located and located[-1][1] > span[0]):
            return None
        located.append(span)
    return located


def _spans(unit: _Unit, lines: List[str]) -> List[Optional[Tuple[int, int]]]:
    """Each region's span in ``lines``, or None: by the function around it when the region is its
    whole body, else by the unchanged lines on either side (blank lines there may differ)."""
    spans: List[Optional[Tuple[int, int]]] = [None] * len(unit.tasks)
    for tag, i1, i2, j1, j2 in _matcher(unit.skeleton, lines).get_opcodes():
        if tag == "equal":
            continue
        found = [k for k in (_which(x) for x in unit.skeleton[i1:i2]) if k is not None]
        others = [x for x in unit.skeleton[i1:i2] if _which(x) is None]
        if len(found) == 1 and not any(x.strip() for x in others):
            spans[found[0]] = (j1, j2)
    try:
        tree: Optional[ast.AST] = ast.parse("\n".join("" if _MAGIC.match(x) else x for x in lines))
    except SyntaxError:
        tree = None
    if tree is not None:
        functions = _functions(tree)
        for k, task in enumerate(unit.tasks):
            nodes = functions.get(task.function, [])
            body = _body_span(nodes[0], lines) if task.whole and len(nodes) == 1 else None
            if body is not None:
                spans[k] = _trim(body, lines, unit.skeleton, unit.skeleton.index(_sentinel(k)))
    return spans


def _lost(unit: _Unit, lines: List[str]) -> str:
    """The regions :func:`_locate` cannot find in ``lines``, for a message: ``0.3 Module.train``."""
    spans = _spans(unit, lines)
    lost = [f"{t.stage} {t.label or 'a region'}" for t, span in zip(unit.tasks, spans, strict=True) if span is None]
    return ", ".join(lost) or "each region (found out of order)"


def _cut(lines: List[str], spans: List[Tuple[int, int]]) -> Tuple[List[str], List[List[str]]]:
    """``lines`` with each span replaced by its sentinel, and the spans' lines."""
    skeleton: List[str] = []
    fills = []
    pos = 0
    for k, (start, end) in enumerate(spans):
        skeleton += lines[pos:start] + [_sentinel(k)]
        fills.append(lines[start:end])
        pos = end
    return skeleton + lines[pos:], fills


def _is_stub(fill: List[str]) -> bool:
    """A region the student has not written: comments only, or one ``raise NotImplementedError("Task ...")``."""
    code = [x for x in fill if x.strip() and not _is_comment(x)]
    if not code:
        return True
    try:
        tree = ast.parse(textwrap.dedent("\n".join(code)))
    except SyntaxError:
        return False
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Raise):
        return False
    exc = tree.body[0].exc
    return (
        isinstance(exc, ast.Call)
        and isinstance(exc.func, ast.Name)
        and exc.func.id == "NotImplementedError"
        and bool(exc.args)
        and isinstance(exc.args[0], ast.Constant)
        and str(exc.args[0].value).startswith("Task ")
    )


def _same(a: List[str], b: List[str]) -> bool:
    strip = lambda xs: [x.rstrip() for x in xs if x.strip()]  # noqa: E731
    return strip(a) == strip(b)


# -- the report ----------------------------------------------------------------------------


@dataclass
class _Conflict:
    path: str
    where: str  # "line 12", "cell 4"
    what: str
    mine: List[str]
    new: List[str]


@dataclass
class _Report:
    solved: Dict[str, int] = field(default_factory=dict)  # stage -> regions now holding the reference's code
    replaced: List[Tuple[Task, List[str]]] = field(default_factory=list)  # the student's code that was replaced
    kept: Dict[str, int] = field(default_factory=dict)  # stage -> regions keeping the student's code
    files: Dict[str, List[str]] = field(default_factory=dict)  # what happened -> paths
    conflicts: List[_Conflict] = field(default_factory=list)

    def file(self, what: str, path: str) -> None:
        self.files.setdefault(what, []).append(path)


def _count(d: Dict[str, int], stage: str) -> None:
    d[stage] = d.get(stage, 0) + 1


def _merge_unit(
    unit: _Unit, mine: List[str], base: Optional[List[str]], report: _Report, where: Callable[[int], str]
) -> Optional[List[str]]:
    """The student's ``mine`` on the new edition, or None when its regions cannot be found."""
    spans = _locate(unit, mine)
    if spans is None:
        return None
    mine_skeleton, mine_fills = _cut(mine, spans)
    base_skeleton: Optional[List[str]] = None
    base_fills: List[List[str]] = [[] for _ in unit.tasks]
    if base is not None:
        base_spans = _locate(unit, base)
        if base_spans is not None:
            base_skeleton, base_fills = _cut(base, base_spans)
    out: List[str] = []
    seen: Dict[int, int] = {}
    pending: List[Tuple[_Chunk, int]] = []
    found = _Report()  # added to ``report`` only when the whole unit merges
    for chunk in _merge(base_skeleton, unit.skeleton, mine_skeleton):
        if chunk.conflict:
            pending.append((chunk, len(out)))
        for side, i in chunk.refs:
            item = (mine_skeleton if side == MINE else unit.skeleton)[i]
            k = _which(item)
            if k is None:
                out.append(item)
                continue
            seen[k] = seen.get(k, 0) + 1
            task, fill, own = unit.tasks[k], unit.fills[k], mine_fills[k]
            if unit.solved[k]:
                if not _same(own, fill):
                    _count(found.solved, task.stage)
                    if not _is_stub(own) and not (base_skeleton is not None and _same(own, base_fills[k])):
                        found.replaced.append((task, own))  # the student's code, not the edition's
            elif not _is_stub(own):
                fill = own
                _count(found.kept, task.stage)
            out.extend(fill)
    if sorted(seen) != list(range(len(unit.tasks))) or any(n != 1 for n in seen.values()):
        return None
    for stage, n in found.solved.items():
        report.solved[stage] = report.solved.get(stage, 0) + n
    for stage, n in found.kept.items():
        report.kept[stage] = report.kept.get(stage, 0) + n
    report.replaced += found.replaced
    for chunk, at in pending:
        what = (
            "you and the edition both added lines here: both kept, the edition's first"
            if chunk.both
            else "your lines differ from the edition's here: the edition's are in place"
        )
        report.conflicts.append(
            _Conflict(
                unit.path,
                where(at),
                what,
                [x for x in (mine_skeleton[j] for j in chunk.mine) if _which(x) is None],
                [x for x in (unit.skeleton[i] for i in chunk.new) if _which(x) is None],
            )
        )
    return out


# -- files ---------------------------------------------------------------------------------


def _in_cell(at: int) -> Callable[[int], str]:
    return lambda n: f"cell {at}, line {n + 1}"


def _cell_lines(cell: dict) -> List[str]:
    source = cell.get("source", "")
    return ("".join(source) if isinstance(source, list) else str(source)).split("\n")


def _cell_key(cell: dict) -> Tuple[str, str]:
    return (str(cell.get("cell_type")), "\n".join(_cell_lines(cell)))


def _notebook_text(nb: dict) -> str:
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"  # nbformat's own layout


def _pair(units: Dict[int, _Unit], cells: List[dict]) -> Dict[int, int]:
    """Which cell of ``cells`` holds each marked cell's regions: {index in cells: the edition's cell index}."""
    paired: Dict[int, int] = {}
    for key, unit in sorted(units.items()):
        best: Optional[Tuple[Tuple[float, int], int]] = None
        for j, cell in enumerate(cells):
            if j in paired or cell.get("cell_type") != "code":
                continue
            lines = _cell_lines(cell)
            spans = _locate(unit, lines)
            if spans is None:
                continue
            score = (_matcher(unit.skeleton, _cut(lines, spans)[0]).ratio(), -abs(j - key))
            if score[0] >= 0.5 and (best is None or score > best[0]):
                best = (score, j)
        if best is not None:
            paired[best[1]] = key
    return paired


def _merge_notebook(
    path: str, new_text: str, mine_text: str, base_text: Optional[str], units: Dict[int, _Unit], report: _Report
) -> Optional[str]:
    """The student's notebook on the new edition, cell by cell (their outputs kept where the cell
    is unchanged); None when it is not a readable notebook."""
    try:
        new_nb, mine_nb = json.loads(new_text), json.loads(mine_text)
        new_cells, mine_cells = list(new_nb["cells"]), list(mine_nb["cells"])
    except (ValueError, KeyError, TypeError):
        return None
    base_cells: Optional[List[dict]] = None
    if base_text is not None:
        try:
            base_cells = list(json.loads(base_text)["cells"])
        except (ValueError, KeyError, TypeError):
            base_cells = None

    def keys(cells: List[dict], paired: Dict[int, int]) -> List[Hashable]:
        return [("marked", paired[j]) if j in paired else _cell_key(c) for j, c in enumerate(cells)]

    mine_paired = _pair(units, mine_cells)
    mine_keys = keys(mine_cells, mine_paired)
    new_keys = keys(new_cells, {i: i for i in units})
    base_keys = base_paired = None
    if base_cells is not None:
        base_paired = _pair(units, base_cells)
        base_keys = keys(base_cells, base_paired)
    by_unit = {key: j for j, key in mine_paired.items()}
    base_by_unit = {key: j for j, key in (base_paired or {}).items()}
    cells: List[dict] = []
    done = set()
    for chunk in _merge(base_keys, new_keys, mine_keys):
        if chunk.conflict:
            show = lambda cs, r: [_cell_lines(cs[i])[0][:80] for i in r]  # noqa: E731
            report.conflicts.append(
                _Conflict(
                    path,
                    f"cell {len(cells) + 1}",
                    "your cells differ from the edition's here: "
                    + ("both kept, the edition's first" if chunk.both else "the edition's are in place"),
                    show(mine_cells, chunk.mine),
                    show(new_cells, chunk.new),
                )
            )
        for side, i in chunk.refs:
            key = (mine_keys if side == MINE else new_keys)[i]
            if isinstance(key, tuple) and key[0] == "marked":
                if key[1] in done:
                    continue
                done.add(key[1])
                unit, at = units[key[1]], len(cells) + 1
                if key[1] not in by_unit:  # the student's notebook has no such cell: the edition's
                    cells.append(new_cells[key[1]])
                    continue
                mine_cell = mine_cells[by_unit[key[1]]]
                base_lines = (
                    _cell_lines(base_cells[base_by_unit[key[1]]]) if base_cells and key[1] in base_by_unit else None
                )
                lines = _merge_unit(unit, _cell_lines(mine_cell), base_lines, report, _in_cell(at))
                if lines is None:  # cannot happen: pairing located the regions
                    cells.append(mine_cell)
                    continue
                if lines != _cell_lines(mine_cell):
                    mine_cell = dict(mine_cell)
                    text = "\n".join(lines)
                    original = mine_cell.get("source", "")
                    mine_cell["source"] = text.splitlines(keepends=True) if isinstance(original, list) else text
                    mine_cell["outputs"], mine_cell["execution_count"] = [], None
                cells.append(mine_cell)
            else:
                cells.append((mine_cells if side == MINE else new_cells)[i])
    if cells == mine_cells:
        return mine_text
    mine_nb["cells"] = cells
    return _notebook_text(mine_nb)


def _read(path: Path) -> Optional[bytes]:
    return path.read_bytes() if path.is_file() else None


def _text(data: Optional[bytes]) -> Optional[str]:
    if data is None:
        return None
    try:
        return data.decode("utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError:
        return None


@dataclass
class _Change:
    path: str
    data: Optional[bytes]  # the new content; None: remove the file
    mode_from: Optional[Path]  # copy the file mode from here
    conflict: bool = False  # keep a copy of the edition's version too


def _plan(
    course: Course,
    edition: Path,
    student: Path,
    base: Dict[str, bytes],
    solved: Callable[[str], bool],
    report: _Report,
) -> List[_Change]:
    new_files = sorted(
        rel
        for p in edition.rglob("*")
        if p.is_file() and not (rel := p.relative_to(edition).as_posix()).startswith(STATE + "/")
    )  # (the update's own folder is not merged: _keep_base writes it)
    mine_files = [p for p in list_files(student) if not p.startswith(STATE + "/")]
    changes: List[_Change] = []
    marked = set(course.marked_files)
    for path in new_files:
        new = (edition / path).read_bytes()
        mine = _read(student / path)
        if mine is None:
            report.file("restored (you had removed it)" if path in base else "added from the edition", path)
            changes.append(_Change(path, new, edition / path))
            continue
        if mine == new:
            continue
        old = base.get(path)
        merged: Optional[bytes] = None
        conflicts = len(report.conflicts)
        new_text, mine_text, base_text = _text(new), _text(mine), _text(old)
        if new_text is not None and mine_text is not None and path in marked and path.endswith(".py"):
            unit = _units(course, path, solved)[-1]
            lines = _merge_unit(
                unit,
                mine_text.split("\n"),
                base_text.split("\n") if base_text is not None else None,
                report,
                lambda n: f"line {n + 1}",
            )
            if lines is None:
                report.conflicts.append(
                    _Conflict(
                        path,
                        "",
                        f"where your code for {_lost(unit, mine_text.split(chr(10)))} is could not be told apart "
                        "from changes to the lines around it: your file is left as it is; the edition's is in "
                        "edition/ to take its regions from by hand",
                        [],
                        [],
                    )
                )
                changes.append(_Change(path, None, None, conflict=True))  # only the copies
                continue
            merged = "\n".join(lines).encode("utf-8")
            if b"\r\n" in mine:  # keep the student's line endings
                merged = merged.replace(b"\n", b"\r\n")
        elif new_text is not None and mine_text is not None and path.endswith(".ipynb"):
            units = _units(course, path, solved) if path in marked else {}
            text = _merge_notebook(path, new_text, mine_text, base_text, units, report)
            merged = text.encode("utf-8") if text is not None else None
        elif new_text is not None and mine_text is not None and base_text is not None:
            lines = _merge_plain(path, new_text, mine_text, base_text, report)
            merged = "\n".join(lines).encode("utf-8")
        elif old is not None and (mine == old or new == old):
            merged = new if mine == old else mine
        if merged is None:  # no way to merge: the edition's, unless only the solved-stages line differs
            if path == "README.md" and mine_text is not None and new_text is not None:
                if _SOLVED_LINE.sub("", mine_text) == _SOLVED_LINE.sub("", new_text):
                    report.file("updated", path)
                    changes.append(_Change(path, new, edition / path))
                    continue
            report.conflicts.append(
                _Conflict(path, "", "your file differs from the edition's: the edition's is in place", [], [])
            )
            changes.append(_Change(path, new, edition / path, conflict=True))
            continue
        if merged == mine:
            if path not in marked and len(report.conflicts) == conflicts:
                report.file("kept yours (you changed it, the edition did not)", path)
            continue
        report.file("updated", path)
        changes.append(_Change(path, merged, student / path, conflict=len(report.conflicts) > conflicts))
    new_set = set(new_files)
    for path in mine_files:
        if path in new_set:
            continue
        if path in base and _read(student / path) == base[path]:
            report.file("removed (the edition dropped it and you had not changed it)", path)
            changes.append(_Change(path, None, None))
        elif path in base:
            report.file("kept (the edition dropped it, but you had changed it)", path)
        else:
            report.file("yours, kept (not in the edition)", path)
    return changes


def _merge_plain(path: str, new: str, mine: str, base: str, report: _Report) -> List[str]:
    new_lines, mine_lines, base_lines = new.split("\n"), mine.split("\n"), base.split("\n")
    out: List[str] = []
    for chunk in _merge3(base_lines, new_lines, mine_lines):
        if chunk.conflict:
            report.conflicts.append(
                _Conflict(
                    path,
                    f"line {len(out) + 1}",
                    "you and the edition both added lines here: both kept, the edition's first"
                    if chunk.both
                    else "you and the edition both changed these lines: the edition's are in place",
                    [mine_lines[j] for j in chunk.mine],
                    [new_lines[i] for i in chunk.new],
                )
            )
        out += [(mine_lines if side == MINE else new_lines)[i] for side, i in chunk.refs]
    return out


# -- the edition the student had -----------------------------------------------------------


def _git(args: List[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, **kw)


def _in_git(student: Path) -> Optional[Path]:
    """The top of the git working tree holding ``student``, if any."""
    try:
        run = _git(["rev-parse", "--show-toplevel"], student)
    except OSError:
        return None
    return Path(run.stdout.decode().strip()).resolve() if run.returncode == 0 else None


def _files(root: Path) -> Dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _rebuild(course: Course, record: dict) -> Optional[Dict[str, bytes]]:
    """The edition an earlier update wrote, made again from the reference at the commit it recorded."""
    commit, solved_through = record.get("source_commit"), record.get("solved_through")
    if not isinstance(commit, str) or not re.fullmatch(r"[0-9a-f]{40}", commit):
        return None
    with tempfile.TemporaryDirectory(prefix="torchlight-base-") as tmp:
        source = Path(tmp) / "source"
        source.mkdir()
        try:
            archive = _git(["archive", "--format=tar", commit], course.root)
            if archive.returncode:
                return None
            subprocess.run(["tar", "-x", "-C", str(source)], input=archive.stdout, check=True, capture_output=True)
            old = Course.load(source)
            write_edition(old, Path(tmp) / "edition", solved_through, git=False)
        except (OSError, subprocess.CalledProcessError, ValueError):
            return None
        return _files(Path(tmp) / "edition")


def _base(course: Course, student: Path, top: Optional[Path]) -> Tuple[Dict[str, bytes], str]:
    """The edition the student last received, {path: bytes}, and where it came from ("" when unknown)."""
    kept = student / STATE / "base"
    if kept.is_dir():
        return _files(kept), f"{STATE}/base/ (kept by the last update)"
    record = student / STATE / "edition.json"
    if record.is_file():
        try:
            rebuilt = _rebuild(course, json.loads(record.read_text(encoding="utf-8")))
        except ValueError:
            rebuilt = None
        if rebuilt is not None:
            return rebuilt, f"made again from the reference at the commit {STATE}/edition.json names"
    if top != student:
        return {}, ""
    roots = _git(["rev-list", "--max-parents=0", "HEAD"], student).stdout.decode().split()
    if len(roots) != 1:
        return {}, ""
    listing = _git(["ls-tree", "-r", "-z", roots[0]], student).stdout.decode("utf-8", "replace")
    blobs = []
    for entry in filter(None, listing.split("\0")):
        meta, name = entry.split("\t", 1)
        if meta.split()[1] == "blob":
            blobs.append((name, meta.split()[2]))
    run = _git(["cat-file", "--batch"], student, input="".join(f"{sha}\n" for _, sha in blobs).encode())
    out, pos, files = run.stdout, 0, {}
    for name, _ in blobs:
        header_end = out.index(b"\n", pos)
        size = int(out[pos:header_end].split()[2])
        files[name] = out[header_end + 1 : header_end + 1 + size]
        pos = header_end + 1 + size + 1
    return files, f"the first commit of the repository ({roots[0][:10]})"


# -- the command ---------------------------------------------------------------------------


def update(
    course: Course,
    student,
    solved_through: Optional[str] = None,
    dry_run: bool = False,
    force: bool = False,
    say: Callable[[str], None] = print,
) -> int:
    """Move the student's repository at ``student`` onto the edition of ``course`` solved through
    ``solved_through``; exit status 0 when done without conflicts, 1 when done with conflicts
    (listed, and in ``.torchlight-update/<time>/REPORT.md``). Raises :class:`UpdateError` when it
    refuses to start (nothing written)."""
    student = Path(student).resolve()
    solved = course.through(solved_through)
    if not (student / "torchlight").is_dir():
        raise UpdateError(f"{student} is not a student edition (it has no torchlight/ folder)")
    if (student / "torchlight" / "course").is_dir() or student == course.root:
        raise UpdateError(f"{student} is a reference checkout, not a student edition; name the student's repository")
    top = _in_git(student)
    if top is not None and not force and not dry_run:
        dirty = _git(["status", "--porcelain", "--", "."], student).stdout.decode().splitlines()
        if dirty:
            shown = ", ".join(line[3:] for line in dirty[:5]) + (", ..." if len(dirty) > 5 else "")
            raise UpdateError(
                f"{student} has uncommitted changes ({shown}); commit them first, so that the update can be "
                "reviewed with git diff and undone, or pass --force (every file it changes is still copied)"
            )
    base, base_from = _base(course, student, top)
    report = _Report()
    with tempfile.TemporaryDirectory(prefix="torchlight-update-") as tmp:
        edition = Path(tmp) / "edition"
        write_edition(course, edition, solved_through, git=False)
        changes = _plan(course, edition, student, base, solved, report)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        backup = student / STATE / stamp
        n = 1
        while backup.exists():
            n += 1
            backup = student / STATE / f"{stamp}-{n}"
        text = _report_text(student, solved_through, base_from, report, changes, backup, dry_run)
        say(text)
        if dry_run:
            return 1 if report.conflicts else 0
        if changes:
            for change in changes:
                target = student / change.path
                if target.is_file():
                    copy = backup / "mine" / change.path
                    copy.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(target, copy)
                if change.conflict:
                    theirs = backup / "edition" / change.path
                    theirs.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(edition / change.path, theirs)
            for change in changes:
                target = student / change.path
                if change.data is None:
                    if not change.conflict:
                        target.unlink()
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(change.data)
                if change.mode_from is not None and change.mode_from.exists() and change.mode_from != target:
                    shutil.copymode(change.mode_from, target)
            (backup / "REPORT.md").write_text(text + "\n", encoding="utf-8")
        _keep_base(student, edition, solved_through, source_commit(course.root))
    return 1 if report.conflicts else 0


def _keep_base(student: Path, edition: Path, solved_through: Optional[str], commit: Optional[str]) -> None:
    """Record the new edition as the one the student has: a copy in ``.torchlight-update/base/``
    (which git ignores), and which edition it is in ``edition.json`` (committed with the update,
    so that an update from a fresh clone can make the same edition again from the reference)."""
    state = student / STATE
    state.mkdir(exist_ok=True)
    ignore = state / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# the edition as you last received it: what the next update compares with\nbase/\n")
    record = edition_record(solved_through, commit)
    if not (state / "edition.json").is_file() or (state / "edition.json").read_text(encoding="utf-8") != record:
        (state / "edition.json").write_text(record, encoding="utf-8")
    base = state / "base"
    wanted = {p.relative_to(edition).as_posix() for p in edition.rglob("*") if p.is_file()}
    if base.is_dir():
        for p in sorted(base.rglob("*"), reverse=True):
            rel = p.relative_to(base).as_posix()
            if p.is_file() and rel not in wanted:
                p.unlink()
            elif p.is_dir() and not any(p.iterdir()):
                p.rmdir()
    for rel in sorted(wanted):
        source, target = edition / rel, base / rel
        if not target.is_file() or target.read_bytes() != source.read_bytes():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


def _report_text(
    student: Path,
    solved_through: Optional[str],
    base_from: str,
    report: _Report,
    changes: List[_Change],
    backup: Path,
    dry_run: bool,
) -> str:
    rel = backup.relative_to(student).as_posix()
    order = lambda kv: [int(x) for x in kv[0].split(".")]  # noqa: E731
    plural = lambda n, one, many: f"{n} {one if n == 1 else many}"  # noqa: E731
    edition = f"the edition solved through {solved_through}" if solved_through else "the edition of stubs only"
    lines = [f"{'Dry run: ' if dry_run else ''}updating {student} to {edition}"]
    lines.append(
        f"  compared with the edition you had: {base_from}"
        if base_from
        else "  the edition you had is not known (no earlier update, no git history): every difference outside "
        "your regions counts as a conflict, except lines you added to a file with regions"
    )
    for stage, n in sorted(report.solved.items(), key=order):
        lines.append(f"  stage {stage}: {plural(n, 'region now holds', 'regions now hold')} the reference's code")
    for task, _ in report.replaced:
        lines.append(f"    {task.path}: {task.label}: your code was replaced; yours is listed below")
    for stage, n in sorted(report.kept.items(), key=order):
        lines.append(f"  stage {stage}: your code kept in {plural(n, 'region', 'regions')}")
    for what, paths in report.files.items():
        shown = ", ".join(paths[:8]) + (f" and {len(paths) - 8} more" if len(paths) > 8 else "")
        lines.append(f"  {what}: {shown}")
    if not changes:
        lines.append("  nothing to change: your repository already is on this edition")
    copies = f"{rel}/mine/" if not dry_run else ".torchlight-update/<time>/mine/"
    if report.conflicts:
        lines.append(f"  conflicts ({len(report.conflicts)}): look at each; your version of the file is in {copies}")
        for c in report.conflicts:
            lines.append(f"    {c.path}{', ' + c.where if c.where else ''}: {c.what}")
            lines += [f"      yours:   {x}" for x in c.mine[:6]] + (["      yours:   ..."] if len(c.mine) > 6 else [])
            lines += [f"      edition: {x}" for x in c.new[:6]] + (["      edition: ..."] if len(c.new) > 6 else [])
    if changes and not dry_run:
        lines.append(
            f"  every file changed or removed is copied first, as you had it, to {copies}; this report is "
            f"{rel}/REPORT.md. Review the update (git diff), then commit it with that folder."
        )
    if dry_run:
        lines.append("  (a dry run: nothing was written)")
    if report.replaced:
        lines.append("")
        lines.append("Your code that the reference's replaced:")
        for task, own in report.replaced:
            lines.append(f"  {task.stage} {task.path}: {task.label}:")
            lines += [f"    | {x}" for x in own]
    return "\n".join(lines)
