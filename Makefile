# Set-up on a fresh machine is `make demo` or `make test`: each makes .venv and installs into it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo test lint bench clean docs docs-serve

$(VENV)/.installed: setup.cfg pyproject.toml setup.py $(wildcard torchlight/_native/*.c)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $@

# The CNN of module 4 on the Digits images; `python -m project.train` alone trains module 2's toy network.
demo: $(VENV)/.installed
	$(PY) -m project.train --model cnn

test: $(VENV)/.installed
	$(PY) -m pytest

# ruff (lint and format check, unused noqa comments included) on every folder of Python: the
# library, its tests, the training scripts, the benchmarks and the site's build hooks. mypy checks
# the library only: the scripts, benchmarks and hooks alone hold some 40 typing findings (untyped
# argparse values, numba's dispatchers, Optional timings), a job of its own rather than lint's.
LINTED := torchlight tests project benchmarks docs/hooks
lint: $(VENV)/.installed
	$(PY) -m ruff check $(LINTED)
	$(PY) -m ruff format --check $(LINTED)
	$(PY) -m mypy torchlight

# OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE, where a set-up sets them, make numpy pick a slower BLAS
# kernel; the comparison is against numpy at its best, so they are unset for this command only.
bench: $(VENV)/.installed
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) benchmarks/run.py

# The course website (mkdocs.yml, docs/): `make docs` builds it into site/ (any warning, broken
# link or missing reference fails the build); `make docs-serve` serves it at
# http://127.0.0.1:8000/torchlight/ (the path of site_url) and rebuilds when a page, a notebook or
# the library changes. The tools are the `docs` extra. The notebooks' outputs come from running
# them, a few minutes the first time; the runs are kept in .cache/ (docs/hooks/notebook_outputs.py).
$(VENV)/.docs-installed: $(VENV)/.installed pyproject.toml
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[docs]'
	touch $@

docs: $(VENV)/.docs-installed
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

docs-serve: $(VENV)/.docs-installed
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs serve

clean:
	rm -rf $(VENV) *.egg-info out site .cache build torchlight/_native_apply.*
