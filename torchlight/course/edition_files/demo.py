"""Course tooling: ``make demo``, module 4's network, trained, once the stages it runs are written.

    python -m project.demo [options]     # the options go to the training script

First it looks, without running anything, for the stages that are still stubs: a stage is left
while a function of it still raises ``NotImplementedError`` with its task (the stubs the edition
came with). If any of the stages below is left, it names them and stops (exit status 1). Then it
trains; should the training still reach a stub, it says which, again without a traceback.

The stages listed are those of modules 0 to 4 that run on a CPU (the cuda backend's run only on a
GPU): the demo's network uses nearly all of them, and a stage the demo does not use is still one
that the course asks for before it.
"""

import re
import runpy
import sys
from pathlib import Path
from typing import List, Optional, Sequence, Set

# Filled in when the edition is written (torchlight/course/edition.py).
NEEDED: List[str] = []
COMMAND: List[str] = []  # the module the demo runs, then its own options

ROOT = Path(__file__).resolve().parent.parent
_STUB = re.compile(r"""^\s*raise NotImplementedError\(\s*["']Task (\d+\.\d+):""", re.MULTILINE)


def stubs_left(root: Path = ROOT) -> Set[str]:
    """The stages that still have a stub in torchlight/ or project/ under ``root``."""
    left: Set[str] = set()
    for folder in ("torchlight", "project"):
        for path in sorted((root / folder).rglob("*.py")):
            try:
                left.update(_STUB.findall(path.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError):
                continue
    return left


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    left = [stage for stage in NEEDED if stage in stubs_left()]
    if left:
        print(
            f"make demo trains module 4's network; it needs stages {NEEDED[0]} to {NEEDED[-1]} (all but the cuda "
            f"backend's). Still to write: {', '.join(left)}.\n"
            f"Grade one with `make grade STAGE={left[0]}`; `make grade` shows the whole course."
        )
        return 1
    module, options = COMMAND[0], COMMAND[1:]
    sys.argv = [module, *options, *argv]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except NotImplementedError as exc:
        if not str(exc).startswith("Task "):
            raise
        print(f"make demo stopped at a stub: {exc}")
        return 1
    except SystemExit as exc:  # the training script's own exit (argparse's --help, or an error)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
