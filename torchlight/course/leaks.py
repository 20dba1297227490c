"""Course tooling: searching a student edition for answers that ship outside their regions.

A stub hides a stage's solution only if no other file of the edition carries it: a faster backend
that copies the taught loop, a notebook cell or a doc page that shows it. :func:`find_leaks` takes
every line of every solution region (stripped, with runs of whitespace made one space, at least
:data:`MIN_LENGTH` characters; ``# HINT:`` lines excepted, which the stub shows anyway) and looks
for it in every text file of a fresh edition (no stage solved), in notebooks cell by cell. A
solution line found anywhere there, whole or inside a longer line, is a leak: the region is
stubbed, so the line can only come from somewhere else. Hints are not searched: a ``# HINT:``
comment, in a region or beside it, says what it says on purpose.

Only copies are found: code that computes the same answer written differently (other names,
another loop order) is not. The cure is sharing, not hiding: the other file calls the taught
function (the design notes: "index arithmetic lives once"), so that in the edition it runs the
student's code.

:data:`ALLOWED` lists, each with the reason and for one file each, the few lines that a solution
shares with what the student is given and that give no answer away: a type check, a loop over a
module's children, a worked example in the notebook that teaches what the exercise then applies.
Keep it short and reviewed; the tests fail on an entry that no longer matches anything.
"""

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple, Union

from .markers import Region, find_regions
from .source import Course

__all__ = ["ALLOWED", "MIN_LENGTH", "Leak", "find_leaks", "leaks", "normalize", "solution_lines"]

# A solution line shorter than this is too common to mean anything (``return out``, ``acc = 0.0``).
MIN_LENGTH = 30

# Lines of a solution that the edition may show elsewhere, each in one file only: (the edition's
# file, the normalized line) -> why it gives no answer away. Keep it short; review every entry.
ALLOWED: Dict[Tuple[str, str], str] = {
    # -- notebooks: worked examples that teach what the exercise then applies ---------------------
    ("notebooks/module0_operators_and_modules.ipynb", "return 1.0 / (1.0 + math.exp(-x))"): (
        "the textbook sigmoid, shown to overflow; stage 0.1's answer is the stable two-branch form"
    ),
    ("notebooks/module1_scalar_autodiff.ipynb", "loss, correct = loss_and_correct(model, data)"): (
        "the notebook's training loop gives the loss; its exercise, like train_scalar.py's, is the step after it"
    ),
    ("notebooks/module2_tensors.ipynb", "to_index(ordinal, out_shape, out_index)"): (
        "section 2.3's walk through the steps of one zip, which 2.3's hint also names; the kernels' loops "
        "(every ordinal, reduce's line, matmul) stay the exercise"
    ),
    ("notebooks/module2_tensors.ipynb", "broadcast_index(out_index, out_shape, a_shape, a_index)"): (
        "the same walk through zip's steps"
    ),
    ("notebooks/module2_tensors.ipynb", "broadcast_index(out_index, out_shape, b_shape, b_index)"): (
        "the same walk through zip's steps"
    ),
    ("notebooks/module3_fast_backend.ipynb", "to_index(ordinal, out_shape, out_index)"): (
        "step 1 compiles module 2's zip kernel as it is (solved by then); 3.1 asks for one index per row"
    ),
    ("notebooks/module3_fast_backend.ipynb", "broadcast_index(out_index, out_shape, a_shape, a_index)"): (
        "module 2's zip kernel, compiled as it is"
    ),
    ("notebooks/module3_fast_backend.ipynb", "broadcast_index(out_index, out_shape, b_shape, b_index)"): (
        "module 2's zip kernel, compiled as it is"
    ),
    ("notebooks/module3_fast_backend.ipynb", "a_index = np.empty(len(a_shape), np.int64)"): (
        "an index buffer, as every compiled kernel allocates one"
    ),
    ("notebooks/module3_fast_backend.ipynb", "b_index = np.empty(len(b_shape), np.int64)"): (
        "an index buffer, as every compiled kernel allocates one"
    ),
    ("notebooks/module3_part2_cuda.ipynb", "out[cuda.blockIdx.x] = partial[0]"): (
        "the last line of the worked tree sum; the exercise's work is the loop over the grid and the products"
    ),
    ("notebooks/module4_networks.ipynb", "xp = np.pad(x, ((0, 0), (padding, padding)))"): (
        "the padding of the given definition (conv1d_loop); the exercise is the windows as columns"
    ),
    ("notebooks/module4_networks.ipynb", "return out if b is None else out + b[:, None]"): (
        "the bias of the given definition (conv1d_loop); the exercise is the product with the columns"
    ),
    ("notebooks/module4_networks.ipynb", "xp = np.pad(x, ((0, 0), (padding, padding), (padding, padding)))"): (
        "the padding of the given definition (conv2d_loop); the exercise is the windows as columns"
    ),
    ("notebooks/module5_inside_autograd.ipynb", "x.backend.map(torchlight.scalar.relu)(x, out=x)"): (
        "the exercise's own text names the call that writes in place; what to save and mark is the exercise"
    ),
    # -- library and tests: checks and loops that any code around the same objects writes ---------
    ("torchlight/autograd/engine.py", "if not isinstance(out, Variable) or out.history is None:"): (
        "grad's own argument check; hvp's answer makes the same check of func's output"
    ),
    ("torchlight/autograd/forward_ad.py", "if not isinstance(tensor, Variable):"): "a type check",
    ("torchlight/autograd/function.py", "nondiff = ctx._non_differentiable"): "reading a Context field",
    ("torchlight/backends/fast.py", "lo, hi = part_bounds(part, parts, size_of(out_shape))"): (
        "map_part's and zip_part's given fast path cut out's ordinals into parts; stage 3.2 cuts reduce's the "
        "same way where each out element folds its own line (its rows, the other branch, are the exercise)"
    ),
    ("torchlight/nn/module.py", "for name, module in self._modules.items():"): "walking a Module's children",
    ("torchlight/ops/pooling.py", "columns = Unfold.apply(x, kernel, stride, padding)"): (
        "pooling's windows; stage 4.1's hint names this call"
    ),
    ("torchlight/tensor_data.py", "n = max(len(shape1), len(shape2))"): (
        "the error message's helper pads the shapes, as 2.2's hint says to; the rule of broadcasting is not there"
    ),
    ("tests/module3/test_fused.py", "return y if bias is None else y + bias"): (
        "a test's reference linear; Linear.composed's docstring states the same formula"
    ),
}

