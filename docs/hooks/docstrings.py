"""A griffe extension (mkdocs.yml's mkdocstrings options) for the reference pages' docstrings.

torchlight's docstrings are reStructuredText, as Python's own: ``double backticks`` for code
(which Markdown renders as code too) and, in the instructors' tools, Sphinx cross-reference roles
(``:class:`GradeResult```, ``:func:`~torchlight.course.lint.lint_edition```). Markdown has no
roles, so mkdocstrings would print them as they are written; this extension turns each into code
before the docstring is parsed: the target as written, or its last name after a ``~`` (as Sphinx
shows it).
"""

import re
from typing import Any

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj|const|ref):`(~?)([^`]+)`")

__all__ = ["SphinxRoles", "fields_as_tables", "plain"]

_FIELD = re.compile(r"^:(param|returns?|raises?)\s*([^:]*):\s*(.*)$")


def plain(text: str) -> str:
    """``text`` with every Sphinx role written as code: ``:class:`~a.B``` -> ```B```."""

    def replace(m: "re.Match[str]") -> str:
        target = m[2].rsplit(".", 1)[-1] if m[1] else m[2]
        return f"``{target}``"

    return _ROLE.sub(replace, text)


def fields_as_tables(text: str) -> str:
    """A docstring's Sphinx fields (``:param x: ...``, ``:returns: ...``, ``:raises E: ...``, at its
    end) as Markdown tables, as mkdocstrings renders them, for a page written from the object."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _FIELD.match(line)), len(lines))
    fields: list = []  # [kind, name, description]
    for line in lines[start:]:
        m = _FIELD.match(line)
        if m:
            fields.append([m[1].rstrip("s"), m[2].strip(), m[3].strip()])
        elif fields and line.strip():
            fields[-1][2] += " " + line.strip()  # a continuation line
    out = "\n".join(lines[:start]).rstrip().splitlines()
    for kind, title, head in (("param", "Parameters", "Name"), ("raise", "Raises", "Type")):
        rows = [f"| `{name}` | {_cell(said)} |" for k, name, said in fields if k == kind]
        if rows:
            out += ["", f"**{title}:**", "", f"| {head} | Description |", "|---|---|", *rows]
    out += [line for k, _, said in fields if k == "return" for line in ("", f"**Returns:** {said}")]
    return "\n".join(out).strip("\n")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")  # (a bar would end the table's cell)


try:
    import griffe
except ImportError:  # without the docs extra (the tests): plain() alone
    pass
else:

    class SphinxRoles(griffe.Extension):
        """Rewrites the roles of every docstring that griffe loads."""

        def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
            """Called for each module, class, function and attribute as griffe finds it."""
            if obj.docstring is not None:
                obj.docstring.value = plain(obj.docstring.value)
