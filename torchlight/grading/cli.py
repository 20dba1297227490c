"""Course tooling: ``python -m torchlight.grading``, grading on the command line.

``python -m torchlight.grading 1.3`` shows one stage's table (``1`` a whole module's), ``--all``
the course table, ``--json PATH`` writes Gradescope's results file as well (always, even when
grading cannot run: then with a score of 0 and the reason). The checks run in a child process,
each for at most ``--time-limit`` seconds; ``--verbose`` adds pytest's own output. A mistake (an
unknown option or stage, no stage named) is one line on stderr and exit status 2, as on every command
line of the project (``torchlight/utils/cli.py``).
"""

import json
import time
import traceback
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

from .results import course_table, gradescope
from .runner import TIME_LIMIT, expand, run_stages
from .stage import CHECKOUT, UnknownStage, find_stage, listing, stages

__all__ = ["main", "write_results"]


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m torchlight.grading 1.3 [1.4 ...]``: grade stages; exit status 0 if all passed, 1 if one
    failed, 2 for a mistake on the command line (one line on stderr).

    :param argv: the command line's arguments (default: ``sys.argv[1:]``).
    """
    # Imported here, not above: the autograder's copy of this package (torchlight_grading), outside
    # torchlight, imports this file for write_results and never runs main.
    from ..utils.cli import ArgumentParser, positive_float

    start = time.perf_counter()
    parser = ArgumentParser(
        prog="python -m torchlight.grading", description="Run course stages' checks and show a pass/fail table."
    )
    parser.add_argument("stages", nargs="*", help='stages such as "1.3", "task1_3", or "1" for a whole module')
    parser.add_argument("--list", action="store_true", help="list the stages and exit")
    parser.add_argument("--all", action="store_true", help="grade the whole course and show one table")
    parser.add_argument("--json", metavar="PATH", help="also write the results in Gradescope's format to PATH")
    parser.add_argument(
        "--partial-credit", action="store_true", help="with --json: a stage scores the fraction of its checks passed"
    )
    parser.add_argument(
        "--tests-dir", metavar="DIR", help="grade against DIR/moduleN/ (held-back tests) instead of tests/"
    )
    parser.add_argument(
        "--time-limit",
        metavar="S",
        type=positive_float,
        default=TIME_LIMIT,
        help=f"seconds one check may run before it fails as timed out (default {TIME_LIMIT:g})",
    )
    parser.add_argument("--verbose", action="store_true", help="also show pytest's own output")
    ns = parser.parse_args(argv)
    if ns.list:
        print(listing(stages()))
        return 0
    if ns.all == bool(ns.stages):
        _failed(ns.json, "grading was not run: name stages, or --all", start)
        parser.error("name stages such as 1.3 (--list lists them), or --all for the whole course, not both")
    try:
        # --all and --json grade task stages (a module stands for its stages); otherwise as named
        chosen = expand(ns.stages, CHECKOUT) if ns.all or ns.json else [find_stage(s) for s in ns.stages]
        tests = Path(ns.tests_dir) if ns.tests_dir else CHECKOUT / "tests"
        graded = run_stages(chosen, tests=tests, time_limit=ns.time_limit)
    except UnknownStage as exc:  # (its message lists the stages: on the command line --list does)
        _failed(ns.json, f"grading could not run: {exc}", start)
        parser.error(f"unknown stage {exc.stage!r}; --list lists the stages")
    except (ValueError, FileNotFoundError) as exc:
        _failed(ns.json, f"grading could not run: {exc}", start)
        parser.error(str(exc))
    except BaseException:
        _failed(ns.json, "grading itself failed:\n" + traceback.format_exc(), start)
        raise
    results = graded.results
    if ns.json:  # first: the file is there whatever happens to the printing
        out = gradescope(results, partial_credit=ns.partial_credit, execution_time=time.perf_counter() - start)
        write_results(ns.json, out)
    if ns.all:
        print(course_table(results))
    else:
        for r in results:
            r.show()
    if ns.verbose:
        print("\npytest's own output:\n" + graded.output)
    if not ns.all and not ns.json:
        return 0 if all(r.passed for r in results) else 1
    # Everything asked must pass; a stage with nothing to run yet asks nothing.
    counted = [r for r in results if r.counted]
    return 0 if counted and all(r.passed for r in counted) else 1


def write_results(path, results: Dict[str, Any]) -> None:
    """Write Gradescope's results file at ``path`` whole (to a temporary name first, then renamed)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    part.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    part.replace(target)


def _failed(path: Optional[str], reason: str, start: float) -> None:
    if path:
        write_results(
            path, {"score": 0.0, "execution_time": round(time.perf_counter() - start), "output": reason, "tests": []}
        )