# Files that cannot hold source text, and folders an edition may pick up but does not ship.
_BINARY = re.compile(rb"\x00")
_SKIP_DIRS = {".git", ".venv", "__pycache__", ".pytest_cache", ".hypothesis", ".ipynb_checkpoints"}


@dataclass(frozen=True)
class Leak:
    """One solution line found outside its region."""

    path: str  # the edition's file: "torchlight/backends/fast.py"
    where: str  # that file and line: "torchlight/backends/fast.py:61" (in a notebook: ", cell C, line L")
    stage: str  # the region's stage
    source: str  # the solution line's own place in the course: "torchlight/tensor_data.py:260"
    line: str  # the normalized solution line

    def __str__(self) -> str:
        return f"{self.where}: a line of stage {self.stage}'s solution ({self.source}) is in the edition: {self.line!r}"


def normalize(line: str) -> str:
    """A line as leaks compares it: stripped, each run of whitespace one space."""
    return " ".join(line.split())


def solution_lines(course: Course, min_length: int = MIN_LENGTH) -> Dict[str, Tuple[str, str]]:
    """Every solution line worth looking for: normalized line -> (stage, its place in the course).

    ``# HINT:`` lines (and the comment lines under them) are left out: the stub keeps them. A line
    that occurs in several regions keeps its first place in course order.
    """
    return _lines(course, min_length)[0]


def _lines(course: Course, min_length: int) -> Tuple[Dict[str, Tuple[str, str]], Set[str]]:
    """(the solution lines as :func:`solution_lines` gives them, every normalized hint line)."""
    found: Dict[str, Tuple[str, str]] = {}
    hints: Set[str] = set()
    regions = {(path, key): (lines, found_) for path, key, lines, found_ in _regions(course)}
    for task in course.tasks:  # course order
        lines, candidates = regions[(task.path, -1 if task.cell is None else task.cell)]
        region = next(r for r in candidates if r.begin == task.line - 1)
        hinted = _hint_numbers(lines, region)
        hints.update(normalize(lines[n]) for n in hinted)
        for n in range(region.begin + 1, region.end):
            text = normalize(lines[n])
            if n in hinted or len(text) < min_length:
                continue
            found.setdefault(text, (task.stage, _place(task.path, task.cell, n)))
    return found, hints


