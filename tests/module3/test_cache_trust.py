"""The fast backend's kernel cache where no folder can be written, and where others could write it
(issue 20, items 1 and 8).

- No writable cache anywhere (the package folder, ``~/.cache``, ``TORCHLIGHT_CACHE_DIR`` and
  ``NUMBA_CACHE_DIR``): the backend compiles in memory with one ``KernelCacheWarning``, where numba
  raised "cannot cache function" at the import of ``fast_conv.py``. As root permission bits stop no
  write, so "unwritable" is a path under a regular file, and the package is a copy whose
  ``backends/__pycache__`` is a regular file.
- A cache folder that others can write (or that belongs to someone else): numba unpickles its
  index files, so a planted pickle would run code. The cache loads nothing from such a folder,
  compiles in memory and warns once, naming the folder.

Each case runs in a fresh Python with a timeout, so that a regression fails instead of hanging.
"""

import json
import os
import pickle
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from torchlight.backends import fast_cache

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 240

# Computes on the fast backend what the simple backend computes (map, zip, reduce, a matrix product
# and a convolution: every kind of cached kernel), and prints the results and the warnings. Given
# the argument "matmul", the matrix product alone: the kernel whose index files the trust tests
# plant (each kind compiles for seconds where nothing is cached, and the others add nothing there).
CHILD = r"""
import json, sys, warnings
out = {}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import numpy as np
    import torchlight
    import torchlight.nn.functional as F
    x = np.arange(1.0, 7.0).reshape(2, 3)
    img = np.arange(32.0).reshape(1, 2, 4, 4) / 10
    w = np.arange(18.0).reshape(1, 2, 3, 3) / 10

    def run(backend):
        a = torchlight.tensor(x, backend=backend)
        results = [(a @ a.permute(1, 0)).tolist()]
        if sys.argv[1:] != ["matmul"]:
            conv = F.conv2d(torchlight.tensor(img, backend=backend), torchlight.tensor(w, backend=backend), padding=1)
            results += [(a.exp() + a).tolist(), a.sum(1).tolist(), conv.tolist()]
        return results

    fast, simple = run("fast"), run("simple")
    out["same"] = len(fast) == len(simple) and all(np.allclose(np.array(f), np.array(s)) for f, s in zip(fast, simple))
    out["backend"] = torchlight.tensor([1.0], backend="fast").backend.name
out["warnings"] = [[w.category.__name__, str(w.message)] for w in caught]
print(json.dumps(out))
"""


def _run(env, cwd=ROOT, script=CHILD, args=()):
    env = {k: v for k, v in env.items() if k != "NUMBA_ENABLE_CUDASIM"}
    result = subprocess.run(
        [sys.executable, "-c", script, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def _cache_warnings(out):
    return [message for category, message in out["warnings"] if category == "KernelCacheWarning"]


def test_no_writable_cache_anywhere_compiles_in_memory_and_warns_once(tmp_path):
    # a copy of the package whose numba cache folder cannot be made: a regular file stands there
    shutil.copytree(ROOT / "torchlight", tmp_path / "torchlight", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "torchlight" / "backends" / "__pycache__").write_text("not a folder")
    blocker = tmp_path / "blocker"  # a regular file: nothing can be created under it, even by root
    blocker.write_text("")
    env = dict(
        os.environ,
        PYTHONPATH=str(tmp_path),
        PYTHONDONTWRITEBYTECODE="1",
        TORCHLIGHT_BACKEND="fast",
        TORCHLIGHT_CACHE_DIR=str(blocker / "torchlight"),
        NUMBA_CACHE_DIR=str(blocker / "numba"),
        HOME=str(blocker / "home"),
        XDG_CACHE_HOME=str(blocker / "cache"),
    )
    out = _run(env, cwd=tmp_path)
    assert out["same"] and out["backend"] == "fast"
    warned = _cache_warnings(out)
    assert len(warned) == 1, warned
    assert "compiling the fast backend's kernels in memory" in warned[0]
    assert sorted(os.listdir(tmp_path)) == ["blocker", "torchlight"]  # nothing written beside them


# Where numba would look for the matrix product's index files (a kernel numba caches itself, in
# NUMBA_CACHE_DIR): asked of numba in a child that compiles nothing.
WHERE = r"""
import json
from torchlight.backends import fast_matmul
print(json.dumps([d._cache._cache_file._index_path for d in (fast_matmul.plan,)]))
"""


class _Planted:
    """A pickle that, when loaded, creates the file named ``marker``: what an attacker would plant."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.parametrize("how", ["writable by others", "someone else's"])
def test_a_cache_folder_others_control_is_not_loaded(tmp_path, how):
    if how == "someone else's" and os.geteuid() != 0:
        pytest.skip("giving a folder to another user needs root")
    env = dict(
        os.environ,
        TORCHLIGHT_BACKEND="fast",
        TORCHLIGHT_CACHE_DIR=str(tmp_path / "torchlight"),
        NUMBA_CACHE_DIR=str(tmp_path / "numba"),
    )
    indexes = _run(env, script=WHERE)
    marker = tmp_path / "planted-code-ran"
    folders = {os.path.dirname(index) for index in indexes}
    for index in indexes:
        with open(index, "wb") as f:
            pickle.dump(_Planted(str(marker)), f)
    for folder in folders:
        if how == "writable by others":
            os.chmod(folder, 0o777)
        else:
            os.chown(folder, 65534, 65534)
    out = _run(env, args=["matmul"])
    assert not marker.exists(), "numba unpickled a file from a folder others can write"
    assert out["same"]
    warned = _cache_warnings(out)
    expected = "others can write it" if how == "writable by others" else "belongs to uid 65534"
    assert len(warned) == len(folders) and all(
        expected in m and "not using the kernel cache folder" in m for m in warned
    )
    for folder in folders:  # nothing was saved there either: only the planted files
        planted = [os.path.basename(i) for i in indexes if os.path.dirname(i) == folder]
        assert sorted(os.listdir(folder)) == sorted(planted)


def test_what_the_cache_trusts(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o755)
    os.chmod(mine, 0o755)
    assert fast_cache.untrusted(str(mine)) is None
    assert fast_cache.untrusted(str(mine / "not" / "yet")) is None  # made later, under a sound folder
    os.chmod(mine, 0o775)
    assert "others can write it" in fast_cache.untrusted(str(mine))
    os.chmod(mine, 0o757)
    assert "others can write it" in fast_cache.untrusted(str(mine))
    os.chmod(mine, 0o755)
    (mine / "inner").mkdir(mode=0o700)
    os.chmod(mine, 0o777)  # the folder above can be written by anyone: the cache folder could be swapped
    assert "others can write the folder above it" in fast_cache.untrusted(str(mine / "inner"))
    os.chmod(mine, 0o1777)  # sticky, as /tmp: no one can rename another's entries
    assert fast_cache.untrusted(str(mine / "inner")) is None
    os.chmod(mine, 0o755)
    os.symlink(mine / "inner", tmp_path / "link")
    assert fast_cache.untrusted(str(tmp_path / "link")) is None  # the folder the link names is what counts
    if os.geteuid() == 0:
        os.chown(mine / "inner", 65534, 65534)
        assert "belongs to uid 65534" in fast_cache.untrusted(str(mine / "inner"))
        os.chown(mine / "inner", 0, 0)
        os.chown(mine, 65534, 65534)
        assert "the folder above it" in fast_cache.untrusted(str(mine / "inner"))
        os.chown(mine, 0, 0)
    assert stat.S_IMODE(os.stat(mine).st_mode) == 0o755
