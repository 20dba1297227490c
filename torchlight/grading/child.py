"""Course tooling: the checks in a child process, judged from outside, so a submission cannot set its own grade.

The student's code runs only in the child: pytest over the edition's tests, with grading's plugin
(``collector.py``). This process, the grader, imports none of it, and trusts nothing the child
says unless it can check it:

- **A key the child cannot know in advance.** The grader sends a fresh random key on the child's
  stdin, with the plugin's source (the grader's own copy, so no grader file is read from disk),
  before any of the submission runs. The plugin signs every event with it (a check started, a
  row, the end); a line that does not verify, or comes out of sequence, is ignored. Whatever the
  submission prints, writes or patches (``GradeResult.passed``, say, which the child never uses)
  cannot pass for a result.
- **An end it must reach.** The run counts only once the child reports that pytest finished. A
  child that exits before that (``os._exit``, a crash; ``sys.exit`` inside a check is an ordinary
  failure that pytest reports) fails the check it was running, with its exit status.
- **A time limit per check.** A check that runs longer than ``time_limit`` seconds (collecting the
  tests, which imports the submission: ``COLLECT_FACTOR`` times as long, at least
  ``COLLECT_SECONDS``) is stopped, its process group killed, and fails as ``timed out after N s``.
- **Reruns.** After a stop, the checks not yet run are run in a fresh child, except those of the
  stage that just failed (at most ``RESTARTS`` times); the rest are ``not run``, with the reason.
- **Expected checks.** Given ``expected`` (every node id a pristine edition has, and its stage,
  as an autograder bundle records them), every expected check must be reported: one that is not
  is an error row, and a reported check that is not expected is dropped.

What it cannot stop: code in the child that reads the key out of the plugin's memory, or rewrites
pytest or the test helpers in memory before the checks run. The autograder bundle therefore also
judges values (``judged.py``): what the student's code computes for a seed drawn at grading time,
compared here with the reference's.
"""

import hashlib
import hmac
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from . import collector
from .processes import as_user, hand_over, kill

__all__ = ["COLLECT_FACTOR", "COLLECT_SECONDS", "RESTARTS", "Report", "run_isolated"]

# Collecting (importing the tests and the submission, compiling kernels) may take this many time
# limits, and at least COLLECT_SECONDS.
COLLECT_FACTOR = 5
COLLECT_SECONDS = 120.0
RESTARTS = 4  # fresh children after one stopped, at most
_MAX_BYTES = 64 * 2**20  # output or report beyond this stops the child (a print in an endless loop)
_SOURCE = Path(collector.__file__).read_bytes()  # read once, when the grader starts

# The child: read the key and the plugin's source from stdin before anything else runs, then pytest.
_BOOTSTRAP = """\
import json, os, sys, types
_key = bytes.fromhex(sys.stdin.readline().strip())
_config = json.loads(sys.stdin.readline())
_source = sys.stdin.read()
sys.stdin.close()
sys.stdin = open(os.devnull)
_plugin = types.ModuleType("torchlight_grading_collector")
_plugin.__file__ = _config["collector"]
sys.modules[_plugin.__name__] = _plugin
exec(compile(_source, _config["collector"], "exec"), _plugin.__dict__)
_main, _args = _plugin.child_main, (_key, _config)
del _key, _config, _source, _plugin
sys.exit(_main(*_args))
"""


@dataclass
class Report:
    """What the children reported, checked: every collected check has a row."""

    rows: List[Dict[str, Any]]  # collector rows, in collection order
    broken: List[Dict[str, Any]]  # files that could not be collected (or the whole collection)
    code: Optional[int]  # pytest's exit status in the last child; None when it never finished
    output: str  # pytest's own output (and anything the checks printed)
    problem: str = ""  # why pytest could not run at all


@dataclass
class _Ended:
    """One child's run, as far as its signed report goes."""

    collected: Optional[List[Tuple[str, str]]] = None  # (node id, stage), once collection finished
    rows: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    broken: List[Dict[str, Any]] = field(default_factory=list)
    code: Optional[int] = None
    error: str = ""
    stopped: str = ""  # why it stopped before reporting the end, "" when it reached it
    culprit: str = ""  # the check running when it stopped
    collecting: str = ""  # the test file being imported when it stopped
    output: str = ""


