# Set-up on a fresh machine is `make demo` or `make test`: each makes .venv and installs into it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo test lint bench clean

$(VENV)/.installed: setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $@

demo: $(VENV)/.installed
	$(PY) -m project.train

test: $(VENV)/.installed
	$(PY) -m pytest

# ruff (lint and format check) and mypy on the library.
lint: $(VENV)/.installed
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,lint]'
	$(PY) -m ruff check torchlight
	$(PY) -m ruff format --check torchlight
	$(PY) -m mypy torchlight

# OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE, where a set-up sets them, make numpy pick a slower BLAS
# kernel; the comparison is against numpy at its best, so they are unset for this command only.
bench: $(VENV)/.installed
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) *.egg-info out
