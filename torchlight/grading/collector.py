"""Course tooling: grading's pytest plugin, which records each check's outcome where the checks run.

It lives in the process that runs the student's code: the notebook's own process for ``grade()``,
and otherwise a child process (``child.py``), which reports every event to the grader as a signed
line and is judged from outside. So this file depends on nothing of torchlight, only on the
standard library, pytest and (when installed) hypothesis: the grader sends its own copy of this
source to the child, which never reads a grader file from disk.

A row is a plain dict: ``nodeid``, ``test`` (``file::function[params]``), ``stage`` (``"1.3"``,
or ``""``), ``outcome`` (``passed``, ``failed``, ``error``, ``skipped``), ``message`` (shortened),
``seconds`` and ``task`` (the task whose stub raised the failure, else ``""``).
"""

import functools
import hashlib
import hmac
import json
import os
import re
import sys
from typing import Any, Callable, Dict, List, Optional

__all__ = ["Collector", "Sink", "child_main", "make_row", "short_id", "shorten_report", "shorten_text", "stub_task"]

_TASK = re.compile(r"^task(\d+)_(\d+)$")
_STUB = re.compile(r"^Task (\d+\.\d+):")
_QUOTED_STUB = re.compile(r"\bTask (\d+\.\d+): [^\n]*; see ")

# How long hypothesis may shrink one failing example while grading (seconds). Shrinking makes the
# example readable (x=1.0, not x=9.287614338356391) but, unbounded, makes a wrong answer take 3-5
# times as long to grade as a right one; this bound keeps it under 2 times.
SHRINK_SECONDS = float(os.environ.get("TORCHLIGHT_SHRINK_SECONDS", "0.3"))


class Sink:
    """The child's report: one line per event, ``hmac  [seq, kind, data]``, appended to a file.

    The key comes from the grader on stdin before any of the submission runs; a line without a
    valid signature, or out of sequence, is ignored by the grader. The file is opened for each
    line, so closing file descriptors does not silence the report.
    """

    def __init__(self, path: str, key: bytes):
        self._path = path
        self._sign = functools.partial(hmac.new, key, digestmod=hashlib.sha256)
        self._seq = 0

    def send(self, kind: str, data: Any) -> None:
        payload = json.dumps([self._seq, kind, data]).encode()
        self._seq += 1
        line = self._sign(payload).hexdigest().encode() + b" " + payload + b"\n"
        with open(self._path, "ab", buffering=0) as f:
            f.write(line)


class Collector:
    """A pytest plugin that records each test's outcome instead of printing it.

    ``sink``: where each event goes as it happens (in a child process); ``only``: the node ids to
    run, the others deselected (a rerun after the child stopped).
    """

    def __init__(self, sink: Optional[Sink] = None, only: Optional[List[str]] = None):
        self.sink = sink
        self.only = None if only is None else set(only)
        self.rows: Dict[str, Dict[str, Any]] = {}
        self.broken: List[Dict[str, Any]] = []  # files that failed to import
        self.wrapped: list = []  # (hypothesis handle, its original inner test)
        self._phase: Dict[str, str] = {}  # nodeid -> the phase whose failure the row shows
        self._restore: Callable[[], None] = lambda: None

    def _send(self, kind: str, data: Any) -> None:
        if self.sink is not None:
            self.sink.send(kind, data)

    def pytest_sessionstart(self, session) -> None:
        # After the suite's conftest loaded its hypothesis profile, before any test module is imported
        # (a test's @settings(...) takes what it does not set from the profile active then).
        self._restore = bound_hypothesis()

    def pytest_collectstart(self, collector) -> None:
        if collector.nodeid.endswith(".py"):
            self._send("collecting", collector.nodeid)

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            row = make_row(report.nodeid, "", "error", shorten_report(report))
            row["test"] = row["test"] or "(collection)"
            self.broken.append(row)
            self._send("broken", row)

    def pytest_collection_modifyitems(self, config, items) -> None:
        if self.only is None:
            return
        keep = [item for item in items if item.nodeid in self.only]
        dropped = [item for item in items if item.nodeid not in self.only]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = keep

    def pytest_collection_finish(self, session) -> None:
        for item in session.items:
            self.rows[item.nodeid] = make_row(item.nodeid, _stage_of(item), "pending")
            # A property test that reaches a stub fails on every input: hypothesis would spend
            # seconds shrinking an example that says nothing. Stop it at the first stub instead.
            handle = getattr(getattr(item, "obj", None), "hypothesis", None)
            inner = getattr(handle, "inner_test", None)
            if handle is not None and inner is not None and not any(h is handle for h, _ in self.wrapped):
                self.wrapped.append((handle, inner))
                handle.inner_test = _stop_at_stub(inner)
        self._send("collected", [[nodeid, row["stage"]] for nodeid, row in self.rows.items()])

    def pytest_runtest_logstart(self, nodeid, location) -> None:
        self._send("start", nodeid)

    def pytest_runtest_logreport(self, report) -> None:
        row = self.rows.get(report.nodeid)
        if row is None:
            return
        row["seconds"] += report.duration
        if row["outcome"] not in ("pending", "passed"):
            return  # keep the first problem (a teardown error after a failure adds nothing)
        if report.failed:
            row["outcome"] = "failed" if report.when == "call" else "error"
            row["message"] = shorten_report(report)
            self._phase[report.nodeid] = report.when
        elif report.skipped:
            row["outcome"] = "passed" if hasattr(report, "wasxfail") else "skipped"
            row["message"] = _skip_reason(report)
        elif report.when == "call":
            row["outcome"] = "passed"

    def pytest_exception_interact(self, node, call, report) -> None:
        # Called after every failing phase with the exception itself: note whether a stub raised it,
        # and spell out each failure of a group (hypothesis's "found 2 distinct failures").
        nodeid = getattr(node, "nodeid", "")
        row = self.rows.get(nodeid)
        if row is None or not report.failed or call.excinfo is None or self._phase.get(nodeid) != report.when:
            return
        exc = call.excinfo.value
        if not row["task"]:
            row["task"] = stub_task(exc)
        if isinstance(exc, _StubReached):
            row["message"] = str(exc)  # the stub's own words, not our wrapper's name
        elif _members(exc):
            row["message"] = _group_message(exc)

    def pytest_runtest_logfinish(self, nodeid, location) -> None:
        row = self.rows.get(nodeid)
        if row is not None:
            self._send("row", row)

    def pytest_sessionfinish(self, session) -> None:
        for handle, inner in self.wrapped:  # the test functions outlive this run (in a notebook)
            handle.inner_test = inner
        self.wrapped.clear()
        self._restore()

    def results(self) -> List[Dict[str, Any]]:
        """The rows: files that failed to import first, then each check (one never run is an error)."""
        for row in self.rows.values():
            if row["outcome"] == "pending":  # the run stopped before reaching it
                row["outcome"], row["message"] = "error", "collected but never run"
        return self.broken + list(self.rows.values())


