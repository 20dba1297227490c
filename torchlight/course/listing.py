"""Course tooling: the ``stages`` listing, each stage of the course and the files and functions it asks for."""

from typing import Dict, List

from .source import Course

__all__ = ["stage_listing"]


def stage_listing(course: Course) -> str:
    """One block per stage in course order: its title, then each file with the functions (or
    notebook cells) its regions ask for; a stage without regions says so."""
    by_stage: Dict[str, Dict[str, List[str]]] = {}
    for task in course.tasks:
        labels = by_stage.setdefault(task.stage, {}).setdefault(task.path, [])
        if task.label not in labels:
            labels.append(task.label)
    lines = []
    for stage, title in course.stages.items():
        files = by_stage.get(stage)
        if not files:
            lines.append(f"{stage:5} {title}: no regions yet")
            continue
        count = sum(1 for t in course.tasks if t.stage == stage)
        lines.append(f"{stage:5} {title} ({count} region{'s' if count != 1 else ''})")
        for path, labels in files.items():
            lines.append(f"        {path}: {', '.join(labels)}")
    staged = course.staged()
    lines.append(f"{len(staged)} of {len(course.stages)} stages have regions")
    return "\n".join(lines)
