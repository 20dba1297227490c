"""Module 4: torchlight.save respects the file it replaces (torchlight/serialization.py).

Regular files only (a FIFO, a device or a directory is refused, never replaced), symbolic links
followed (the link stays), the file's mode kept, a writable file in a folder the user cannot write
overwritten in place (as torch.save can), a structure that contains itself refused with a clear
error, and a save killed with SIGKILL leaves a temporary file that the next save removes.
"""

import os
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from torchlight.serialization import load, save

ROOT = Path(__file__).resolve().parents[2]


def test_a_fifo_is_refused_and_stays_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match=r"is a FIFO \(named pipe\); save writes regular files only"):
        save({"v": 1}, fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["pipe"]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="making a device node needs root")
def test_a_device_is_refused_and_stays_a_device(tmp_path):
    null = tmp_path / "null"  # a second /dev/null: the real one must never be at stake in a test
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    with pytest.raises(OSError, match="is a character device; save writes regular files only"):
        save({"v": 1}, null)
    assert stat.S_ISCHR(os.lstat(null).st_mode)


def test_a_directory_is_refused(tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(IsADirectoryError, match="is a directory; save writes regular files only"):
        save({"v": 1}, tmp_path / "d")
    assert os.listdir(tmp_path / "d") == []


def test_a_symlink_to_a_fifo_is_refused_naming_both(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    os.symlink("pipe", tmp_path / "link")
    with pytest.raises(OSError, match="link' \\(that is, '.*pipe'\\) is a FIFO"):
        save({"v": 1}, tmp_path / "link")
    assert os.path.islink(tmp_path / "link")


def test_saving_through_a_symlink_writes_its_target_and_keeps_the_link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "model.npz"
    save({"v": 1}, target)
    os.symlink(target, tmp_path / "latest.npz")
    save({"v": 2}, tmp_path / "latest.npz")
    assert os.path.islink(tmp_path / "latest.npz")
    assert load(target) == {"v": 2}
    assert sorted(os.listdir(tmp_path)) == ["latest.npz", "real"]
    assert os.listdir(tmp_path / "real") == ["model.npz"]


def test_a_dangling_symlink_gets_its_target_created(tmp_path):
    os.symlink("new.npz", tmp_path / "link.npz")
    save({"v": 3}, tmp_path / "link.npz")
    assert os.path.islink(tmp_path / "link.npz") and load(tmp_path / "new.npz") == {"v": 3}


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444])
def test_the_file_keeps_its_mode(tmp_path, mode):
    path = tmp_path / "ckpt.npz"
    save({"v": 1}, path)
    os.chmod(path, mode)
    save({"v": 2}, path)
    assert stat.S_IMODE(os.stat(path).st_mode) == mode
    assert load(path) == {"v": 2}


def test_a_new_file_gets_the_usual_mode(tmp_path):
    mask = os.umask(0o022)
    try:
        save({"v": 1}, tmp_path / "new.npz")
    finally:
        os.umask(mask)
    assert stat.S_IMODE(os.stat(tmp_path / "new.npz").st_mode) == 0o644


@pytest.mark.parametrize("kind", ["dict", "list", "deep"])
def test_a_structure_that_contains_itself_is_refused(tmp_path, kind):
    if kind == "dict":
        obj = {"a": {}}
        obj["a"]["up"] = obj
        message = r"contains itself: obj\['a'\]\['up'\]"
    elif kind == "list":
        obj = [1, []]
        obj[1].append(obj[1])
        message = r"contains itself: obj\[1\]\[0\]"
    else:  # not recursive, only deep: a clear error too, never a RecursionError
        obj = []
        for _ in range(100_000):
            obj = [obj]
        message = "nested too deeply"
    with pytest.raises(ValueError, match=message):
        save(obj, tmp_path / "x.npz")
    assert os.listdir(tmp_path) == []


def test_the_same_object_twice_is_not_a_cycle(tmp_path):
    shared = {"lr": 0.1}
    save({"a": shared, "b": [shared, shared]}, tmp_path / "x.npz")
    assert load(tmp_path / "x.npz") == {"a": {"lr": 0.1}, "b": [{"lr": 0.1}, {"lr": 0.1}]}


