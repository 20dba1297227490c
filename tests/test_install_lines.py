"""No text in the repository tells anyone to install torchlight by the name ``torchlight``.

The package index's ``torchlight`` is an unrelated project (a PyTorch trainer with the same import
name): installing that name with the ``cuda`` extra installs it, PyTorch and gigabytes of CUDA
libraries, and no numba-cuda. This project's distribution is ``torchlight-course``
(pyproject.toml); an install line installs from the checkout (``pip install -e '.[cuda]'``) or
names that distribution. The scan covers every text file git knows of (tracked, or new and not
ignored): docs, notebooks, README, code and its messages.
"""

import re
import subprocess
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = "torchlight-course"
# Where a checkout has no git (an unpacked edition), the folders that are never the project's text.
SKIP = {".git", ".venv", "site", "build", "dist", "out", "__pycache__", ".hypothesis", ".pytest_cache"}

# An installer's command and what follows it on the line, up to where a shell command or a code
# span ends (`;`, `&&`, `|`, a backtick, a closing bracket or quote of the text around it).
INSTALL = re.compile(r"\b(?:pip3?|pipx|uv\s+pip)\s+install\b(?P<args>[^;&|`\n\\)\"]*)")
REQUIREMENT = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?(?:[<>=!~;@].*)?$")
TAKES_VALUE = {"-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-t", "--target", "-i",
               "--index-url", "--extra-index-url", "-f", "--find-links", "--prefix", "--root", "--python"}  # fmt: skip


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()  # PEP 503


def installed_names(line: str) -> Iterator[Tuple[str, str]]:
    """(what the command installs, as written; its normalized name) for each pip install on ``line``."""
    for match in INSTALL.finditer(line):
        tokens = match.group("args").split()
        i = 0
        while i < len(tokens):
            token = tokens[i].strip("'\"")
            i += 1
            if token.startswith("-"):
                i += token.split("=")[0] in TAKES_VALUE and "=" not in token
                continue
            found = REQUIREMENT.match(token)
            if found is None:
                break  # the command's words have ended (prose, a path, a URL)
            yield token, _normalized(found.group("name"))


def text_files() -> List[Path]:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\0")
        paths = [ROOT / name for name in listed if name]
    except (OSError, subprocess.CalledProcessError):
        paths = [p for p in ROOT.rglob("*") if not SKIP & set(p.relative_to(ROOT).parts)]
    return sorted(p for p in paths if p.is_file())


# Python's adjacent string literals, which a message split over lines is made of: `"... pip install "`
# then `"'torchlight[cuda]' ..."` on the next line reads as one string.
ADJACENT_LITERALS = re.compile(r"([\"'])[ \t]*\n[ \t]*[rbfu]{0,2}\1")


def offending_lines() -> List[str]:
    found = []
    for path in text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # not text (a data file, an image)
        lines = text.splitlines()
        if path.suffix == ".py":  # each line of the text with its string literals joined, as well
            seen = set(lines)
            lines = lines + [
                f"(joined) {line}" for line in ADJACENT_LITERALS.sub("", text).splitlines() if line not in seen
            ]
        for number, line in enumerate(lines, 1):
            for written, name in installed_names(line):
                if name == "torchlight":
                    where = number if not line.startswith("(joined)") else "a message joined from several lines"
                    found.append(f"{path.relative_to(ROOT)}:{where}: installs {written!r}: {line.strip()[:160]}")
    return found


def test_no_install_line_names_the_other_projects_distribution():
    found = offending_lines()
    assert not found, (
        "these lines install the package index's 'torchlight', an unrelated project: install from the "
        f"checkout (pip install -e '.[cuda]') or name {OURS!r}:\n" + "\n".join(found)
    )


# The forms the scan must catch and those it must let pass (written here in pieces, so that the
# scan of this very file does not find them).
BAD = "pip install " + "torchlight"


@pytest.mark.parametrize(
    "line",
    [
        f"{BAD}",
        f"`{BAD}[cuda]`",
        f"python -m {BAD}==0.1.0",
        f"pip install -U '{'torchlight'}[cuda,test]' numba",
        f'    "Either install it: {BAD}[cuda] (numba-cuda)"',
        f"uv pip install --upgrade {'Torchlight'}",
        f"pip install numpy {'torchlight'}>=0.1",
    ],
)
def test_the_scan_catches(line):
    assert [name for _, name in installed_names(line)].count("torchlight") == 1, line


@pytest.mark.parametrize(
    "line",
    [
        "pip install -e '.[cuda]'",
        "pip install -e . in torchlight's checkout",
        f"pip install '{OURS}[cuda]'",
        f"pip install {OURS}==0.1.0",
        "pip install 'numba-cuda[cu12]>=0.30'",
        "the torchlight package: pip install -e '.[test]' (make setup)",
        "pip install --no-index --find-links /tmp/wheels torchlight_course",
        "pip install -r requirements.txt torchlight-course",
    ],
)
def test_the_scan_lets_pass(line):
    assert "torchlight" not in [name for _, name in installed_names(line)], line


def test_the_distribution_is_ours():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(rf'^name = "{OURS}"$', pyproject, re.MULTILINE), "pyproject.toml's [project] name"


def test_a_message_split_over_string_literals_is_read_whole():
    source = 'MESSAGE = (\n    "Either install the extra: pip install "\n    "\'torchlight[cuda]\' (numba-cuda)"\n)\n'
    joined = ADJACENT_LITERALS.sub("", source)
    assert [name for line in joined.splitlines() for _, name in installed_names(line)] == ["torchlight"]
