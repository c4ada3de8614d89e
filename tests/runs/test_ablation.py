import json

import pytest

from vadar.runs.ablation import GridError, default_grid, parse_grid_entry, run_ablation, write_report
from vadar.config import VadarConfig
from vadar.llm.doubles import ScriptedLLM
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session


def test_default_grid():
    names = [entry.name for entry in default_grid()]
    assert names == ["all-real", "all-oracle", "real+loc=oracle", "real+depth=oracle", "real+vqa=oracle",
                     "real+same_object=oracle", "real+get_2D_object_size=oracle"]
    single = default_grid()[3]
    assert single.backends == {"loc": "real", "depth": "oracle", "vqa": "real", "same_object": "real",
                               "get_2D_object_size": "real"}


@pytest.mark.parametrize("text", ["", "depth=oracle", "real+depht=oracle", "real+depth"])
def test_bad_grid_entries(text):
    with pytest.raises(GridError):
        parse_grid_entry(text)


def test_grid_entry_names_are_canonical():
    assert parse_grid_entry("oracle+loc=real, vqa=myplugin").name == "oracle+loc=real,vqa=myplugin"
    assert parse_grid_entry("real+loc=real").name == "all-real"


def test_ablation_runs_every_configuration_and_writes_outputs(tmp_path, fake_real_modules):
    config = VadarConfig()
    config.paths.home = tmp_path / "home"
    program = "```python\nfinal_result = len(loc(image, 'cylinder'))\n```"
    llm = ScriptedLLM([lambda messages: program] * 10)
    grid = [parse_grid_entry("real"), parse_grid_entry("oracle"), parse_grid_entry("real+loc=oracle")]
    with open_session(config, llm=llm) as session:
        report = run_ablation(session, DataSelection(limit=1), tmp_path / "abl", grid, show_progress=False)
    totals = {entry.name: summary.metrics.total for entry, summary in zip(report.entries, report.summaries)}
    assert totals == {"all-real": 0.0, "all-oracle": 1.0, "real+loc=oracle": 1.0}
    md, csv_path, png = write_report(report, tmp_path / "abl")
    assert "| all-real | 0.0000 | 0.0000 |" in md.read_text()
    header = csv_path.read_text().splitlines()[0]
    assert header.startswith("configuration,loc,depth,vqa,same_object,get_2D_object_size,int,total")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    result = json.loads((tmp_path / "abl" / "all-real" / "results.jsonl").read_text())
    assert result["answer"] == 1 and result["gold"] == "2"  # the half-blind detector found one of two


def test_cli_rejects_a_bad_grid_before_any_work(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from vadar.cli import app

    monkeypatch.setenv("VADAR_HOME", str(tmp_path))
    result = CliRunner().invoke(app, ["ablate", "--grid", "real+depht=oracle", "--out", str(tmp_path / "a")])
    assert result.exit_code == 2 and "depht" in result.output
    assert not (tmp_path / "a").exists()
