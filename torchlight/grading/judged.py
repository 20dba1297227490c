"""Course tooling: judged values: what each stage's code computes, compared with the reference's from outside.

A check that runs in the submission's process can be forged by code written against the grader:
it can patch pytest or the test helpers in memory, or read the key that signs the child's report.
Values cannot be forged that way. Each stage has probes (``tests/moduleN/judged.py``: a function
``stage_N_K(rng)`` that returns named calls into the library, on inputs drawn from ``rng``). The
autograder draws a seed that exists only from grading time on, runs the probes in the submission
(in a child process, as an unprivileged user when it runs as root) and in the solved reference
that ships in its bundle (unreadable to that user), and compares the two sets of values here. A
submission that reports values it did not compute must still report the reference's values for a
seed it could not know in advance: it must compute them, which is the stage.

What the child reports is data, checked here: numbers within :data:`RTOL` and :data:`ATOL` of the
reference's (the same nan and infinities; a boolean counts as 0 or 1, as the checks compare
them), the same shapes and strings, and where the reference raised, an exception of the same
class. ``tests/test_judged.py`` fails unless each stage's probes run every region of their stage
and no region of a later one (a line tracer; the numba kernels of stages 3.1 to 3.3, which no
tracer sees, each stubbed in turn must change a value).
"""

import json
import math
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Tuple

from .processes import as_user, hand_over, kill

__all__ = [
    "ATOL",
    "Reference",
    "RTOL",
    "Verdict",
    "differ",
    "judge",
    "probes_of",
    "reference_values",
    "run_probes",
]

# Defaults that the environment overrides, as the tests run: cuda in numba's simulator, and two
# threads at least, so that the fast backend's parallel launchers run even on a one-core grader.
PROBE_ENV = {"NUMBA_ENABLE_CUDASIM": "1", "NUMBA_NUM_THREADS": "2"}
RTOL, ATOL = 1e-6, 1e-9  # a student's formula may round differently from the reference's; not more
_MAX_BYTES = 16 * 2**20  # a report beyond this is no report

# The child: the request from stdin, then each stage's probes, one report line per stage. What the
# code prints goes to stderr, so that only the report is on the report's file.
_BOOTSTRAP = r"""
import importlib.util, json, os, random, sys, traceback
request = json.loads(sys.stdin.readline())
sys.stdin.close()
sys.stdin = open(os.devnull)
report = open(request["report"], "a", encoding="utf-8")
sys.path.insert(0, os.getcwd())

def encode(value, depth=0):
    if depth > 8:
        raise TypeError("values nested more than 8 deep")
    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    np = sys.modules.get("numpy")  # (no array without it)
    if np is not None and isinstance(value, (np.ndarray, np.generic)):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v, depth + 1) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"a probe returned a {type(value).__name__}, which is not a value to compare")

for stage in request["stages"]:
    module, task = stage.split(".")
    values = {}
    try:
        spec = importlib.util.spec_from_file_location(f"judged_{module}", f"tests/module{module}/judged.py")
        probes = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(probes)
        calls = getattr(probes, f"stage_{module}_{task}")(random.Random(f"{request['seed']}:{stage}"))
    except BaseException as e:
        calls, values = {}, {"(probes)": {"__raised__": type(e).__name__, "message": str(e)[:300]}}
    for name, call in calls.items():
        try:
            values[name] = encode(call())
        except BaseException as e:
            values[name] = {"__raised__": type(e).__name__, "message": str(e)[:300]}
    report.write(json.dumps([stage, values]) + "\n")
    report.flush()
"""


@dataclass
class Verdict:
    """One stage's judged values: how many agree with the reference's, and the first that does not."""

    stage: str
    agreed: int
    total: int
    message: str = ""  # the first difference, or why there were no values

    @property
    def passed(self) -> bool:
        return self.total > 0 and self.agreed == self.total


@dataclass
class Reference:
    """The reference's values of some stages, for one seed: what :func:`judge` compares with."""

    seed: str
    values: Dict[str, Dict[str, Any]]


def reference_values(reference: Path, stages: Sequence[str], *, time_limit: float, env: Dict[str, str]) -> Reference:
    """The values of ``stages``' probes (those that have probes) in ``reference``, for a seed drawn now.

    :raises RuntimeError: when the reference's own probes fail to run (the bundle is broken).
    """
    seed = secrets.token_hex(16)
    stages = [s for s in stages if probes_of(reference, s)]
    found = run_probes(reference, stages, seed, time_limit=time_limit, env=dict(PROBE_ENV, **env))
    for stage in stages:
        values = found.get(stage)
        if not isinstance(values, dict) or "(probes)" in values:
            raise RuntimeError(f"the reference's probes of stage {stage} did not run: {values}")
    return Reference(seed, found)


def judge(
    submission: Path,
    want: Reference,
    stages: Sequence[str],
    *,
    time_limit: float,
    env: Dict[str, str],
    user: Optional[Tuple[int, int]] = None,
) -> Dict[str, Verdict]:
    """Run ``stages``' probes in ``submission`` (as ``user``) for ``want``'s seed; a verdict per stage
    that the reference has values of."""
    stages = [s for s in stages if s in want.values]
    got = run_probes(submission, stages, want.seed, time_limit=time_limit, env=dict(PROBE_ENV, **env), user=user)
    verdicts = {}
    for stage in stages:
        reference = want.values[stage]
        values = got.get(stage)
        if not isinstance(values, dict):
            verdicts[stage] = Verdict(stage, 0, len(reference), str(values))
            continue
        agreed, first = 0, ""
        for name, value in reference.items():
            why = differ(values.get(name, {"__missing__": True}), value)
            agreed += why is None
            first = first or (f"{name}: {why}" if why else "")
        verdicts[stage] = Verdict(stage, agreed, len(reference), first)
    return verdicts