# The child imports as root (the interpreter may live where nobody can read it), then becomes
# nobody, whose permission bits count, and saves.
AS_NOBODY = """
import os, sys
from torchlight.serialization import save
os.setgid(65534)
os.setuid(65534)
save({"v": int(sys.argv[2])}, sys.argv[1])
"""


def _run_as_nobody(*args):
    return subprocess.run(
        [sys.executable, "-c", AS_NOBODY, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TORCHLIGHT_BACKEND": "simple"},
    )


def test_a_writable_file_in_an_unwritable_folder_is_overwritten_in_place():
    folder = Path(tempfile.mkdtemp(prefix="torchlight-save-"))
    try:
        path = folder / "model.npz"
        save({"v": 1}, path)
        os.chmod(path, 0o666)  # the file anyone may write ...
        inode = os.stat(path).st_ino
        if os.geteuid() == 0:
            # ... in a folder only root may write: as root permission bits stop nothing, so the
            # save runs in a child that has become nobody
            os.chmod(folder, 0o755)
            result = _run_as_nobody(str(path), "2")
            assert result.returncode == 0, result.stderr
        else:
            os.chmod(folder, 0o555)
            if os.access(folder, os.W_OK):
                pytest.skip("this user can write a folder with mode 0555: no unwritable folder to test with")
            save({"v": 2}, path)
        assert load(path) == {"v": 2}
        assert os.stat(path).st_ino == inode  # in place: the same file
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o666
        assert os.listdir(folder) == ["model.npz"]
    finally:
        os.chmod(folder, 0o755)
        for entry in os.listdir(folder):
            os.unlink(folder / entry)
        os.rmdir(folder)


def test_an_unwritable_folder_and_no_file_still_raises(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("as root every folder is writable; the case is the one above's, in a child")
    os.chmod(tmp_path, 0o555)
    try:
        with pytest.raises(PermissionError):
            save({"v": 1}, tmp_path / "new.npz")
    finally:
        os.chmod(tmp_path, 0o755)


KILLED = """
import os, sys, time
import numpy as np
from torchlight.serialization import save

def hang(fd):  # the contents are written; the process dies before the rename
    open(sys.argv[2], "w").close()
    time.sleep(120)

os.fsync = hang
save({"w": np.zeros(100_000)}, sys.argv[1])
"""


def test_a_killed_save_leaves_the_old_file_and_the_next_save_removes_its_temporary(tmp_path):
    path = tmp_path / "model.npz"
    save({"v": 1}, path)
    marker = tmp_path.parent / (tmp_path.name + "-written")
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED, str(path), str(marker)],
        cwd=ROOT,
        env={**os.environ, "TORCHLIGHT_BACKEND": "simple"},
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert child.poll() is None, "the child ended before it was killed"
            assert time.monotonic() < deadline, "the child never reached the end of its save"
            time.sleep(0.05)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    left = sorted(os.listdir(tmp_path))
    assert len(left) == 2 and "model.npz" in left  # the old file, and the killed save's temporary
    assert load(path) == {"v": 1}
    save({"v": 2}, path)
    assert os.listdir(tmp_path) == ["model.npz"]
    assert load(path) == {"v": 2}


def test_a_live_saves_temporary_is_left_alone(tmp_path):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        from torchlight.utils.scratch import _host

        busy = tmp_path / f".model.npz.{_host()}.{sleeper.pid}.save-abc123.tmp"
        busy.write_bytes(b"being written")
        save({"v": 1}, tmp_path / "model.npz")
        assert busy.exists()
    finally:
        sleeper.kill()
        sleeper.wait()
    save({"v": 2}, tmp_path / "model.npz")
    assert not busy.exists()


def test_load_still_reads_what_save_wrote(tmp_path):
    save({"w": np.arange(3.0)}, tmp_path / "a.npz")
    np.testing.assert_array_equal(load(tmp_path / "a.npz")["w"], np.arange(3.0))
