"""Task 3.2 (once map, zip and reduce are written): module 2's checks of bad arguments, empty
tensors and NaN, rerun on the fast backend; and the shapes that once hung it.

``view(-2, -3)`` on a fast tensor of 6 elements was accepted (the product matches), and the next
operation looped forever in a numba kernel, deaf to Ctrl-C. That case runs in a child process with
a timeout, so that a regression fails this test instead of stalling the suite.
"""

import json
import os
import subprocess
import sys
import types

import pytest

import torchlight

from .strategies import reuse

pytestmark = pytest.mark.task3_2
BACKENDS = ["fast"]


def _this_stage(fn):
    """A copy of module 2's test fn without its own stage mark (task2_3, task2_4): here it runs on
    fast, and belongs to this file's stage (grading files a test under its closest task mark)."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__dict__.update(fn.__dict__)
    copy.pytestmark = [m for m in getattr(fn, "pytestmark", []) if not m.name.startswith("task")]
    return copy


for _file in ("test_bad_input", "test_empty_and_nan"):
    globals().update({name: _this_stage(fn) for name, fn in reuse.tests(reuse.load(_file)).items()})

# Each bad shape must be refused; if one is accepted, the child runs an operation on it (the hang)
# and reports what it got. One JSON line of outcomes at the end.
CHILD = """
import json
import torchlight as tl

six = tl.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], backend="fast")
one = tl.ones(1, 1, backend="fast")
cases = {
    "view(-2, -3)": lambda: six.view(-2, -3),
    "view(-3, -2)": lambda: six.view(-3, -2),
    "reshape(-2, -3)": lambda: six.reshape(-2, -3),
    "expand(-2, -3)": lambda: one.expand(-2, -3),
    "permuted view(-1, -6)": lambda: six.view(1, 6).permute(1, 0).view(-1, -6),
}
results = {}
for name, make in cases.items():
    try:
        bad = make()
    except Exception as e:
        results[name] = {"refused": type(e).__name__, "message": str(e)}
        continue
    results[name] = {"accepted": list(bad.shape), "then": ((bad + 1.0).sum()).item()}
print(json.dumps(results))
"""


def test_negative_sizes_are_refused_before_any_kernel_runs_on_them():
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD], env=dict(os.environ), capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        pytest.fail("a tensor with negative sizes reached a fast kernel, which hung (killed after 60 s)")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.strip().splitlines()[-1])
    for name, outcome in results.items():
        if outcome.get("refused") == "NotImplementedError" and outcome["message"].startswith("Task "):
            raise NotImplementedError(outcome["message"])  # the student edition: said as such
        assert outcome.get("refused") == "RuntimeError", f"{name}: {outcome}"
        assert "invalid" in outcome["message"], f"{name}: {outcome['message']}"


def test_gather_names_an_index_on_another_backend():
    a = torchlight.ones(2, 3, backend="fast")
    index = torchlight.tensor([[0.0], [1.0]], backend="simple")
    with pytest.raises(RuntimeError, match=r"gather\(\): expected the index on the input's 'fast' backend.*index.to"):
        a.gather(1, index)
    assert a.gather(1, index.to("fast")).tolist() == [[1.0], [1.0]]