def run_isolated(
    root: Path,
    args: List[str],
    *,
    time_limit: float,
    expected: Optional[Dict[str, str]] = None,
    env: Optional[Dict[str, str]] = None,
    user: Optional[Tuple[int, int]] = None,
) -> Report:
    """Run ``pytest args`` in children started in ``root`` (the edition graded); the checked report.

    ``user``: the (uid, gid) the children run as (``processes.unprivileged()``; None: this process's).
    """
    rows: Dict[str, Dict[str, Any]] = {}
    order: Dict[str, str] = {}  # node id -> stage, in collection order
    broken: List[Dict[str, Any]] = []
    outputs: List[str] = []
    code: Optional[int] = None
    problem = ""
    only: Optional[List[str]] = None
    for attempt in range(RESTARTS + 1):
        ended = _run_child(root, args, only, time_limit, env, user)
        outputs.append(ended.output)
        problem = problem or ended.error
        if attempt == 0:
            broken = ended.broken
            if ended.collected is None:
                if ended.stopped:
                    why = f"the checks could not be collected: {ended.stopped} while importing "
                    why += ended.collecting or "the tests"
                    broken.append(dict(collector.make_row("", "", "error", why), test="(collection)"))
                break
            order = dict(ended.collected)
        rows.update(ended.rows)
        code = None if ended.stopped else ended.code
        if not ended.stopped:
            break
        if ended.collected is None:  # a rerun that could not even collect
            _fill(rows, order, f"not run: a rerun of the checks could not collect them: {ended.stopped}")
            break
        failed = set()
        if ended.culprit:
            row = rows.get(ended.culprit) or collector.make_row(ended.culprit, order.get(ended.culprit, ""), "failed")
            row["outcome"], row["message"] = "failed", ended.stopped
            rows[ended.culprit] = row
            failed.add(order.get(ended.culprit, ""))
            culprit = collector.short_id(ended.culprit)
            for nodeid, stage in order.items():
                if nodeid not in rows and stage in failed:
                    why = f"not run: {culprit} stopped the checks ({ended.stopped})"
                    rows[nodeid] = collector.make_row(nodeid, stage, "error", why)
        left = [nodeid for nodeid in order if nodeid not in rows]
        if not left:
            break
        if attempt == RESTARTS:
            _fill(rows, order, f"not run: the checks stopped {attempt + 1} times (the last: {ended.stopped})")
            break
        only = left
    _fill(rows, order, "collected but never reported")
    report = Report([rows[n] for n in order], broken, code, "\n".join(outputs), problem)
    if expected is not None:
        _against(report, rows, expected)
    return report


def _against(report: Report, rows: Dict[str, Dict[str, Any]], expected: Dict[str, str]) -> None:
    """Keep exactly the expected checks: one missing is an error (unless its file could not be imported)."""
    files = [b["nodeid"] for b in report.broken]
    kept = []
    for nodeid, stage in expected.items():
        row = rows.get(nodeid)
        if row is None:
            if any(f == "" or nodeid.startswith((f + "::", f + "/")) for f in files):
                continue  # its file's import error is the row
            why = "never reported: the grading process did not report this check"
            row = collector.make_row(nodeid, stage, "error", why)
        row["stage"] = stage
        kept.append(row)
    report.rows = kept


def _fill(rows: Dict[str, Dict[str, Any]], order: Dict[str, str], why: str) -> None:
    for nodeid, stage in order.items():
        if nodeid not in rows:
            rows[nodeid] = collector.make_row(nodeid, stage, "error", why)
        elif rows[nodeid]["outcome"] == "pending":
            rows[nodeid].update(outcome="error", message=why)


