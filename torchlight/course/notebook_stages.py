"""Course tooling: running a notebook's cells stage by stage, as a student's Run All would.

A student who has written every stage up to K opens the module's notebook and runs it from the
top: every cell up to and including K's grading cell must work then. ``course verify`` checks
exactly that in an edition solved through K (``verify.py``); this module does the running.

- :func:`notebook_plan` finds, for each stage, its notebook (the module's notebook whose section
  heading starts with the stage number), its grading cell (the code cell of that section that
  calls ``grade("K")``) and where a run for the stage stops: after the grading cell (at the end of
  the section if it has none), or at the end of the notebook for the notebook's last stage (the
  cells after it must work too).
- :func:`run_cells` runs a notebook's code cells ``[0, stop)`` in a fresh interpreter, with the
  edition first on ``PYTHONPATH`` and the notebook's folder as the working directory, and says
  where the first error happened, naming the stage whose stub raised it.

How the cells run: an IPython ``InteractiveShell`` in a plain ``python`` process (this very file,
run as a script), not a Jupyter kernel. It is what a kernel runs cells with (magics, ``display``,
the value of a cell's last expression shown through its ``_repr_*_`` methods) and matplotlib's
inline backend draws every figure to a PNG after each cell, as in Jupyter; what it saves is the
kernel's start and its messaging (about 1.5 s a run, with 28 runs per ``verify``).

Grading cells: ``grade(s)`` for a stage ``s`` that verify has already graded in the same edition
state (the stage's own "passes with its code" step) shows and returns that result again
(``replay``), read from a pickle the grading subprocess wrote, instead of running the stage's
checks a second time; a stage not graded in this verify is graded for real. Stage ``s``'s result
cannot change when later stages' code is put back (its tests do not reach it: verify checks
that), so the notebook sees what it would see, in a fraction of the time.

Cells are numbered from 1, markdown cells included, as in ``course stages``, the stub messages'
``cell N`` and VS Code's "Cell N of M" (Jupyter shows no cell numbers).

Nothing at this file's top level imports more than the standard library: the child process runs
it as a script (``runpy``), with the edition's torchlight on its path, not this checkout's.
"""

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

__all__ = ["NotebookRun", "NotebookStage", "grading_cell", "notebook_plan", "run_cells"]

_STUB = re.compile(r"^Task (\d+\.\d+):")
_SECTION = re.compile(r"^\d+\.\d+\b")  # a stage's section heading: "0.3 Modules and parameters"


@dataclass(frozen=True)
class NotebookStage:
    """Where a stage lives in the notebooks: what a run for it executes."""

    stage: str
    notebook: str  # relative to the checkout: notebooks/module0_operators_and_modules.ipynb
    section: str  # the section's heading, "0.3 Modules and parameters"
    start: int  # 0-based index of the section's heading cell
    grading: Optional[int]  # 0-based index of its grading cell (None: the section has none)
    stop: int  # run the cells [0, stop)

    def describe(self) -> str:
        """Which cells a run executes, counted from 1 as ``course stages`` counts them."""
        if self.grading is not None and self.stop == self.grading + 1:
            last = f"its grading cell {self.grading + 1}"
        elif self.grading is None:
            last = "no grading cell"
        else:
            last = "the end"
        return f"{self.notebook}, cells 1 to {self.stop} ({last})"


@dataclass
class NotebookRun:
    """What one run found: how far it got and, if a cell failed, where and why."""

    ran: int = 0  # code cells run
    seconds: float = 0.0  # wall time of the run, waiting for results to replay included
    waited: float = 0.0  # of which spent waiting for verify's grading of a stage to finish
    cpu: float = 0.0  # the process's CPU time (all its threads)
    cell: Optional[int] = None  # 0-based index of the failing cell
    error: str = ""  # "NotImplementedError: Task 1.2: implement ...", first line
    stub: str = ""  # the stage whose stub raised it ("1.2"), else ""
    detail: str = ""  # the traceback's last lines, or why the run could not start
    replayed: List[str] = field(default_factory=list)  # the grading cells answered from verify's results

    @property
    def ok(self) -> bool:
        return self.cell is None and not self.detail


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def grading_cell(cells: List[dict], stage: str, start: int = 0) -> Optional[int]:
    """The first code cell from ``start`` on that grades ``stage`` (``grade("1.3")``), if any."""
    call = re.compile(rf"""\bgrade\(\s*(["']){re.escape(stage)}\1""")
    for i in range(start, len(cells)):
        if cells[i].get("cell_type") == "code" and call.search(_source(cells[i])):
            return i
    return None


