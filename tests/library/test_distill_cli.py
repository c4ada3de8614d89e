"""`vadar library distill`, `list` and `show` on a library with right build programs."""

from __future__ import annotations

from typer.testing import CliRunner

from api_store import ApiStore
from omni3d_bench import sample_path
from omni3d_bench.datasets import load_dataset
from test_distill import NAMED, record_programs
from vadar.cli import app
from vadar.runs.prepare import oracle_modules


def test_distill_list_and_show(tmp_path, server, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("VADAR_HOME", str(home))
    monkeypatch.setenv("VADAR_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("VADAR_LLM_MODEL", "test-model")
    monkeypatch.setenv("COLUMNS", "250")  # the list is a table: keep each name on one line
    dataset = load_dataset(sample_path())
    home.mkdir()
    with ApiStore(home / "vadar.sqlite") as store:
        record_programs(store, dataset, oracle_modules(dataset))
    server.script = [{"content": NAMED}]
    runner = CliRunner()
    result = runner.invoke(app, ["library", "distill", "--data", str(sample_path())])
    assert result.exit_code == 0, result.output
    assert "distilled 1 helpers from 4 right programs" in result.output and "_first_object_depth" in result.output
    listed = runner.invoke(app, ["library", "list"])
    assert "_first_object_depth" in listed.output and "admitted (distilled)" in listed.output
    shown = runner.invoke(app, ["library", "show", "_first_object_depth"])
    assert '"reproduced": 3' in shown.output and '"tokens_saved"' in shown.output
