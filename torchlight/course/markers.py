"""Course tooling: solution markers, finding the regions a student writes, and replacing them.

The code a student writes for stage N.K lies between two comment lines, in a ``.py`` file or in
a notebook code cell: ``# BEGIN SOLUTION N.K`` above it and ``# END SOLUTION N.K`` below, each
on a line of its own, indented like the code (see ``docs/instructors.md`` for an example; none is
written out here, where it would count as a marker). The BEGIN line may end with
``: what to write`` (``# BEGIN SOLUTION 1.2: the forward of Mul``), which then replaces the
description a stub derives from the enclosing function. Inside a region, ``# HINT:`` lines (and
the comment lines right below one) stay visible in the stub. Regions do not nest.

This module works on lists of lines and knows nothing of files: :func:`find_regions` validates
and returns the regions, :func:`render` writes each region either as its solution or as a stub.
"""

import re
from dataclasses import dataclass
from typing import Callable, List, Optional

__all__ = ["MarkerError", "Region", "find_regions", "looks_like_marker", "raise_statement", "render"]

_BEGIN = re.compile(r"^(?P<indent>[ \t]*)# BEGIN SOLUTION (?P<stage>\d+\.\d+)(?::[ \t]*(?P<text>\S.*?))?[ \t]*$")
_END = re.compile(r"^(?P<indent>[ \t]*)# END SOLUTION (?P<stage>\d+\.\d+)[ \t]*$")
# Anything a reader would take for a marker: a misspelt one must be an error, never left in place
# (it would leak the solution below it into the student edition).
_LOOSE = re.compile(r"^\s*#\s*(BEGIN|END)[ \t_-]*SOLUTION", re.IGNORECASE)
_HINT = re.compile(r"^\s*# HINT:")


class MarkerError(ValueError):
    """A malformed, unmatched or misplaced solution marker; the message names the file and line."""


@dataclass(frozen=True)
class Region:
    """One solution region: lines ``begin`` and ``end`` (0-based) are its BEGIN and END markers."""

    stage: str  # "1.2"
    begin: int
    end: int
    indent: str  # the BEGIN line's indentation, which the stub keeps
    text: str = ""  # what to write, from the BEGIN line ("" when not given)

    def body(self, lines: List[str]) -> List[str]:
        """The solution: the lines between the markers."""
        return lines[self.begin + 1 : self.end]

    def hints(self, lines: List[str]) -> List[str]:
        """The ``# HINT:`` lines of the body, each with the comment lines directly below it."""
        kept, in_hint = [], False
        for line in self.body(lines):
            in_hint = bool(_HINT.match(line)) or (in_hint and line.lstrip().startswith("#"))
            if in_hint:
                kept.append(line)
        return kept


def looks_like_marker(line: str) -> bool:
    """True for a line a reader would take for a solution marker, well formed or not."""
    return bool(_LOOSE.match(line))


def find_regions(lines: List[str], at: Callable[[int], str]) -> List[Region]:
    """The regions in ``lines``, in order.

    :param lines: a file's lines.
    :param at: a function naming line i (0-based) in error messages.
    :raises MarkerError: for a malformed marker, an END without its BEGIN (or with another stage), a
        BEGIN inside another region, a region left open, or an empty region.
    """
    regions: List[Region] = []
    open_: Optional[Region] = None
    for i, line in enumerate(lines):
        begin, end = _BEGIN.match(line), _END.match(line)
        if begin:
            if open_ is not None:
                raise MarkerError(
                    f"{at(i)}: BEGIN SOLUTION {begin['stage']} inside the region of stage {open_.stage} "
                    f"opened at {at(open_.begin)}; regions do not nest: close that one first"
                )
            open_ = Region(begin["stage"], i, -1, begin["indent"], begin["text"] or "")
        elif end:
            if open_ is None:
                raise MarkerError(
                    f"{at(i)}: END SOLUTION {end['stage']} without a BEGIN SOLUTION {end['stage']} above it"
                )
            if end["stage"] != open_.stage:
                raise MarkerError(
                    f"{at(i)}: END SOLUTION {end['stage']} closes the region BEGIN SOLUTION {open_.stage} "
                    f"opened at {at(open_.begin)}; the stage numbers must match"
                )
            region = Region(open_.stage, open_.begin, i, open_.indent, open_.text)
            if not any(line.strip() for line in region.body(lines)):
                raise MarkerError(f"{at(open_.begin)}: the region of stage {open_.stage} is empty")
            regions.append(region)
            open_ = None
        elif looks_like_marker(line):
            raise MarkerError(
                f"{at(i)}: malformed solution marker {line.strip()!r}; write '# BEGIN SOLUTION N.K' "
                "(optionally followed by ': what to write') or '# END SOLUTION N.K' on a line of its own"
            )
    if open_ is not None:
        raise MarkerError(
            f"{at(open_.begin)}: BEGIN SOLUTION {open_.stage} is never closed by END SOLUTION {open_.stage}"
        )
    return regions


def render(
    lines: List[str], regions: List[Region], solved: Callable[[Region], bool], stub: Callable[[Region], str]
) -> List[str]:
    """``lines`` without marker lines: a solved region keeps its body, any other becomes its stub.

    A stub is the region's hints followed by ``stub(region)`` (one statement, e.g. ``raise
    NotImplementedError("Task 1.2: ...")``, on one line or several) at the BEGIN line's indentation.

    :param lines: a file's lines.
    :param regions: the regions in lines (``find_regions``'s).
    :param solved: whether a region keeps its body.
    :param stub: the statement that replaces a region's body.
    """
    out: List[str] = []
    pos = 0
    for region in regions:
        out.extend(lines[pos : region.begin])
        if solved(region):
            out.extend(region.body(lines))
        else:
            out.extend(region.hints(lines))
            out.extend(region.indent + line for line in stub(region).split("\n"))
        pos = region.end + 1
    out.extend(lines[pos:])
    return out


def raise_statement(exception: str, message: str, indent: str = "", line_length: int = 120) -> str:
    """``raise exception("message")`` laid out as ruff's formatter lays it out at ``indent``.

    On one line when it fits in ``line_length``; else the message on a line of its own inside the
    parentheses; else split, at ``; `` first and then between words, into string literals that
    Python joins (one constant: numba can still compile the stub). Each literal takes the quotes
    ruff prefers: double, unless the part holds more double quotes than single ones. The lines
    after the first carry their indentation relative to ``indent``, which the caller adds.
    """
    head = f"raise {exception}("
    one = head + _literal(message) + ")"
    if len(indent) + len(one) <= line_length:
        return one
    room = line_length - len(indent) - 4
    if len(_literal(message)) <= room:
        return "\n".join([head, "    " + _literal(message), ")"])
    parts: List[str] = []
    for piece in re.split(r"(?<=; )", message):  # a break after every "; " (before "see ...")
        current = ""
        for word in re.split(r"(?<= )", piece):
            if current and len(_literal(current + word)) > room:
                parts.append(current)
                current = ""
            current += word
        if current:
            parts.append(current)
    return "\n".join([head] + ["    " + _literal(p) for p in parts] + [")"])


def _literal(text: str) -> str:
    """``text`` as a string literal in the quotes ruff's formatter prefers (double, unless more double
    quotes than single ones are inside)."""
    quote = "'" if text.count('"') > text.count("'") else '"'
    body = text.replace("\\", "\\\\").replace(quote, "\\" + quote)
    body = body.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return quote + body + quote
