"""Limits and timeouts are validated when the configuration is loaded: one clear line."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from sandbox_namespace import NAMESPACE
from vadar.cli import app
from vadar.config import ConfigError, load_config
from vadar.sandbox import Sandbox

BAD = [
    ("VADAR_SANDBOX_MEMORY_MB", "-5", "sandbox.memory_mb must be between 128 and 1048576 (1 TiB)"),
    ("VADAR_SANDBOX_MEMORY_MB", "0", "sandbox.memory_mb must be between 128 and 1048576 (1 TiB)"),
    ("VADAR_SANDBOX_TIMEOUT_S", "-1", "sandbox.timeout_s must be a positive number"),
    ("VADAR_SANDBOX_TIMEOUT_S", "nan", "sandbox.timeout_s must be a positive number"),
    ("VADAR_SANDBOX_MAX_STDOUT_CHARS", "-3", "sandbox.max_stdout_chars must be between 0 and 1000000"),
    ("VADAR_LLM_TIMEOUT_S", "0", "llm.timeout_s must be a positive number"),
    ("VADAR_LLM_INACTIVITY_TIMEOUT_S", "-2", "llm.inactivity_timeout_s must be a positive number"),
    ("VADAR_LLM_MAX_TOKENS", "0", "llm.max_tokens must be a positive number"),
    ("VADAR_LLM_MAX_RETRIES", "-1", "llm.max_retries must be between 0 and 20"),
    ("VADAR_EMBEDDED_STARTUP_TIMEOUT_S", "-1", "embedded.startup_timeout_s must be a positive number"),
]


@pytest.mark.parametrize("name, value, message", BAD)
def test_a_bad_limit_is_refused_at_load(name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)) as info:
        load_config(env={name: value})
    assert name in str(info.value) and "\n" not in str(info.value)


def test_a_bad_limit_in_toml_is_refused(tmp_path) -> None:
    path = tmp_path / "vadar.toml"
    path.write_text("[sandbox]\nmemory_mb = -5\n")
    with pytest.raises(ConfigError, match=r"sandbox.memory_mb must be between 128 and 1048576 \(1 TiB\), got -5"):
        load_config(path, env={})


@pytest.mark.parametrize("name, value, message", BAD[:3])
def test_the_cli_says_it_in_one_line(tmp_path, name: str, value: str, message: str) -> None:
    result = CliRunner().invoke(app, ["library", "list"], env={"VADAR_HOME": str(tmp_path), name: value})
    assert result.exit_code != 0 and message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize("limits", [{"timeout_s": -1}, {"timeout_s": 0}, {"memory_mb": -5}, {"memory_mb": 0}])
def test_the_sandbox_refuses_limits_that_are_not_positive(limits) -> None:
    with Sandbox() as box, pytest.raises(ValueError, match="sandbox limits must be positive"):
        box.execute("final_result = [0] * 10**9", NAMESPACE, **limits)
