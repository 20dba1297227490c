"""Course tooling: ``python -m torchlight.course`` makes a student edition, list the stages, verify the edition."""

import sys
from pathlib import Path
from typing import Optional, Sequence

from .. import grading
from ..grading.runner import TIME_LIMIT
from ..utils.cli import ArgumentParser, positive_float
from .autograder import write_bundle
from .edition import GitError, write_edition
from .listing import stage_listing
from .markers import MarkerError
from .source import Course
from .update import UpdateError, update
from .verify import verify


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run one subcommand; exit status 0 on success, 1 when verify fails or git cannot make the
    edition a repository (nothing of the edition is left then), 2 for a usage or marker error."""
    parser = ArgumentParser(
        prog="python -m torchlight.course",
        description="Make a student edition, list what each stage asks for, verify the edition (docs/instructors.md).",
    )
    parser.add_argument(
        "--source",
        metavar="DIR",
        default=None,
        help="the reference checkout (default: the one torchlight is imported from)",
    )
    sub = parser.add_subparsers(dest="command")  # none named: an error below, after unknown options
    student = sub.add_parser("student", help="write a student edition to OUT")
    student.add_argument("out", metavar="OUT", help="a new (or empty) folder")
    student.add_argument(
        "--solved-through", metavar="N.K", help="stages up to N.K keep their solutions (default: none do)"
    )
    student.add_argument("--no-git", action="store_true", help="do not make OUT a git repository")
    sub.add_parser("stages", help="list each stage and the files and functions it asks for")
    check = sub.add_parser("verify", help="check the student edition stage by stage")
    check.add_argument("stages", nargs="*", metavar="N.K", help="only these stages (default: every stage with regions)")
    check.add_argument("--cumulative", action="store_true", help="with stage t solved, grade every stage up to t")
    check.add_argument(
        "--whole-course",
        action="store_true",
        help="in the full edition run grading --all, not only the stages with regions",
    )
    check.add_argument("--keep", action="store_true", help="keep the temporary edition (its path is printed)")
    move = sub.add_parser("update", help="move a student's repository onto a new edition (their work kept)")
    move.add_argument("student_dir", metavar="STUDENT_DIR", help="the student's repository")
    move.add_argument("--solved-through", metavar="N.K", help="the new edition's: stages up to N.K take its code")
    move.add_argument("--dry-run", action="store_true", help="say what would change; write nothing")
    move.add_argument("--force", action="store_true", help="go ahead in a git repository with uncommitted changes")
    bundle = sub.add_parser("autograder", help="write a Gradescope autograder OUT.zip and a GitHub Classroom workflow")
    bundle.add_argument("out", metavar="OUT.zip", help="the bundle to write")
    bundle.add_argument(
        "--stages", nargs="+", default=[], metavar="N.K", help="the stages graded (default: every one left to students)"
    )
    bundle.add_argument("--solved-through", metavar="N.K", help="the edition handed out keeps stages up to N.K solved")
    bundle.add_argument(
        "--time-limit", type=positive_float, default=TIME_LIMIT, metavar="S", help="seconds one check may run"
    )
    bundle.add_argument("--partial-credit", action="store_true", help="a stage scores its checks' pass fraction")
    ns = parser.parse_args(argv)
    if ns.command is None:
        parser.error(f"name a command: {', '.join(sub.choices)}")

    root = Path(ns.source) if ns.source else grading._CHECKOUT
    try:
        course = Course.load(root)
        if ns.command == "stages":
            print(stage_listing(course))
            return 0
        if ns.command == "student":
            try:
                edition = write_edition(course, ns.out, ns.solved_through, git=not ns.no_git)
            except GitError as exc:
                print(f"error: the edition was not written, and nothing of it is left: {exc}", file=sys.stderr)
                return 1
            print(f"wrote the student edition to {edition.path} ({edition.files} files)")
            print(f"  stubbed: {', '.join(edition.stubbed) or 'nothing'}")
            print(f"  solved:  {', '.join(edition.solved) or 'nothing'}")
            return 0
        if ns.command == "update":
            try:
                return update(course, ns.student_dir, ns.solved_through, dry_run=ns.dry_run, force=ns.force)
            except UpdateError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
        if ns.command == "autograder":
            made = write_bundle(
                course, ns.out, ns.stages, ns.solved_through, time_limit=ns.time_limit, partial_credit=ns.partial_credit
            )
            print(f"wrote the Gradescope autograder {made.path}: stages {', '.join(made.stages)}, {made.checks} checks")
            print(f"wrote the GitHub Classroom workflow {made.workflow} (.github/workflows/classroom.yml)")
            return 0
        return verify(course, ns.stages, cumulative=ns.cumulative, whole_course=ns.whole_course, keep=ns.keep)
    except (MarkerError, ValueError, FileExistsError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
