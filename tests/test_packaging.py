"""The package says what it is: its license and the data's, one version, typed, deliberate
contents, and no upper bound on a dependency without its reason written beside it.

(.ci/run builds the wheel, installs it in a fresh venv and trains the demo from it.)
"""

import configparser
import re
from pathlib import Path

import pytest

import torchlight

tomllib = pytest.importorskip("tomllib")  # (Python 3.11+)

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = (ROOT / "pyproject.toml").read_text()
PROJECT = tomllib.loads(PYPROJECT)["project"]
SETUPTOOLS = tomllib.loads(PYPROJECT)["tool"]["setuptools"]


def test_license_and_the_datas_notice_ship_with_the_package():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "the torchlight authors" in text
    assert PROJECT["license"] == "MIT"
    notice = ROOT / "torchlight" / "datasets" / "data" / "DIGITS-NOTICE.txt"
    assert (notice.parent / "digits.csv.gz").is_file()
    assert "CC BY 4.0" in notice.read_text() and "Alpaydin" in notice.read_text()
    assert set(PROJECT["license-files"]) == {"LICENSE", notice.relative_to(ROOT).as_posix()}
    assert "data/*.txt" in SETUPTOOLS["package-data"]["torchlight.datasets"]  # the notice, beside the data


def test_one_version_source():
    assert "version" in PROJECT["dynamic"] and "version" not in PROJECT
    assert SETUPTOOLS["dynamic"]["version"] == {"attr": "torchlight.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", torchlight.__version__)
    setup_cfg = configparser.ConfigParser()
    setup_cfg.read(ROOT / "setup.cfg")
    assert not {"metadata", "options"} & set(setup_cfg.sections()), "the metadata lives in pyproject.toml"


def test_typed_and_described():
    assert (ROOT / "torchlight" / "py.typed").is_file() and "py.typed" in SETUPTOOLS["package-data"]["torchlight"]
    assert "Typing :: Typed" in PROJECT["classifiers"]
    assert PROJECT["name"] == "torchlight-course" and PROJECT["readme"] == "README.md"
    assert "urls" in PROJECT["dynamic"] and "project_urls" in (ROOT / "setup.py").read_text()


def test_the_sdist_leaves_out_what_runs_only_in_the_checkout():
    manifest = (ROOT / "MANIFEST.in").read_text().splitlines()
    for folder in ("tests", "project", "benchmarks", "notebooks", "docs"):
        assert f"prune {folder}" in manifest
    assert "graft torchlight" in manifest and any(line.startswith("include LICENSE") for line in manifest)


def test_every_upper_bound_has_its_reason_beside_it():
    requirements = [
        *PROJECT["dependencies"],
        *(r for extra in PROJECT["optional-dependencies"].values() for r in extra),
    ]
    capped = [r for r in requirements if "<" in r]
    lines = PYPROJECT.splitlines()
    for requirement in capped:
        at = next(i for i, line in enumerate(lines) if f'"{requirement}"' in line)
        above = lines[at - 1].strip()
        assert above.startswith("#"), f"{requirement}: an upper bound needs its reason in a comment above it"
    assert not [r for r in requirements if re.match(r"(numpy|matplotlib|tqdm|numba-cuda)\b.*<", r)]