def probes_of(root: Path, stage: str) -> bool:
    """Whether ``root``'s tests have probes for ``stage``."""
    module, task = stage.split(".")
    path = root / "tests" / f"module{module}" / "judged.py"
    return path.is_file() and f"def stage_{module}_{task}(" in path.read_text(encoding="utf-8")


def run_probes(
    root: Path,
    stages: Sequence[str],
    seed: str,
    *,
    time_limit: float,
    env: Dict[str, str],
    user: Optional[Tuple[int, int]] = None,
    python: str = sys.executable,
) -> Dict[str, Any]:
    """Each stage's values as computed in ``root`` (a dict), or why there are none (a string)."""
    found: Dict[str, Any] = {}
    left = list(stages)
    while left:
        ended, why = _run_child(root, left, seed, time_limit, env, user, python)
        found.update(ended)
        left = [s for s in left if s not in found]
        if left:  # the stage it was on stopped it: the others get a fresh child
            found[left.pop(0)] = why
    return found


def differ(got: Any, want: Any) -> Optional[str]:
    """Why ``got`` is not the reference's ``want`` (None when it is)."""
    raised = isinstance(want, dict) and "__raised__" in want
    if isinstance(got, dict) and "__missing__" in got:
        return "not reported"
    if isinstance(got, dict) and "__raised__" in got:
        if raised and got["__raised__"] == want["__raised__"]:
            return None
        return f"raised {got['__raised__']}: {got.get('message', '')}"
    if raised:
        return f"should raise {want['__raised__']}, but gave {_short(got)}"
    if isinstance(want, str) or want is None:
        return None if type(got) is type(want) and got == want else f"{_short(got)}, the reference gives {_short(want)}"
    if isinstance(want, (int, float)):  # bools too: a comparison may answer True where the reference says 1.0
        if not isinstance(got, (int, float)) or not _close(float(got), float(want)):
            return f"{_short(got)}, the reference gives {_short(want)}"
        return None
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return f"{_short(got)}, the reference gives {_short(want)} (another shape)"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            why = differ(g, w)
            if why:
                return f"[{i}] {why}"
        return None
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            return f"{_short(got)}, the reference gives {_short(want)}"
        for key in want:
            why = differ(got[key], want[key])
            if why:
                return f"[{key!r}] {why}"
        return None
    return f"the reference gave a value of type {type(want).__name__}"


def _close(got: float, want: float) -> bool:
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    if math.isinf(want) or math.isinf(got):
        return got == want
    return abs(got - want) <= ATOL + RTOL * abs(want)


def _short(value: Any, most: int = 120) -> str:
    if isinstance(value, dict) and "__raised__" in value:
        return f"raised {value['__raised__']}"
    text = json.dumps(value)
    return text if len(text) <= most else text[: most - 3] + "..."


def _run_child(root, stages, seed, limit, env, user, python) -> Tuple[Dict[str, Any], str]:
    """Run probes until they end or stop: (stage -> values, why it stopped)."""
    tmp = Path(tempfile.mkdtemp(prefix="torchlight-judged-"))
    try:
        report = tmp / "report"
        report.touch()
        hand_over([tmp], user)
        request = {"stages": list(stages), "seed": seed, "report": str(report)}
        with open(tmp / "output", "wb") as out:
            proc = subprocess.Popen(
                [python, "-I", "-c", _BOOTSTRAP],
                cwd=root,
                env=env,
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=os.name == "posix",
                **as_user(user),
            )
            found: Dict[str, Any] = {}
            why = ""
            try:
                assert proc.stdin is not None
                try:
                    proc.stdin.write(json.dumps(request).encode() + b"\n")
                    proc.stdin.close()
                except OSError:
                    pass
                since, seen = time.monotonic(), 0
                while len(found) < len(stages):
                    status = proc.poll()
                    lines = report.read_bytes()[:_MAX_BYTES].split(b"\n")[:-1]
                    for line in lines[seen:]:
                        stage, values = _parse(line, stages[len(found)] if len(found) < len(stages) else "")
                        if stage is None:
                            why = "its report could not be read"
                            break
                        found[stage] = values
                        since = time.monotonic()
                    seen = len(lines)
                    if why or len(found) == len(stages):
                        break
                    if status is not None:
                        why = f"the process exited with status {status} before reporting"
                    elif time.monotonic() - since > limit:
                        why = f"timed out after {limit:g} s"
                    elif report.stat().st_size > _MAX_BYTES:
                        why = f"its report grew over {_MAX_BYTES // 2**20} MiB"
                    if why:
                        break
                    time.sleep(0.02)
            finally:
                kill(proc, grace=0.0)
        return found, why
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _parse(line: bytes, stage: str) -> Tuple[Optional[str], Any]:
    """A report line for ``stage`` (the next expected), as (stage, values); (None, None) if it is not one."""
    try:
        said, values = json.loads(line)
    except ValueError:
        return None, None
    if said != stage or not isinstance(values, dict):
        return None, None
    return stage, values
