"""Course tooling: the course as students build it: the student edition, made from the reference by its markers.

torchlight is one source for two things: the reference library, and the student edition in which
every solution region (the lines between ``# BEGIN SOLUTION N.K`` and ``# END SOLUTION N.K``
comments, in ``.py`` files and notebook code cells) is replaced by a stub that raises
``NotImplementedError("Task N.K: <what to write>; see <notebook and section>")``.

- ``markers``: finding and validating regions in lines of text, and rendering them.
- ``tasks``: what a region asks for and what its stub says.
- ``source``: the checkout's files, stages and regions (``Course``).
- ``edition``: writing a student edition (``write_edition``).
- ``listing``: the ``stages`` listing.
- ``verify``: checking the edition stage by stage.

Command line (``python -m torchlight.course``): ``student OUT [--solved-through N.K]``,
``stages``, ``verify``. See ``docs/instructors.md``. This package is an instructor's tool: it
holds no solutions, and the student edition leaves it out.
"""

from .edition import Edition, write_edition
from .markers import MarkerError, Region, find_regions, render
from .source import Course
from .tasks import Task
from .verify import verify

__all__ = ["Course", "Edition", "MarkerError", "Region", "Task", "find_regions", "render", "verify", "write_edition"]
