"""Module 3: freed tensor memory stays with the process, so that new tensors do not page-fault
(backends/memory.py). Checked in fresh processes, with the setting and without it."""

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not os.confstr("CS_GNU_LIBC_VERSION"), reason="glibc's malloc only"
)

SCRIPT = r"""
import json, resource
import numpy as np
import torchlight
from torchlight.backends import memory
torchlight.backends.get("simple")  # making a backend sets it
a = [np.ones(450_000) for _ in range(3)]  # 3.6 MB each (numpy asks for huge pages from 4 MB)
del a
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    b = [np.ones(450_000) for _ in range(3)]
    del b
faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10
print(json.dumps({"set": memory.keep_freed_memory(), "faults": faults}))
"""


def _run(setting):
    env = dict(os.environ, TORCHLIGHT_KEEP_FREED_MEMORY=setting)
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_new_tensors_reuse_freed_memory():
    kept = _run("1")
    assert kept["set"] is True
    assert kept["faults"] < 100  # 10.8 MB written per round: 2,600 pages if each were fresh
    given_back = _run("0")  # the same program with the setting turned off: most pages fresh
    assert given_back["set"] is False and given_back["faults"] > 500