def notebook_plan(root: Path, stages: Sequence[str]) -> Dict[str, Any]:
    """For each stage, its :class:`NotebookStage`, or a string saying why it has none to run."""
    from .tasks import heading_for, module_notebooks, notebook_headings

    plan: Dict[str, Any] = {}
    for stage in stages:
        plan[stage] = f"no notebook of module {stage.split('.')[0]} has a section headed {stage}"
        for notebook in module_notebooks(root, stage):
            cells = json.loads((root / notebook).read_text(encoding="utf-8"))["cells"]
            headings = notebook_headings(cells)
            heading = heading_for(stage, headings)
            if heading is None:
                continue
            start = next(i for i, text in headings if text == heading)
            sections = [i for i, text in headings if _SECTION.match(text)]
            grading = grading_cell(cells, stage, start)
            if start == max(sections):
                # The notebook's last stage runs it to the end: the cells after its grading cell
                # (what comes next, a last picture) must work once the notebook's stages are done.
                stop = len(cells)
            elif grading is not None:
                stop = grading + 1
            else:  # to the next stage's section
                stop = min(i for i in sections if i > start)
            plan[stage] = NotebookStage(stage, notebook, heading, start, grading, stop)
            break
    return plan


def run_cells(
    edition: Path,
    notebook: str,
    stop: int,
    *,
    env: Dict[str, str],
    work: Path,
    replay: Optional[Dict[str, Path]] = None,
    wait: float = 0.0,
    timeout: float = 600.0,
) -> NotebookRun:
    """Run the code cells ``[0, stop)`` of ``edition/notebook`` in a fresh interpreter.

    ``env`` is the environment (the edition first on ``PYTHONPATH``). ``replay`` maps stages to
    pickled ``GradeResult``s: a grading cell for one of them shows and returns it instead of
    grading; the child waits up to ``wait`` seconds for such a file to appear (verify writes it
    when the stage's grading finishes), and grades for real if it does not or if ``PATH.none``
    appears instead. ``work`` is a folder for the run's files.
    """
    work.mkdir(parents=True, exist_ok=True)
    spec = work / "notebook-run.json"
    out = work / "notebook-result.json"
    out.unlink(missing_ok=True)
    spec.write_text(
        json.dumps(
            {
                "edition": str(edition),
                "notebook": str(edition / notebook),
                "stop": stop,
                "replay": {s: str(p) for s, p in (replay or {}).items()},
                "wait": wait,
                "out": str(out),
            }
        ),
        encoding="utf-8",
    )
    env = dict(env)
    env.setdefault("IPYTHONDIR", str(work / "ipython"))  # IPython's profile and history: not the user's
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"  # as ipykernel sets it
    boot = "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')"
    cmd = [sys.executable, "-c", boot, __file__, str(spec)]
    began = time.perf_counter()
    try:
        run = subprocess.run(
            cmd, cwd=(edition / notebook).parent, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return NotebookRun(seconds=time.perf_counter() - began, detail=f"the run took longer than {timeout:.0f} s")
    if not out.exists():
        tail = (run.stderr or run.stdout)[-2000:]
        return NotebookRun(
            seconds=time.perf_counter() - began,
            detail=f"the notebook's process died (exit code {run.returncode}):\n{tail}",
        )
    found = json.loads(out.read_text(encoding="utf-8"))
    return NotebookRun(**found)


# -- the child: runs as a script in a fresh interpreter ------------------------------------------


def _stub_stage(exc: Optional[BaseException]) -> str:
    """The stage whose stub raised ``exc`` (itself, its cause or context, or a group's member)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, NotImplementedError):
            m = _STUB.match(str(exc))
            if m:
                return m.group(1)
        for member in getattr(exc, "exceptions", None) or ():
            found = _stub_stage(member)
            if found:
                return found
        exc = exc.__cause__ or exc.__context__
    return ""


def _replaying(grading: Any, replay: Dict[str, str], wait: float, result: Dict[str, Any]) -> Any:
    """``grading.grade``, answering the stages in ``replay`` from their pickled results."""
    import pickle

    real = grading.grade

    def grade(stage: Any, *args: Any, **kwargs: Any) -> Any:
        name = str(stage)
        path = replay.get(name)
        if path is not None:
            began = time.monotonic()
            while not os.path.exists(path) and not os.path.exists(path + ".none") and time.monotonic() < began + wait:
                time.sleep(0.1)
            result["waited"] += time.monotonic() - began
            if os.path.exists(path):
                with open(path, "rb") as f:
                    graded = pickle.load(f)
                result["replayed"].append(name)
                if kwargs.get("show", True):
                    graded.show()
                if kwargs.get("strict") and not graded.passed:
                    raise grading.StageFailed(graded.summary())
                return graded
        return real(stage, *args, **kwargs)

    grade.__doc__ = real.__doc__
    return grade


def _child(spec_path: str) -> None:
    import traceback

    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    result: Dict[str, Any] = {"ran": 0, "seconds": 0.0, "waited": 0.0, "replayed": []}
    began = time.perf_counter()

    def finish() -> None:
        result["seconds"] = time.perf_counter() - began
        result["cpu"] = time.process_time()
        Path(spec["out"]).write_text(json.dumps(result), encoding="utf-8")

    try:
        from IPython.core.interactiveshell import InteractiveShell
        from traitlets.config import Config
    except ImportError as exc:
        result["detail"] = f"running notebooks needs IPython ({exc}): pip install -e '.[test]'"
        finish()
        return

    class Shell(InteractiveShell):
        """A kernel's shell without the kernel: no GUI event loop to start."""

        def enable_gui(self, gui: Any = None) -> None:
            pass

    config = Config()
    config.HistoryManager.enabled = False
    shell = Shell.instance(config=config)
    shell.enable_matplotlib("inline")  # as in Jupyter: each figure drawn (to a PNG) after its cell
    sys.argv = [sys.argv[0]]

    cells = json.loads(Path(spec["notebook"]).read_text(encoding="utf-8"))["cells"]
    replay: Dict[str, str] = spec["replay"]
    patched = False
    for i in range(min(spec["stop"], len(cells))):
        if cells[i].get("cell_type") != "code":
            continue
        source = _source(cells[i])
        if replay and not patched and "grade" in source:
            # The cell is about to import grading (or has): answer its stages from verify's results.
            try:
                import importlib

                grading: Any = importlib.import_module("torchlight.grading")
            except Exception:  # the cell's own import fails the same way, and says so
                pass
            else:
                grading.grade = _replaying(grading, replay, spec["wait"], result)
                patched = True
        outcome = shell.run_cell(source, store_history=True)
        result["ran"] += 1
        error = outcome.error_before_exec or outcome.error_in_exec
        if error is not None:
            lines = traceback.format_exception(type(error), error, error.__traceback__)
            result["cell"] = i
            result["error"] = f"{type(error).__name__}: {error}".splitlines()[0]
            result["stub"] = _stub_stage(error)
            result["detail"] = "".join(lines[-6:]).rstrip()
            break
    module = sys.modules.get("torchlight")
    where = os.path.dirname(os.path.dirname(os.path.realpath(getattr(module, "__file__", None) or ".")))
    if module is not None and where != os.path.realpath(spec["edition"]):
        result["detail"] = f"torchlight was imported from {where}, not from the edition"
    finish()


if __name__ == "__main__":
    _child(sys.argv[-1])
