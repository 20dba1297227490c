"""The autograder's judged probes (tests/moduleN/judged.py, torchlight/grading/judged.py): each
stage's probes run every solution region of their stage and none of a later stage, and the judge
tells the reference's values from a stub's, a wrong answer's and a forger's."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest

from torchlight.course.leaks import _regions
from torchlight.course.source import Course
from torchlight.grading import judged, processes

ROOT = Path(__file__).resolve().parent.parent

# Runs a stage's probes with a line tracer on the marked files (every thread: the CUDA simulator
# runs a kernel's threads as Python threads), every numba kernel as Python, and prints the lines run.
_TRACE = r"""
import importlib.util, json, random, sys, threading
stage, files = sys.argv[1], set(json.loads(sys.argv[2]))
sys.path.insert(0, ".")
module, task = stage.split(".")
spec = importlib.util.spec_from_file_location("judged", f"tests/module{module}/judged.py")
probes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probes)
calls = getattr(probes, f"stage_{module}_{task}")(random.Random(f"traced:{stage}"))
ran = set()

def lines(frame, event, arg):
    if event == "line":
        ran.add((frame.f_code.co_filename, frame.f_lineno))
    return lines

def calls_into(frame, event, arg):
    return lines if frame.f_code.co_filename in files else None

threading.settrace(calls_into)
sys.settrace(calls_into)
failed = {}
for name, call in calls.items():
    try:
        call()
    except Exception as e:
        failed[name] = f"{type(e).__name__}: {e}"