def _place(path: str, cell: Optional[int], n: int) -> str:
    """Line n (0-based) of a file, or of a notebook's cell, as messages name it."""
    return f"{path}:{n + 1}" if cell is None else f"{path}, cell {cell + 1}, line {n + 1}"


def _regions(course: Course) -> Iterator[Tuple[str, int, List[str], List[Region]]]:
    """(path, cell or -1, lines, regions) for every marked .py file and notebook cell, in file order."""
    for path in course.marked_files:
        text = (course.root / path).read_text(encoding="utf-8")
        if not path.endswith(".ipynb"):
            lines = text.split("\n")
            yield path, -1, lines, find_regions(lines, functools.partial(_place, path, None))
            continue
        for i, cell in enumerate(json.loads(text)["cells"]):
            if cell.get("cell_type") != "code":
                continue
            source = cell.get("source", "")
            lines = ("".join(source) if isinstance(source, list) else str(source)).split("\n")
            regions = find_regions(lines, functools.partial(_place, path, i))
            if regions:
                yield path, i, lines, regions


def _hint_numbers(lines: List[str], region: Region) -> Set[int]:
    """The line numbers of the region's hints (``Region.hints`` gives their text, in order)."""
    hints = region.hints(lines)
    kept, i = set(), 0
    for n in range(region.begin + 1, region.end):
        if i < len(hints) and lines[n] == hints[i]:
            kept.add(n)
            i += 1
    return kept


def find_leaks(
    course_or_root: Union[Course, str, Path],
    edition_path,
    min_length: int = MIN_LENGTH,
    allowed: Optional[Dict[Tuple[str, str], str]] = None,
) -> List[str]:
    """Every solution line of the course found in the fresh edition at ``edition_path``, one line each.

    ``course_or_root`` is the course (or its checkout) the edition was made from; the edition should
    have no stage solved (a solved region's own lines would count). Each line of the result names
    the edition's file and line, the stage and the line's place in the course (see :class:`Leak`).
    ``allowed`` replaces :data:`ALLOWED` (``{}``: report every copy).
    """
    return [str(leak) for leak in leaks(course_or_root, edition_path, min_length, allowed)]


def leaks(
    course_or_root: Union[Course, str, Path],
    edition_path,
    min_length: int = MIN_LENGTH,
    allowed: Optional[Dict[Tuple[str, str], str]] = None,
) -> List[Leak]:
    """:func:`find_leaks`, as :class:`Leak` records."""
    allowed = ALLOWED if allowed is None else allowed
    course = course_or_root if isinstance(course_or_root, Course) else Course.load(course_or_root)
    wanted, hints = _lines(course, min_length)
    # A leak may sit inside a longer line (a docstring, a markdown cell). Index every wanted line by
    # its first min_length characters, then look up each window of that length of each long line.
    by_prefix: Dict[str, List[str]] = {}
    for text in wanted:
        by_prefix.setdefault(text[:min_length], []).append(text)
    found: List[Leak] = []
    for path, where, text in _edition_lines(Path(edition_path)):
        line = normalize(text)
        if len(line) < min_length or line in hints or line.startswith("# HINT:"):  # hints are given on purpose
            continue
        hits = set()
        for start in range(len(line) - min_length + 1):
            for candidate in by_prefix.get(line[start : start + min_length], ()):
                if line.startswith(candidate, start) and (path, candidate) not in allowed:
                    hits.add(candidate)
        for hit in sorted(hits):
            stage, source = wanted[hit]
            found.append(Leak(path, where, stage, source, hit))
    return found


def _edition_lines(root: Path) -> Iterator[Tuple[str, str, str]]:
    """(file, place, line) for every line of every text file under ``root``; notebooks cell by cell."""
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if not path.is_file() or any(part in _SKIP_DIRS for part in rel.parts[:-1]):
            continue
        data = path.read_bytes()
        if _BINARY.search(data):
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        name = rel.as_posix()
        if path.suffix == ".ipynb":
            try:
                cells = json.loads(text).get("cells", [])
            except ValueError:
                cells = None
            if cells is not None:
                for i, cell in enumerate(cells):
                    source = cell.get("source", "")
                    body = "".join(source) if isinstance(source, list) else str(source)
                    for n, line in enumerate(body.split("\n")):
                        yield name, f"{name}, cell {i + 1}, line {n + 1}", line
                continue
        for n, line in enumerate(text.split("\n")):
            yield name, f"{name}:{n + 1}", line
