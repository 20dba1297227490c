"""Course tooling: grading, which runs one stage's checks and shows which pass.

A stage is one task of a course module, named ``"1.3"`` (module 1, task 3). Its checks are the
tests in ``tests/module1/`` marked ``task1_3``: property tests and central-difference checks.
``grade("1.3")`` runs them in this Python process (so it sees the code as it is now, including
anything changed in a notebook), shows a pass/fail table and returns a :class:`GradeResult`.

In a notebook::

    from torchlight import grading
    result = grading.grade("1.3")
    assert result.passed

On the command line: ``python -m torchlight.grading 1.3`` (or ``1`` for all of module 1);
``--all`` grades the whole course into one table (``grade_stages``, ``course_table``), and
``--json PATH`` also writes Gradescope's results format (``gradescope``). There the checks run in
a child process that the grader judges from outside, with a time limit per check, so that
nothing the student's code does can change its grade beyond failing its own checks.

The stages and their titles are the ``taskN_K`` markers registered in ``setup.cfg``; the tests
ship with the source checkout, not with an installed package, so grading needs the checkout.

The files, one concept each:

- ``stage``: the stages, from setup.cfg.
- ``results``: ``Row``, ``GradeResult``, the course table and Gradescope's JSON.
- ``collector``: the pytest plugin that records each check, where the checks run.
- ``child``: the checks in a child process, its signed report, time limits and reruns.
- ``runner``: ``grade`` and ``grade_stages``.
- ``cli``: ``python -m torchlight.grading``.
- ``submission``: an autograder's run (Gradescope), made by ``python -m torchlight.course autograder``.

Nothing here imports the rest of torchlight, so an autograder can run its own copy of this
package (under another name) without importing the student's code; only ``main``, when it runs,
imports the command lines' parser, ``torchlight/utils/cli.py``.
"""

from .cli import main
from .results import GradeResult, Row, StageFailed, course_table, gradescope
from .runner import grade, grade_stages
from .stage import CHECKOUT as _CHECKOUT  # noqa: F401 (the checkout, for torchlight.course)
from .stage import Stage, stages

__all__ = [
    "GradeResult",
    "Row",
    "Stage",
    "StageFailed",
    "course_table",
    "grade",
    "grade_stages",
    "gradescope",
    "main",
    "stages",
]
