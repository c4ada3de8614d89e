"""Module slots and backends are resolved in one place: config, CLI, ablation and pipeline agree."""

from __future__ import annotations

import pytest

from base_modules.registry import SLOTS, BackendError, parse_assignment, resolve
from vadar.runs.ablation import GridError, parse_grid_entry
from vadar.config import ConfigError, load_config
from vadar.runs.methods import make_answerer
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session
from vadar.llm.doubles import ScriptedLLM


def test_resolve_is_case_insensitive_and_later_choices_win():
    chosen = resolve("Oracle", {"Depth": "REAL"}, {"vqa": " Plugin "})
    assert chosen == {"loc": "oracle", "depth": "real", "vqa": "plugin", "same_object": "oracle",
                      "get_2D_object_size": "oracle"}
    assert list(chosen) == list(SLOTS)
    assert parse_assignment("GET_2d_object_size=Real") == ("get_2D_object_size", "real")


@pytest.mark.parametrize("bad", [{"detph": "real"}, {"depth": " "}])
def test_one_error_for_a_misspelt_slot_or_empty_backend(bad):
    with pytest.raises(BackendError, match="unknown module 'detph'; modules are loc, depth|empty backend"):
        resolve("oracle", bad)


def test_toml_and_env_per_module_settings(tmp_path):
    toml = tmp_path / "v.toml"
    toml.write_text('[modules]\nbackend = "Oracle"\nDepth = "Real"\n')
    config = load_config(toml, env={"VADAR_MODULES_VQA": "myplugin"})
    assert config.modules.resolved() == {**dict.fromkeys(SLOTS, "oracle"), "depth": "real", "vqa": "myplugin"}
    toml.write_text('[modules]\ndpeth = "real"\n')
    with pytest.raises(ConfigError, match="unknown module 'dpeth'"):
        load_config(toml, env={})


def test_an_oracle_backend_in_any_case_is_the_oracle(tmp_path, monkeypatch):
    """`[modules] backend = "Oracle"`: scenes are checked, `direct` reads them, no run-name suffix."""
    toml = tmp_path / "v.toml"
    toml.write_text('[modules]\nbackend = "Oracle"\n')
    config = load_config(toml, env={"VADAR_HOME": str(tmp_path / "home")})
    prepared = DataSelection(limit=1).prepare(config)
    assert set(prepared.backends.values()) == {"oracle"}
    from vadar.app.run_dirs import modules_label
    assert modules_label(prepared.backends) == ""
    llm = ScriptedLLM(["<answer>2</answer>"])
    with open_session(config, llm=llm) as session:
        answer, _ = make_answerer("direct", session, prepared)
        answer(prepared.questions[0])
    system = llm.calls[0][0]["content"]
    assert "Scene annotations" in system  # the annotations, not the image
    assert isinstance(llm.calls[0][1]["content"], str)


def test_grid_entries_use_the_same_rules():
    entry = parse_grid_entry("Real+Depth=Oracle")
    assert entry.name == "real+depth=oracle" and entry.backends["depth"] == "oracle"
    assert entry.backends["loc"] == "real"
    with pytest.raises(GridError, match="unknown module 'dpth'"):
        parse_grid_entry("real+dpth=oracle")