sys.settrace(None)
print(json.dumps({"ran": sorted(ran), "failed": failed}))
"""


@lru_cache(maxsize=None)
def _course():
    return Course.load(ROOT)


def _py_regions():
    """(stage, path, first line, last line) of every region in a .py file (1-based, body only)."""
    found = []
    for path, cell, _lines, regions in _regions(_course()):
        if cell == -1:
            found += [(r.stage, path, r.begin + 2, r.end) for r in regions]
    return found


def _stage_order():
    return list(_course().stages)


STAGES = [s for s in _stage_order() if any(r[0] == s for r in _py_regions())]

# numba compiles these files' regions (stages 3.1 to 3.3): no line tracer sees them run. Each is
# checked by stubbing it instead (test_compiled_regions_are_judged).
COMPILED = {"torchlight/backends/fast.py", "torchlight/backends/fast_matmul.py"}


@pytest.mark.parametrize("stage", STAGES)
def test_each_stage_has_probes_that_run_its_regions_and_no_later_ones(stage):
    files = sorted({str(ROOT / r[1]) for r in _py_regions()})
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(
        [sys.executable, "-c", _TRACE, stage, json.dumps(files)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    ran = {(Path(f).resolve().relative_to(ROOT).as_posix(), n) for f, n in report["ran"]}
    order = _stage_order()
    missed, reached = [], []
    for s, path, first, last in _py_regions():
        if path in COMPILED:
            continue
        hit = any((path, n) in ran for n in range(first, last + 1))
        if s == stage and not hit:
            missed.append(f"{path}:{first}")
        elif order.index(s) > order.index(stage) and hit:
            reached.append(f"{path}:{first} (stage {s})")
    assert not missed, f"stage {stage}'s probes run none of these regions of the stage: {missed}"
    assert not reached, f"stage {stage}'s probes run regions of later stages, so its stubs could not pass: {reached}"


def _copy(tmp: Path, stubbed) -> Path:
    """The checkout's code and probes in ``tmp``, each region in ``stubbed`` a stub."""
    for part in ("torchlight", "project"):
        shutil.copytree(ROOT / part, tmp / part, ignore=shutil.ignore_patterns("__pycache__"))
    for probes in ROOT.glob("tests/module*/judged.py"):
        (tmp / probes.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(probes, tmp / probes.relative_to(ROOT))
    for _stage, path, first, last in sorted(stubbed, key=lambda r: (r[1], -r[2])):  # bottom up: lines stay put
        lines = (tmp / path).read_text().split("\n")
        indent = lines[first - 1][: len(lines[first - 1]) - len(lines[first - 1].lstrip())]
        lines[first - 1 : last] = [f'{indent}raise NotImplementedError("stubbed")']
        (tmp / path).write_text("\n".join(lines))
    return tmp


def _values(root: Path, stage: str, cache=None):
    """Stage's probe values computed in ``root`` (with kernel caches under ``cache``, if given)."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    if cache is not None:  # a copy's kernels are its own: fresh caches
        env.update(NUMBA_CACHE_DIR=str(cache / "numba"), TORCHLIGHT_CACHE_DIR=str(cache / "kernels"))
    (values,) = judged.run_probes(root, [stage], "compiled", time_limit=300, env=env).values()
    assert isinstance(values, dict) and "(probes)" not in values, values
    return values


@lru_cache(maxsize=None)
def _reference(stage: str):
    return _values(ROOT, stage)


def _compiled():
    return [r for r in _py_regions() if r[1] in COMPILED]


@pytest.fixture(scope="module")
def copies_cache(tmp_path_factory):
    """Kernel caches shared by the copies: a kernel whose sources a stub leaves alone compiles once
    (the generated kernels' cache keys hash their sources, so a stubbed one never matches)."""
    return tmp_path_factory.mktemp("caches")


@pytest.mark.parametrize("region", _compiled(), ids=lambda r: f"{r[0]}:{r[1].split('/')[-1]}:{r[2]}")
def test_compiled_regions_are_judged(region, tmp_path, copies_cache):
    """A stub in place of one compiled region changes some value of its stage's probes."""
    stage = region[0]
    want = _reference(stage)
    got = _values(_copy(tmp_path / "copy", [region]), stage, copies_cache)
    assert any(judged.differ(got.get(k), v) for k, v in want.items()), (
        f"stage {stage}'s probes give the reference's values with {region[1]}:{region[2]} stubbed: no probe reaches it"
    )


@pytest.mark.parametrize("stage", sorted({r[0] for r in _compiled()})[:-1])
def test_compiled_stages_need_no_later_stage(stage, tmp_path, copies_cache):
    """Stubbing the compiled regions of later stages leaves a stage's values as they were."""
    later = [r for r in _compiled() if _stage_order().index(r[0]) > _stage_order().index(stage)]
    want = _reference(stage)
    got = _values(_copy(tmp_path / "copy", later), stage, copies_cache)
    differ = {k: judged.differ(got.get(k), v) for k, v in want.items()}
    assert not any(differ.values()), f"stage {stage}'s probes reach a later stage: {differ}"


# Other correct solutions than the reference's, each as (file, the reference's lines, other lines):
# the probes must accept them, as the checks do (rounding differs, the answers do not).
OTHER_SOLUTIONS = {
    "0.1": [
        # sigmoid for x < 0 as 1 - 1 / (1 + e^x): less precise far out, within what the checks allow
        (
            "torchlight/scalar.py",
            "    z = math.exp(x)\n    return z / (1.0 + z)\n",
            "    return 1.0 - 1.0 / (1.0 + math.exp(x))\n",
        ),
        # a comparison that answers with a bool
        ("torchlight/scalar.py", "    return 1.0 if x < y else 0.0\n", "    return x < y\n"),
    ],
    "1.1": [
        (
            "torchlight/autograd/numeric.py",
            "    return float(_value(f(*up)) - _value(f(*down))) / (2.0 * epsilon)\n",
            "    return 0.5 * (float(_value(f(*up))) / epsilon - float(_value(f(*down))) / epsilon)\n",
        )
    ],
    "1.5": [
        (
            "project/train_scalar.py",
            "        p_true = (logit if label == 1 else -logit).sigmoid()\n",
            "        p_true = logit.sigmoid() if label == 1 else 1.0 - logit.sigmoid()\n",
        )
    ],
    "4.4": [
        (
            "torchlight/nn/functional.py",
            "    return e / e.sum(dim, keepdim=True)\n",
            "    return (input - _logsumexp_kept(input, dim)).exp()\n",  # (e above is then unused)
        )
    ],
}


def test_other_correct_solutions_agree_with_the_reference(tmp_path):
    root = _copy(tmp_path / "copy", [])
    for changes in OTHER_SOLUTIONS.values():
        for path, ours, theirs in changes:
            text = (root / path).read_text()
            assert text.count(ours) == 1, f"{path} no longer holds the reference's lines {ours!r}"
            (root / path).write_text(text.replace(ours, theirs))
    stages = list(OTHER_SOLUTIONS)
    env = dict(os.environ)
    want = judged.reference_values(ROOT, stages, time_limit=300, env=env)
    verdicts = judged.judge(root, want, stages, time_limit=300, env=env)
    assert all(v.passed for v in verdicts.values()), verdicts


# -- the judge itself, on probes of its own (plain Python, no torchlight) -------------------------


def test_differ_allows_rounding_and_nothing_more():
    nan, inf = float("nan"), float("inf")
    assert judged.differ(1.0 + 1e-9, 1.0) is None and judged.differ(1e-12, 0.0) is None
    assert judged.differ(1.001, 1.0) and judged.differ(-1.0, 1.0)
    assert judged.differ(nan, nan) is None and judged.differ(nan, 1.0) and judged.differ(1.0, nan)
    assert judged.differ(inf, inf) is None and judged.differ(inf, 1e308) and judged.differ(-inf, inf)
    assert judged.differ([1.0, [2.0]], [1.0, [2.0]]) is None
    assert "another shape" in judged.differ([1.0], [1.0, 2.0]) and judged.differ(1.0, [1.0])
    assert judged.differ(True, 1.0) is None and judged.differ(0, False) is None  # as the checks compare them
    assert judged.differ(True, 0.0) and judged.differ(False, True)
    assert judged.differ("a", "b") and judged.differ(None, 0.0)
    assert judged.differ({"__raised__": "IndexError"}, {"__raised__": "IndexError"}) is None
    assert judged.differ({"__raised__": "NotImplementedError", "message": "Task 0.1"}, 1.0).startswith("raised")
    assert judged.differ(1.0, {"__raised__": "IndexError"}).startswith("should raise IndexError")
    assert judged.differ({"__missing__": True}, 1.0) == "not reported"


_PROBES = """
import os, sys, time

def stage_0_1(rng):
    return {"square": lambda: [x * x for x in (rng.random(), rng.random())], "bad": lambda: [][1]}

def stage_0_2(rng):
    return {"mode": lambda: MODE(rng)}
"""


def _probe_root(tmp_path, name, mode):
    root = tmp_path / name
    (root / "tests" / "module0").mkdir(parents=True)
    (root / "tests" / "module0" / "judged.py").write_text(_PROBES.replace("MODE(rng)", mode))
    return root


def _judge(tmp_path, mode, time_limit=30):
    reference = _probe_root(tmp_path, "reference", "rng.random()")
    submission = _probe_root(tmp_path, "submission", mode)
    env = dict(os.environ)
    want = judged.reference_values(reference, ["0.1", "0.2"], time_limit=time_limit, env=env)
    return judged.judge(submission, want, ["0.1", "0.2"], time_limit=time_limit, env=env)


@pytest.mark.parametrize(
    "mode, agreed, why",
    [
        ("rng.random()", 1, ""),  # computed: the same value for the same seed
        ("0.5", 0, "the reference gives"),  # made up
        ("os._exit(0)", 0, "exited with status 0 before reporting"),
        ("time.sleep(60)", 0, "timed out after 3 s"),
        # a report line of its own making: its values are judged as any others
        ("sys.modules['__main__'].report.write('[\"0.2\", {\"mode\": 1.0}]\\n')", 0, "the reference gives"),
    ],
)
def test_the_judge_accepts_computed_values_only(tmp_path, mode, agreed, why):
    verdicts = _judge(tmp_path, mode, time_limit=3)
    assert verdicts["0.1"].passed, verdicts["0.1"]  # the same code: the same values, raises included
    assert (verdicts["0.2"].agreed, verdicts["0.2"].total) == (agreed, 1)
    assert why in verdicts["0.2"].message


def test_a_reference_whose_probes_fail_is_the_graders_error(tmp_path):
    reference = _probe_root(tmp_path, "reference", "rng.random()")
    (reference / "tests" / "module0" / "judged.py").write_text("raise SystemExit('broken')\ndef stage_0_1(rng): pass\n")
    with pytest.raises(RuntimeError, match="the reference's probes of stage 0.1 did not run"):
        judged.reference_values(reference, ["0.1"], time_limit=30, env=dict(os.environ))


def _usable_python_for_nobody():
    """A Python that ``nobody`` can run (this one, or the system's), or None; root only."""
    user = processes.unprivileged()
    if user is None:
        return None
    for python in (sys.executable, "/usr/bin/python3"):
        try:
            if subprocess.run([python, "-c", "pass"], **processes.as_user(user)).returncode == 0:
                return python
        except OSError:
            pass
    return None


@pytest.mark.skipif(_usable_python_for_nobody() is None, reason="needs root and a Python that nobody can run")
def test_the_submission_runs_as_nobody_and_cannot_read_the_reference():
    user, python = processes.unprivileged(), _usable_python_for_nobody()
    base = Path(tempfile.mkdtemp(prefix="torchlight-judged-test-"))
    try:
        os.chmod(base, 0o711)  # nobody may pass through, as through /autograder
        reference = _probe_root(base, "reference", "rng.random()")
        (reference / "secret").write_text("the answers")
        os.chmod(reference, 0o700)  # as submission.py makes it
        submission = _probe_root(base, "submission", f"open({str(reference / 'secret')!r}).read()")
        processes.hand_over([submission], user)
        env = dict(os.environ)

        def mode():
            (values,) = judged.run_probes(
                submission, ["0.2"], "s", time_limit=30, env=env, user=user, python=python
            ).values()
            return values["mode"]

        assert mode()["__raised__"] == "PermissionError"
        (submission / "tests" / "module0" / "judged.py").write_text(_PROBES.replace("MODE(rng)", "os.getuid()"))
        assert mode() == user[0]
    finally:
        shutil.rmtree(base)
