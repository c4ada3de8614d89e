"""Where settings come from: `--set` assignments above TOML and variables, the per-module backends
variable, and the one name of the home."""

from __future__ import annotations

from pathlib import Path

import pytest

from base_modules.registry import SLOTS
from vadar.config import ConfigError, load_config


def test_set_wins_over_the_environment_which_wins_over_the_file(tmp_path: Path) -> None:
    toml = tmp_path / "vadar.toml"
    toml.write_text("[llm]\ntemperature = 0.3\nmax_tokens = 512\nseed = 4\n[sandbox]\ntimeout_s = 5\n")
    env = {"VADAR_LLM_TEMPERATURE": "0.5", "VADAR_LLM_MAX_TOKENS": "256"}
    config = load_config(toml, env=env, assignments=["llm.temperature=0.7", "llm.seed=none", "llm.cache=off"])
    assert (config.llm.temperature, config.llm.max_tokens, config.llm.seed) == (0.7, 256, None)
    assert config.llm.cache is False and config.sandbox.timeout_s == 5.0
    assert load_config(env={}, assignments=["sandbox.timeout_s=9", "sandbox.timeout_s=12"]).sandbox.timeout_s == 12


def test_set_reaches_every_section_and_the_modules(tmp_path: Path) -> None:
    config = load_config(env={}, assignments=[
        f"paths.home={tmp_path}", "vision.device=cpu", "modules.backend=Real", "modules.depth=oracle",
        "modules.per_module=vqa=oracle,loc=oracle", "reasoning.formalize=yes"])
    assert config.paths.database == tmp_path / "vadar.sqlite" and config.vision.device == "cpu"
    assert config.modules.resolved() == {**dict.fromkeys(SLOTS, "real"), "depth": "oracle", "vqa": "oracle",
                                         "loc": "oracle"}
    assert config.reasoning.formalize is True


@pytest.mark.parametrize(("assignment", "message"), [
    ("llm.temprature=0.2", "--set llm.temprature: unknown setting 'temprature' in [llm]; known: base_url, api_key, "
                           "model, temperature,"),
    ("lm.temperature=0.2", "--set lm.temperature: unknown section 'lm'; known: llm, embedded, sandbox,"),
    ("modules.dpeth=real", "--set modules.dpeth: unknown module 'dpeth'; [modules] takes backend, per_module or a "
                           "module: loc, depth,"),
    ("llm.temperature", "--set 'llm.temperature': expected SECTION.FIELD=VALUE"),
    ("temperature=0.2", "--set 'temperature=0.2': expected SECTION.FIELD=VALUE"),
    ("sandbox.memory_mb=lots", "--set sandbox.memory_mb: invalid literal for int()"),
])
def test_a_bad_assignment_is_one_line_listing_what_is_known(assignment: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(env={}, assignments=[assignment])
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_per_module_backends_are_settable_from_their_variable(tmp_path: Path) -> None:
    config = load_config(env={"VADAR_MODULES_PER_MODULE": "depth=real, VQA=Real"})
    assert config.modules.per_module == {"depth": "real", "vqa": "real"}
    config = load_config(env={"VADAR_MODULES_PER_MODULE": "depth=real,vqa=real", "VADAR_MODULES_DEPTH": "oracle"})
    assert config.modules.resolved()["depth"] == "oracle" and config.modules.resolved()["vqa"] == "real"
    toml = tmp_path / "vadar.toml"
    toml.write_text('[modules]\nper_module = {depth = "real"}\nloc = "real"\n')
    assert load_config(toml, env={"VADAR_MODULES_PER_MODULE": "vqa=real"}).modules.per_module == {
        "depth": "real", "loc": "real", "vqa": "real"}


@pytest.mark.parametrize(("value", "message"), [
    ("dpth=real", "VADAR_MODULES_PER_MODULE: unknown module 'dpth'; modules are loc, depth"),
    ("depth", "VADAR_MODULES_PER_MODULE: 'depth': expected SLOT=BACKEND"),
    ("depth=", "VADAR_MODULES_PER_MODULE: 'depth=': expected SLOT=BACKEND"),
    (" , ", "VADAR_MODULES_PER_MODULE: expected SLOT=BACKEND pairs separated by commas"),
])
def test_a_bad_per_module_variable_is_one_line(value: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(env={"VADAR_MODULES_PER_MODULE": value})
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_the_home_has_one_variable(tmp_path: Path) -> None:
    assert load_config(env={"VADAR_HOME": str(tmp_path)}).paths.home == tmp_path
    for env in ({"VADAR_PATHS_HOME": str(tmp_path)}, {"VADAR_PATHS_HOME": "/a", "VADAR_HOME": str(tmp_path)}):
        with pytest.raises(ConfigError) as info:
            load_config(env=env)
        assert str(info.value) == "VADAR_PATHS_HOME is not read: set VADAR_HOME, the one variable of paths.home"
    toml = tmp_path / "vadar.toml"
    toml.write_text(f'[paths]\nhome = "{tmp_path / "from-file"}"\n')
    assert load_config(toml, env={"VADAR_HOME": str(tmp_path)}).paths.home == tmp_path  # the variable wins
