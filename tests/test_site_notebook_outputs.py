"""The course site's notebook pages show a reference run's outputs, never an exercise's
(docs/hooks/notebook_outputs.py): the rules on a notebook made here, without running anything."""

import importlib.util
from pathlib import Path

import nbformat
import pytest

HOOK = Path(__file__).resolve().parents[1] / "docs" / "hooks" / "notebook_outputs.py"
if not HOOK.is_file():
    pytest.skip("the site's hooks are not in this checkout (a student edition)", allow_module_level=True)

_spec = importlib.util.spec_from_file_location("_site_notebook_outputs", HOOK)
outputs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(outputs)

SOLUTION = "return (f(x + epsilon) - 2.0 * f(x) + f(x - epsilon)) / (epsilon * epsilon)"


def _stream(text):
    return nbformat.v4.new_output("stream", name="stdout", text=text)


def _png():
    return nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"})


def notebooks():
    """(the edition's text, the reference run): a plain cell, an exercise, a grading cell, a leak."""
    cells = [
        nbformat.v4.new_markdown_cell("# A notebook"),
        nbformat.v4.new_code_cell("print(1 + 1)"),
        nbformat.v4.new_code_cell(f"def second(f, x, epsilon=1e-4):\n    # BEGIN SOLUTION 1.1\n    {SOLUTION}\n"),
        nbformat.v4.new_code_cell('from torchlight import grading\nresult = grading.grade("1.1")'),
        nbformat.v4.new_code_cell("import inspect\nprint(inspect.getsource(second))"),
        nbformat.v4.new_code_cell("plt.plot([1, 2]); plt.show()"),
    ]
    reference = nbformat.v4.new_notebook(cells=cells)
    edition = nbformat.from_dict(nbformat.v4.new_notebook(cells=[c.copy() for c in cells]))
    edition.cells[2] = nbformat.v4.new_code_cell(
        'def second(f, x, epsilon=1e-4):\n    raise NotImplementedError("Task 1.1")'
    )
    for cell in edition.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    reference.cells[1].outputs = [_stream("2\n")]
    reference.cells[2].outputs = [_stream("an exercise's own output\n")]
    reference.cells[3].outputs = [_stream("stage 1.1 passes: 5 of 5 checks\n")]
    reference.cells[4].outputs = [_stream(f"def second(f, x, epsilon=1e-4):\n    {SOLUTION}\n")]
    reference.cells[5].outputs = [_png()]
    return nbformat.writes(edition), reference


def test_outputs_only_where_the_code_is_the_reference_and_tells_no_answer():
    edition, reference = notebooks()
    shown = nbformat.reads(outputs.with_outputs(edition, reference, [SOLUTION]), as_version=4)
    assert [out["text"] for out in shown.cells[1].outputs] == ["2\n"]  # a plain cell: its output
    assert shown.cells[2].outputs == []  # the exercise: its stub, and no output
    assert "NotImplementedError" in shown.cells[2].source
    assert shown.cells[3].outputs == []  # a grading cell is not shown
    assert shown.cells[4].outputs == []  # an output holding a solution line is left out
    assert outputs.figures(nbformat.writes(shown)) == 1  # the figure is kept, and counted


def test_a_notebook_whose_cells_differ_from_the_reference_is_refused():
    edition, reference = notebooks()
    reference.cells.append(nbformat.v4.new_code_cell("print(3)"))
    with pytest.raises(outputs.PluginError):
        outputs.with_outputs(edition, reference, [SOLUTION])


def test_grading_cells_are_recognised():
    assert outputs.is_grading_cell(nbformat.v4.new_code_cell('result = grading.grade("3.4")'))
    assert not outputs.is_grading_cell(nbformat.v4.new_code_cell("from torchlight import grading"))
    assert not outputs.is_grading_cell(nbformat.v4.new_markdown_cell("call `grading.grade(...)`"))