def child_main(key: bytes, config: Dict[str, Any]) -> int:
    """The child process: run pytest on ``config["args"]`` and report every event to ``config["events"]``."""
    sink = Sink(config["events"], key)
    sys.path.insert(0, config["root"])  # import torchlight from the edition being graded
    try:
        import pytest
    except ImportError:
        sink.send("done", {"code": 4, "error": "grading runs the tests with pytest: pip install -e '.[test]'"})
        return 0
    import_hypothesis()
    collector = Collector(sink, only=config.get("only"))
    code = pytest.main(config["args"], plugins=[collector])
    sink.send("done", {"code": int(code)})
    return 0


def import_hypothesis() -> None:
    """Import hypothesis, where it is installed, before pytest starts.

    pytest rewrites the asserts of every module of a package that brings a pytest plugin, as each
    is imported during the run: for hypothesis some 75 modules, parsed and compiled from source
    in every new process (about 2 s of a grading run's start; where PYTHONDONTWRITEBYTECODE is
    set, as on CI, nothing of it is cached). Imported before, they load from their byte code;
    only hypothesis's own asserts lose pytest's messages, never a check's. (pytest then warns that
    it cannot rewrite them: ``runner._pytest_args`` silences that warning.)
    """
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        pass


def bound_hypothesis() -> Callable[[], None]:
    """Bound hypothesis's shrinking for a grading run; returns what undoes it.

    The suite's profile stays (its number of examples, its deadline); grading adds no example
    database (nothing is written into the edition, nothing earlier replayed), no explain phase,
    and at most ``SHRINK_SECONDS`` of shrinking per failing test.
    """
    try:
        from hypothesis import Phase, settings
        from hypothesis.internal.conjecture import engine
    except ImportError:
        return lambda: None
    before = settings.get_current_profile_name()
    current = settings.default
    phases = tuple(p for p in (current.phases if current is not None else tuple(Phase)) if p is not Phase.explain)
    settings.register_profile("torchlight-grading", parent=current, database=None, phases=phases)
    settings.load_profile("torchlight-grading")
    shrink = getattr(engine, "MAX_SHRINKING_SECONDS", None)
    if shrink is not None:
        engine.MAX_SHRINKING_SECONDS = SHRINK_SECONDS  # type: ignore[assignment]

    def restore() -> None:
        settings.load_profile(before)
        if shrink is not None:
            engine.MAX_SHRINKING_SECONDS = shrink  # type: ignore[assignment]

    return restore


class _StubReached(BaseException):
    """A stub's NotImplementedError on its way out of a property test.

    Not an ``Exception``, so hypothesis lets it through at once instead of shrinking; pytest
    still reports it as the test's failure, with the stub's error as its cause.
    """


def _stop_at_stub(inner):
    @functools.wraps(inner)
    def run(*args, **kwargs):
        try:
            return inner(*args, **kwargs)
        except NotImplementedError as exc:
            if _STUB.match(str(exc)):
                raise _StubReached(f"NotImplementedError: {exc}") from exc
            raise

    return run


