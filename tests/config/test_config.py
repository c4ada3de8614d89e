from pathlib import Path

import pytest

from vadar.config import ConfigError, LibraryConfig, VadarConfig, load_config


def test_defaults_need_no_file_or_env(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = load_config(env={})
    assert config == VadarConfig()
    assert config.llm.base_url is None  # the embedded server is the default
    assert config.paths.database == config.paths.home / "vadar.sqlite"


def test_toml_then_env_precedence(tmp_path):
    toml = tmp_path / "vadar.toml"
    toml.write_text(
        '[llm]\nbase_url = "http://localhost:8000/v1"\ntemperature = 0.3\n'
        "[sandbox]\ntimeout_s = 5\n[paths]\nhome = \"%s\"\n" % (tmp_path / "home")
    )
    env = {"VADAR_LLM_TEMPERATURE": "0.7", "VADAR_LLM_CACHE": "off", "VADAR_LLM_SEED": "none"}
    config = load_config(toml, env=env)
    assert config.llm.base_url == "http://localhost:8000/v1"
    assert config.llm.temperature == 0.7  # env wins over the file
    assert config.llm.cache is False
    assert config.llm.seed is None
    assert config.sandbox.timeout_s == 5.0
    assert config.paths.database == tmp_path / "home" / "vadar.sqlite"


def test_vadar_home_and_config_from_env(tmp_path):
    toml = tmp_path / "c.toml"
    toml.write_text("[embedded]\nn_ctx = 4096\nport = 8099\n")
    config = load_config(env={"VADAR_CONFIG": str(toml), "VADAR_HOME": str(tmp_path)})
    assert config.embedded.n_ctx == 4096 and config.embedded.port == 8099
    assert config.paths.llm_cache == tmp_path / "llm_cache.sqlite"


def test_openai_key_used_only_for_a_configured_endpoint():
    env = {"OPENAI_API_KEY": "sk-real", "VADAR_LLM_BASE_URL": "https://api.openai.com/v1"}
    assert load_config(env=env).llm.api_key == "sk-real"
    assert load_config(env={"OPENAI_API_KEY": "sk-real"}).llm.api_key != "sk-real"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[nope]\nx = 1\n", "unknown section [nope]"),
        ("[llm]\nmodle = 'x'\n", "unknown setting 'modle'"),
        ("[llm]\ntemperature = 'hot'\n", "[llm] temperature"),
        ("[llm\n", "not valid TOML"),
    ],
)
def test_bad_toml_names_the_setting(tmp_path, text, needle):
    toml = tmp_path / "bad.toml"
    toml.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(toml, env={})
    assert needle in str(info.value)
    assert str(toml) in str(info.value)


def test_bad_env_value_names_the_variable():
    with pytest.raises(ConfigError, match="VADAR_SANDBOX_MEMORY_MB"):
        load_config(env={"VADAR_SANDBOX_MEMORY_MB": "lots"})


def test_agent_limits_from_toml_and_env(tmp_path):
    toml = tmp_path / "vadar.toml"
    toml.write_text("[agents]\ntool_budget = 12\nprogram_attempts = 2\n")
    config = load_config(toml, env={"VADAR_AGENTS_PROGRAM_ATTEMPTS": "3"})
    assert (config.agents.tool_budget, config.agents.program_attempts) == (12, 3)
    assert config.agents.implementation_attempts == 5  # the paper's retry limit stays the default


def test_agent_limit_below_one_is_refused():
    with pytest.raises(ConfigError, match="agents.tool_budget must be between 1 and 64"):
        load_config(env={"VADAR_AGENTS_TOOL_BUDGET": "0"})


@pytest.mark.parametrize("value", ["1", "-2"])
def test_a_repetition_stop_of_one_or_less_is_refused_and_zero_turns_it_off(value: str):
    with pytest.raises(ConfigError, match="llm.stop_repeats must be 0 \\(off\\) or between 2 and 100"):
        load_config(env={"VADAR_LLM_STOP_REPEATS": value})
    assert load_config(env={"VADAR_LLM_STOP_REPEATS": "0"}).llm.stop_repeats == 0


def test_missing_config_file_is_reported():
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(Path("/nonexistent/vadar.toml"), env={})


def test_every_setting_is_documented():
    import dataclasses

    doc = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()
    config = VadarConfig()
    for section in ("llm", "embedded", "sandbox", "agents", "library", "eval", "ray", "paths", "modules", "vision"):
        assert f"## [{section}]" in doc
        for f in dataclasses.fields(getattr(config, section)):
            assert f"| `{f.name}` |" in doc, f"{section}.{f.name} is missing from docs/configuration.md"


@pytest.mark.parametrize(("admission", "per_batch", "on"), [
    ("labelled", 3, True), ("labelled", 0, False), ("unlabelled", 3, False), ("off", 3, False)])
def test_shape_route_needs_gold_answers_and_a_slot(admission, per_batch, on):
    """One predicate decides whether builds try question-shape helpers (and whether steps wait for them)."""
    assert LibraryConfig(admission=admission, shape_helpers_per_batch=per_batch).shape_route is on
