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

__all__ = ["SphinxRoles", "plain"]


def plain(text: str) -> str:
    """``text`` with every Sphinx role written as code: ``:class:`~a.B``` -> ```B```."""

    def replace(m: "re.Match[str]") -> str:
        target = m[2].rsplit(".", 1)[-1] if m[1] else m[2]
        return f"``{target}``"

    return _ROLE.sub(replace, text)


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
