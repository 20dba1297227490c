"""Course tooling: the course's stages, as the ``taskN_K`` markers registered in ``setup.cfg`` name them.

A stage is one task of a course module, named ``"1.3"`` (module 1, task 3), or a whole module
(``"1"``). setup.cfg's ``[tool:pytest] markers`` is the one list of them: pytest enforces it
(``--strict-markers``), so grading cannot drift from what the tests use.
"""

import configparser
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Union

__all__ = ["CHECKOUT", "CHECKOUT_HELP", "Stage", "UnknownStage", "find_stage", "listing", "stage_key", "stages"]

# The checkout this grader belongs to: torchlight/grading/stage.py -> the folder holding torchlight/.
CHECKOUT = Path(__file__).resolve().parents[2]
CHECKOUT_HELP = (
    "grading runs the course's test suite, which comes with the source checkout, not with an "
    "installed package. Get the checkout and install it in editable mode:\n"
    "    git clone <torchlight repository> torchlight && cd torchlight && pip install -e '.[test]'"
)
TASK = re.compile(r"^task(\d+)_(\d+)$")
_MODULE = re.compile(r"^module(\d+)$")


@dataclass(frozen=True)
class Stage:
    """One gradable unit: a task (``"1.3"``) or a whole module (``"1"``)."""

    module: int
    task: Optional[int]
    title: str

    @property
    def name(self) -> str:
        return f"{self.module}" if self.task is None else f"{self.module}.{self.task}"

    @property
    def label(self) -> str:
        return f"Module {self.module}" if self.task is None else f"Stage {self.name}"

    @property
    def marker(self) -> str:
        return f"module{self.module}" if self.task is None else f"task{self.module}_{self.task}"


def stages(root: Optional[Union[str, Path]] = None) -> Dict[str, Stage]:
    """Every gradable stage by name (``"1.3"``, and ``"1"`` for a whole module), in course order.

    :param root: the checkout whose ``setup.cfg`` lists the stages (default: this one).
    """
    markers = _registered_markers(Path(root) if root is not None else CHECKOUT)
    found: Dict[str, Stage] = {}
    # "module1: module 1, scalar autodiff" -> module 1 titled "scalar autodiff"
    modules = {
        int(m.group(1)): re.sub(r"^module \d+,\s*", "", title)
        for name, title in markers.items()
        if (m := _MODULE.match(name))
    }
    for name, title in markers.items():
        m = TASK.match(name)
        if m:
            stage = Stage(int(m.group(1)), int(m.group(2)), title)
            if stage.module not in modules:
                continue
            found.setdefault(str(stage.module), Stage(stage.module, None, modules[stage.module]))
            found[stage.name] = stage
    return found


class UnknownStage(ValueError):
    """A stage name that setup.cfg does not register; the message lists the stages there are."""

    def __init__(self, stage: Union[str, int, float], known: Dict[str, Stage]):
        super().__init__(f"unknown stage {stage!r}; the stages are:\n{listing(known)}")
        self.stage = stage


def find_stage(stage: Union[str, int, float], root: Optional[Union[str, Path]] = None) -> Stage:
    """The stage named ``"1.3"``, ``"task1_3"``, ``1.3``, ``"1"``, ``"module1"`` or ``1``; UnknownStage (a
    ValueError) if none."""
    name = str(stage).strip()
    m = TASK.match(name) or _MODULE.match(name)
    if m:
        name = ".".join(m.groups())
    known = stages(root)
    if name not in known:
        raise UnknownStage(stage, known)
    return known[name]


def listing(known: Dict[str, Stage]) -> str:
    """The stages, one a line, as ``--list`` prints them."""
    return "\n".join(
        f"  {s.name:4} {s.title}" if s.task is not None else f"  {s.name:4} Module {s.module}: {s.title}"
        for s in known.values()
    )


def stage_key(name: str) -> List[int]:
    """``"1.10"`` -> ``[1, 10]``: stages in course order."""
    return [int(n) for n in name.split(".") if n]


def _registered_markers(root: Path) -> Dict[str, str]:
    cfg = root / "setup.cfg"
    if not cfg.is_file():
        raise FileNotFoundError(f"grading found no {cfg}. {CHECKOUT_HELP}")
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(cfg, encoding="utf-8")
    markers: Dict[str, str] = {}
    for line in parser.get("tool:pytest", "markers", fallback="").splitlines():
        name, _, title = line.partition(":")
        if name.strip():
            markers[name.strip()] = title.strip()
    return markers
