"""Every command line of the repository answers ``--help`` with its help and status 0, without
running its job, and a mistake with one line on stderr and status 2 (torchlight/utils/cli.py).

The commands: each script under benchmarks/ that runs as a program, each of project/examples/,
the training scripts of project/, the CNN demo in the package, and the instructors' tools. Each
runs in a fresh Python, a few at a time; ``--help`` must come back within a time that no job
(a benchmark, a training run) could finish in.
"""

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
HELP_SECONDS = 60  # a generous bound for starting Python and importing torchlight on a busy machine


def _scripts(folder: str) -> List[str]:
    """The files of ``folder`` that run as programs (a benchmark's helper modules do not)."""
    return sorted(
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / folder).glob("*.py")
        if 'if __name__ == "__main__"' in p.read_text() or folder == "project/examples"
    )


# name -> the command's arguments after `python`
COMMANDS: Dict[str, List[str]] = {
    **{path: [path] for path in _scripts("benchmarks") + _scripts("project/examples")},
    **{
        f"-m project.{name}": ["-m", f"project.{name}"]
        for name in ("train", "train_scalar", "train_tensor", "train_cnn")
    },
    "-m torchlight.examples.train_cnn": ["-m", "torchlight.examples.train_cnn"],
    "-m torchlight.grading": ["-m", "torchlight.grading"],
    "-m torchlight.course": ["-m", "torchlight.course"],
}


def _run(args: List[str]) -> Tuple[int, str, str]:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")  # (benchmarks/cuda.py: never look for a GPU here)
    done = subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=HELP_SECONDS
    )
    return done.returncode, done.stdout, done.stderr


@lru_cache(maxsize=None)
def _all(flag: str) -> Dict[str, Tuple[int, str, str]]:
    """Every command run once with ``flag``, two at a time (the runs are mostly Python's start-up)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = pool.map(lambda args: _run([*args, flag]), COMMANDS.values())
        return dict(zip(COMMANDS, results, strict=True))


def test_the_commands_are_found():
    assert {"benchmarks/startup.py", "benchmarks/threshold.py", "project/examples/cnn_classifier.py"} <= set(COMMANDS)
    assert "benchmarks/timing.py" not in COMMANDS  # a helper module, not a program


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_prints_the_help_and_exits_with_0(name):
    code, out, err = _all("--help")[name]
    assert code == 0, f"{name} --help: status {code}\n{err}"
    assert "-h, --help" in out, f"{name} --help printed no help:\n{out}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_mistake_is_one_line_on_stderr_with_status_2(name):
    code, out, err = _all("--no-such-option")[name]
    assert code == 2, f"{name} --no-such-option: status {code}\n{err}"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "--no-such-option" in lines[0], f"{name}: not one line on stderr:\n{err}"
    assert out == "", f"{name}: printed to stdout on a mistake:\n{out}"


@pytest.mark.parametrize(
    "args, message",
    [
        (["-m", "project.train_scalar", "--epochs", "-1"], "argument --epochs: must be at least 1, got -1"),
        (["-m", "project.train_tensor", "--lr", "0"], "argument --lr: must be positive, got 0.0"),
        (["-m", "project.train_tensor", "--momentum", "1.5"], "argument --momentum: must be in [0, 1), got 1.5"),
        (["-m", "project.train", "--model", "cnn", "--epochs", "zero"], "argument --epochs: invalid int value: 'zero'"),
        (["benchmarks/overhead.py", "--paths", "native,c"], "argument --paths: expected native, python"),
        (["-m", "torchlight.grading"], "error: name stages such as 1.3 (--list lists them), or --all"),
        (["-m", "torchlight.grading", "7.1"], "error: unknown stage '7.1'; --list lists the stages"),
        (["-m", "torchlight.grading", "0.1", "--time-limit", "0"], "argument --time-limit: must be positive, got 0.0"),
        (["-m", "torchlight.course", "student"], "the following arguments are required: OUT"),
    ],
)
def test_bad_values_are_one_line_errors(args, message):
    code, out, err = _run(args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert out == "", out


def test_one_name_for_one_idea():
    # --quiet, not --no-progress; --rounds, not --repeats (torchlight/utils/cli.py lists the names)
    texts = {name: result[1] for name, result in _all("--help").items()}
    for name, text in texts.items():
        assert "--no-progress" not in text and "--repeats" not in text, name
    assert all("--quiet" in texts[f"-m project.{name}"] for name in ("train_scalar", "train_tensor", "train_cnn"))
