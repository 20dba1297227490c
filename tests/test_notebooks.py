"""Every course notebook runs from top to bottom without an error, its grading cells included.

Notebooks are found by name: ``notebooks/moduleN_*.ipynb`` is tested under the marker
``moduleN``, so ``pytest -m module1`` runs the module 1 notebook with the rest of module 1.
"""

import importlib.util
import json
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
KERNEL = "torchlight-test-python"
CELL_TIMEOUT = 300  # seconds; a whole notebook should take well under a minute
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _params():
    params = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        m = re.match(r"module(\d+)_", path.name)
        marks = [getattr(pytest.mark, f"module{m.group(1)}")] if m else []
        params.append(pytest.param(path, marks=marks, id=path.stem))
    return params


@pytest.fixture
def kernel_name(tmp_path, monkeypatch):
    """A kernel that runs this very interpreter, so notebooks see this environment's torchlight.

    The ``python3`` kernelspec found first may belong to another Python (a user-wide Jupyter);
    a spec of our own, first on JUPYTER_PATH, rules that out.
    """
    spec = tmp_path / "kernels" / KERNEL
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "torchlight tests", "language": "python"})
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    return KERNEL


def _execute(nb, kernel_name: str) -> None:
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name=kernel_name,
        resources={"metadata": {"path": str(NOTEBOOKS)}},  # run with notebooks/ as the working directory
    )
    client.execute()


def test_the_kernel_is_this_python(kernel_name):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import sys; print(sys.executable)")])
    _execute(nb, kernel_name)
    printed = nb.cells[0].outputs[0]["text"].strip()
    assert Path(printed).resolve() == Path(sys.executable).resolve()


def test_there_are_notebooks():
    assert any(NOTEBOOKS.glob("module0_*.ipynb")), f"no course notebooks in {NOTEBOOKS}"


# The grading cells rerun stage checks that this suite runs in full on its own (25 random cases per
# property); here they try 2, which still runs every check, so that the notebooks do not double
# the suite's time. A notebook's own setdefault (5) is what a student gets.
NOTEBOOK_EXAMPLES = "2"


@pytest.mark.parametrize("path", _params())
def test_notebook_runs(path, kernel_name, monkeypatch):
    monkeypatch.setenv("TORCHLIGHT_EXAMPLES", NOTEBOOK_EXAMPLES)
    text = path.read_text(encoding="utf-8")
    nb = nbformat.reads(text, as_version=4)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3", "notebooks declare the python3 kernel"
    try:
        _execute(nb, kernel_name)
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as error:
        failing = [
            i
            for i, cell in enumerate(nb.cells)
            if any(out.get("output_type") == "error" for out in cell.get("outputs", ()))
        ]
        # Counted from 1, markdown cells included, as `course stages` and verify count them.
        where = f"cell {failing[0] + 1}" if failing else "a cell"
        pytest.fail(f"{path.name}: {where} failed:\n{_ANSI.sub('', str(error))}", pytrace=False)
    _keep_for_the_site(path, text, nb)


def _keep_for_the_site(path, text, nb):
    """The course site shows the outputs of a run of each notebook (docs/hooks/notebook_outputs.py):
    this run is kept for it, so that building the site after the tests (CI) runs no notebook again."""
    hooks = NOTEBOOKS.parent / "docs" / "hooks" / "notebook_outputs.py"
    if not hooks.is_file():  # a student edition has no site
        return
    spec = importlib.util.spec_from_file_location("_site_notebook_outputs", hooks)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.keep(NOTEBOOKS.parent, path, text, nb)
