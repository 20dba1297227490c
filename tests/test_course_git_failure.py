"""``python -m torchlight.course student OUT`` when git fails (issue 20, item 9): the partial
edition is removed, one line says what failed (no traceback), and running it again works."""

import os
import shutil
import stat
import sys

import pytest

from torchlight.course.__main__ import main

sys.path.insert(0, os.path.dirname(__file__))
from test_course import _course  # the tiny course of the course tests

GIT = shutil.which("git")


def _fake_git(folder, fail_on):
    """A ``git`` that fails (exit 1, a fatal message) on the subcommand ``fail_on``; else the real one."""
    folder.mkdir()
    script = folder / "git"
    real = f'exec "{GIT}" "$@"' if GIT else "exit 127"
    script.write_text(
        f'#!/bin/sh\nif [ "$1" = "{fail_on}" ]; then echo "fatal: simulated failure of $1" >&2; exit 1; fi\n{real}\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return folder


def _student(root, out, capsys):
    code = main(["--source", str(root), "student", str(out)])
    captured = capsys.readouterr()
    return code, captured.err


@pytest.mark.parametrize("how", ["no git on PATH", "git commit exits 1", "git init exits 1"])
def test_a_git_failure_leaves_nothing_and_says_so_in_one_line(tmp_path, monkeypatch, capsys, how):
    root = _course(tmp_path)
    out = tmp_path / "edition"
    path = os.environ.get("PATH", "")
    if how == "no git on PATH":
        monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
        expected = "git was not found (is it installed and on PATH?); install it, or pass --no-git"
    else:
        sub = how.split()[1]
        monkeypatch.setenv("PATH", f"{_fake_git(tmp_path / 'bin', sub)}{os.pathsep}{path}")
        expected = f"'git {sub} -q" if sub == "init" else "'git commit -q -m torchlight student edition'"
    code, err = _student(root, out, capsys)
    assert code == 1
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("error: the edition was not written, and nothing of it is left: ")
    assert expected in err
    if how != "no git on PATH":
        assert "failed with exit status 1 (fatal: simulated failure of " in err
    assert not out.exists()
    if GIT:  # with git working again, the same command works
        monkeypatch.setenv("PATH", path)
        code, err = _student(root, out, capsys)
        assert code == 0, err
        assert (out / ".git").is_dir() and (out / "torchlight" / "ops.py").is_file()


def test_an_empty_folder_given_stays_and_stays_empty(tmp_path, monkeypatch, capsys):
    root = _course(tmp_path)
    out = tmp_path / "given"
    out.mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    code, err = _student(root, out, capsys)
    assert code == 1 and "git was not found" in err
    assert out.is_dir() and list(out.iterdir()) == []


def test_no_git_needs_no_git(tmp_path, monkeypatch, capsys):
    root = _course(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    code = main(["--source", str(root), "student", str(tmp_path / "ed"), "--no-git"])
    assert (
        code == 0 and (tmp_path / "ed" / "torchlight" / "ops.py").is_file() and not (tmp_path / "ed" / ".git").exists()
    )