def stub_task(exc: Optional[BaseException]) -> str:
    """The task whose stub raised ``exc`` (directly, as a cause, or in every member of a group), else ""."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, NotImplementedError):
            m = _STUB.match(str(exc))
            if m:
                return m.group(1)
        members = _members(exc)  # hypothesis reports distinct failures as a group
        if members:
            tasks = {stub_task(e) for e in members}
            return min(tasks, key=_stage_key) if "" not in tasks else ""
        # A stub's message caught and quoted by a check (pytest.raises(RuntimeError, match=...)
        # catches NotImplementedError, a RuntimeError, and quotes it): stubs say "...; see ...".
        quoted = _QUOTED_STUB.search(str(exc))
        if quoted:
            return quoted.group(1)
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return ""


def _members(exc: BaseException) -> list:
    members = getattr(exc, "exceptions", None)
    return list(members) if isinstance(members, (list, tuple)) else []


def _group_message(exc: BaseException) -> str:
    """Every failure of a group, each with its falsifying example, numbered."""
    members = _members(exc)
    head = str(getattr(exc, "message", "") or exc).strip()
    lines = [head if head.endswith((".", ":")) else head + ":"]
    for i, member in enumerate(members, 1):
        text = f"{type(member).__name__}: {member}".strip()
        if isinstance(member, AssertionError) and str(member).startswith("assert "):
            text = str(member)  # as pytest shows an assert: "assert 1.0 == 2.0", without the type
        text += "".join("\n" + str(note) for note in getattr(member, "__notes__", ()) or ())
        body = shorten_text(text, max_lines=4).splitlines() or [type(member).__name__]
        lines.append(f"({i}) {body[0]}")
        lines.extend(f"    {line}" for line in body[1:])
    return "\n".join(lines)


def _stage_key(name: str) -> List[int]:
    return [int(n) for n in name.split(".") if n]


def _stage_of(item) -> str:
    for mark in item.iter_markers():
        m = _TASK.match(mark.name)
        if m:
            return ".".join(m.groups())
    return ""


def make_row(nodeid: str, stage: str, outcome: str, message: str = "") -> Dict[str, Any]:
    return {
        "nodeid": nodeid,
        "test": short_id(nodeid),
        "stage": stage,
        "outcome": outcome,
        "message": message,
        "seconds": 0.0,
        "task": "",
    }


def short_id(nodeid: str) -> str:
    """``"tests/module1/test_scalar.py::test_add"`` -> ``"test_scalar.py::test_add"``."""
    path, sep, rest = nodeid.partition("::")
    return path.replace("\\", "/").rsplit("/", 1)[-1] + sep + rest


_EXAMPLE = re.compile(r"(?:Falsifying example|Failing test case): (\w+)\((.*?)\n\)", re.DOTALL)
_NOISE = ("Use -v to get more diff", "Full diff:")


def shorten_report(report) -> str:
    """The failing case of a pytest report in a few lines: the error and hypothesis's falsifying example."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    if crash is None:  # a file that could not be imported: pytest marks the error's own lines "E   "
        marked = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
        marked = [line for line in marked if line.strip("^~ ")]
        text = "\n".join(marked[-6:]) or text
        text = text.replace(os.getcwd() + os.sep, "")  # paths in the edition, relative to it
    if not _EXAMPLE.search(text):
        found = _EXAMPLE.search(re.sub(r"(?m)^E {1,7}", "", report.longreprtext))
        if found:
            text += "\n" + found.group(0)
    return shorten_text(text)


def shorten_text(text: str, max_lines: int = 6, width: int = 160) -> str:
    """An error message in at most ``max_lines`` lines, its falsifying example last, on one line."""
    example = _EXAMPLE.search(text)
    text = _EXAMPLE.sub("", text)
    lines = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(_NOISE):
            continue
        if line.startswith("You can reproduce this example"):
            break
        lines.append(line if len(line) <= width else line[: width - 3] + "...")
    if len(lines) > max_lines:
        lines = lines[:max_lines] + ["..."]
    if example:
        lines.append(f"Falsifying example: {example.group(1)}({arguments(example.group(2))})")
    return "\n".join(lines)


def arguments(block: str) -> str:
    """Hypothesis's argument block on one line, nested values kept whole.

    ``"\\n    ab=(\\n        [0.0],\\n        [0.0],\\n    ),\\n    n=1,  # or any other"`` ->
    ``"ab=([0.0], [0.0]), n=1"``.
    """
    parts = [re.sub(r"\s+#.*$", "", line).strip() for line in block.splitlines()]
    joined = " ".join(p for p in parts if p)
    joined = re.sub(r"([(\[{]) ", r"\1", joined)  # "( [0.0]" -> "([0.0]"
    joined = re.sub(r",? ([)\]}])", r"\1", joined)  # "[0.0], )" -> "[0.0])"
    joined = joined.strip().rstrip(",")
    return joined if len(joined) <= 300 else joined[:297] + "..."


def _skip_reason(report) -> str:
    if isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    return ""