def _run_child(root: Path, args: List[str], only: Optional[List[str]], limit: float, env, user=None) -> _Ended:
    key = secrets.token_bytes(32)
    with tempfile.TemporaryDirectory(prefix="torchlight-grading-") as tmp:
        events, output = Path(tmp) / "events", Path(tmp) / "output"
        hand_over([Path(tmp)], user)  # the child writes its events there
        config = {"root": str(root), "args": args, "events": str(events), "only": only, "collector": collector.__file__}
        with open(output, "wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-c", _BOOTSTRAP],
                cwd=root,
                env=env,
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=os.name == "posix",  # its own process group: killed whole
                **as_user(user),
            )
            ended = None
            try:
                assert proc.stdin is not None
                try:
                    proc.stdin.write(key.hex().encode() + b"\n" + json.dumps(config).encode() + b"\n" + _SOURCE)
                    proc.stdin.close()
                except OSError:  # it died already: the watch below says how
                    pass
                ended = _watch(proc, _Events(events, key), output, limit)
            finally:
                # a child that reported the end gets a moment to exit by itself
                kill(proc, grace=5.0 if ended is not None and ended.code is not None else 0.0)
        ended.output = output.read_bytes()[-_MAX_BYTES:].decode(errors="replace")
    return ended


def _watch(proc: subprocess.Popen, events: "_Events", output: Path, limit: float) -> _Ended:
    ended = _Ended()
    since, running = time.monotonic(), ""
    while True:
        status = proc.poll()  # before reading, so that nothing it wrote before exiting is missed
        for kind, data in events.read():
            if kind == "collecting":
                ended.collecting = str(data)
            elif kind == "broken" and isinstance(data, dict):
                ended.broken.append(_clean(data))
            elif kind == "collected" and isinstance(data, list):
                ended.collected = [(str(n), str(s)) for n, s in data]
                since = time.monotonic()
            elif kind == "start":
                running, since = str(data), time.monotonic()
            elif kind == "row" and isinstance(data, dict):
                row = _clean(data)
                ended.rows[row["nodeid"]] = row
                running, since = "", time.monotonic()
            elif kind == "done" and isinstance(data, dict):
                ended.code, ended.error = int(data.get("code", 3)), str(data.get("error", ""))
        allowed = limit if ended.collected is not None else max(COLLECT_FACTOR * limit, COLLECT_SECONDS)
        if ended.code is not None and not running:
            return ended
        if ended.code is not None:  # pytest ended inside a check (it raised KeyboardInterrupt)
            ended.stopped = f"the check stopped pytest itself (exit status {ended.code})"
        elif status is not None:
            ended.stopped = _exit_reason(status)
        elif time.monotonic() - since > allowed:
            ended.stopped = f"timed out after {allowed:g} s"
        elif events.size > _MAX_BYTES or output.stat().st_size > _MAX_BYTES:
            ended.stopped = f"the checks wrote more than {_MAX_BYTES // 2**20} MiB of output"
        if ended.stopped:
            ended.culprit = running
            return ended
        time.sleep(0.02)


def _exit_reason(status: int) -> str:
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"the grading process was killed by {name} before the check finished"
    return f"the grading process exited with status {status} before the check finished (os._exit, or a crash)"


def _clean(data: Dict[str, Any]) -> Dict[str, Any]:
    """A row as the child sent it, with every field of the right type."""
    row = collector.make_row(str(data.get("nodeid", "")), str(data.get("stage", "")), str(data.get("outcome", "error")))
    if row["outcome"] not in ("passed", "failed", "error", "skipped", "pending"):
        row["outcome"] = "error"
    row["test"] = str(data.get("test", row["test"]))
    row["message"] = str(data.get("message", ""))
    row["task"] = str(data.get("task", ""))
    try:
        row["seconds"] = float(data.get("seconds", 0.0))
    except (TypeError, ValueError):
        pass
    return row


class _Events:
    """The child's report, read as it grows: only lines signed with the key, in sequence."""

    def __init__(self, path: Path, key: bytes):
        self.path, self.key = path, key
        self.size = 0
        self._buffer = b""
        self._seq = -1

    def read(self) -> List[Tuple[str, Any]]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.size)
                chunk = f.read(_MAX_BYTES)
        except FileNotFoundError:
            return []
        self.size += len(chunk)
        lines = (self._buffer + chunk).split(b"\n")
        self._buffer = lines.pop()[-_MAX_BYTES:]
        found = []
        for line in lines:
            mac, _, payload = line.partition(b" ")
            good = hmac.new(self.key, payload, hashlib.sha256).hexdigest().encode()
            if not hmac.compare_digest(mac, good):
                continue
            try:
                seq, kind, data = json.loads(payload)
            except ValueError:
                continue
            if isinstance(seq, int) and seq > self._seq:
                self._seq = seq
                found.append((str(kind), data))
        return found
