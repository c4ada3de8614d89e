"""examples/quickstart.ipynb, executed cell by cell in a Jupyter kernel (nbclient), against a scripted
OpenAI-compatible endpoint on 127.0.0.1 that the notebook reaches through `VADAR_LLM_BASE_URL`, as a
user would point it at any endpoint: no model is needed, and the notebook itself is unchanged. It is
saved with the outputs of a run against the embedded model, which are checked as they stand."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed (the 'dev' extra)")
nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed (the 'dev' extra)")
pytest.importorskip("ipykernel", reason="ipykernel is not installed (the 'dev' extra)")

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "quickstart.ipynb"
PROGRAM = "```python\nfinal_result = len(loc(image, 'cylinder'))\n```"
OTHERS = ("```python\nfinal_result = len(loc(image, 'things'))\n```",  # "How many things are left of ...?"
          "```python\nfinal_result = vqa(image, 'What shape is this object?', loc(image, 'cyan object')[0])\n```")
"""Programs for the evaluation's second and third questions, of the kind of answer each asks."""


def outputs(cell) -> tuple[str, dict[str, str]]:
    """What a cell printed, and its result by MIME type."""
    printed = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
    shown = next((o.data for o in cell.outputs if o.output_type in ("execute_result", "display_data")), {})
    return printed, dict(shown)


def test_the_example_notebook_is_saved_with_the_outputs_of_a_real_run():
    """A reader on a code host sees what the notebook gave with the embedded model: every code
    cell ran, in order, without an error, and the solution and the evaluation show their pages."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [cell.execution_count for cell in code] == list(range(1, len(code) + 1))
    assert not any(o.output_type == "error" for cell in code for o in cell.outputs)
    opened, solved, shown, evaluated, library, closed = (outputs(cell) for cell in code)
    assert "embedded model" in opened[1]["text/plain"]
    assert "embedded LLM ready" in solved[0] and "answer:" in solved[0] and "loc(" in solved[0]
    assert shown[1]["text/plain"].startswith("Solution(") and shown[1]["text/html"].startswith("<iframe srcdoc=")
    assert evaluated[0].count(" gold ") == 3 and evaluated[1]["text/html"].startswith("<iframe srcdoc=")
    assert "_count" in library[1]["text/plain"] and closed == ("", {})


def test_the_example_notebook_runs_and_shows_its_results(server, tmp_path, monkeypatch):
    server.script.extend({"content": program} for program in (PROGRAM, *OTHERS))
    monkeypatch.setenv("VADAR_LLM_BASE_URL", server.base_url)
    for name in ("VADAR_CONFIG", "VADAR_HOME"):
        monkeypatch.delenv(name, raising=False)
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    for cell in notebook.cells:  # run afresh: the saved outputs are the embedded model's
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbclient.NotebookClient(notebook, timeout=60, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    opened, solved, shown, evaluated, library, closed = (outputs(cell) for cell in code)

    assert server.base_url in opened[1]["text/plain"] and "(not started)" in opened[1]["text/plain"]
    assert "answer: 2" in solved[0] and "final_result = len(loc(image, 'cylinder'))" in solved[0]
    assert "loc('cylinder') -> [[" in solved[0]
    assert shown[1]["text/plain"].startswith("Solution(answer=2, 1 module calls, 1 LLM reply")
    assert shown[1]["text/html"].startswith("<iframe srcdoc=") and "How many cylinders are there?" in shown[1]["text/html"]
    assert evaluated[0].count(" gold ") == 3 and "'How many cylinders are there?' -> 2 gold 2" in evaluated[0]
    assert "<error>" not in evaluated[0]
    assert evaluated[1]["text/plain"].startswith("Evaluation(runs/sample-sample-static-api: static-api, 3 questions")
    assert "q-0" in evaluated[1]["text/html"] and (tmp_path / "runs/sample-sample-static-api/results.jsonl").is_file()
    assert "_count" in library[1]["text/plain"] and (tmp_path / "vadar-home").is_dir()
    assert closed == ("", {})
    # one program per question; the first evaluated one is the question solved above, answered from
    # the response cache under vadar-home
    assert len(server.requests) == 3
