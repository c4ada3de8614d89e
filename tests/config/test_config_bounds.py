"""Every count has a ceiling and every key can be sent: a value that would break every program, or
be blamed on the endpoint after five tries, is refused at load in one line naming the setting."""

from __future__ import annotations

import dataclasses
import math
import typing

import pytest

from vadar.config import SECTIONS, ConfigError, VadarConfig, check_config, load_config
from vadar.config.checks import Range
from vadar.config.vision import VISION_CHECKS


def _int_fields() -> list[tuple[str, str]]:
    config = VadarConfig()
    found = []
    for section in SECTIONS:
        values = getattr(config, section)
        hints = typing.get_type_hints(type(values))
        for field in dataclasses.fields(values):
            hint = hints[field.name]
            if hint is int or (int in typing.get_args(hint) and bool not in typing.get_args(hint)):
                found.append((section, field.name))
    return found


def _checks(section: str) -> typing.Mapping[str, object]:
    return VISION_CHECKS if section == "vision" else type(getattr(VadarConfig(), section)).CHECKS


def test_the_walk_finds_the_counts() -> None:
    assert {("sandbox", "memory_mb"), ("library", "search_samples"), ("agents", "program_attempts"),
            ("vision", "max_detections"), ("reasoning", "samples")} <= set(_int_fields())


@pytest.mark.parametrize(("section", "name"), _int_fields())
def test_every_whole_number_setting_has_a_ceiling(section: str, name: str) -> None:
    check = _checks(section).get(name)
    assert isinstance(check, Range) and check.high is not None and math.isfinite(check.high), \
        f"{section}.{name} has no upper bound"
    config = VadarConfig()
    too_many = int(check.high) + 1
    setattr(getattr(config, section), name, too_many)
    with pytest.raises(ConfigError, match=rf"^{section}\.{name} must be .*, got {too_many} "):
        check_config(config)


@pytest.mark.parametrize(("name", "value", "message"), [
    ("VADAR_SANDBOX_MEMORY_MB", str(2**43),
     "sandbox.memory_mb must be between 128 and 1048576 (1 TiB), got 8796093022208"),
    ("VADAR_SANDBOX_MEMORY_MB", "64", "sandbox.memory_mb must be between 128 and 1048576"),
    ("VADAR_LIBRARY_SEARCH_SAMPLES", str(10**12), "library.search_samples must be between 1 and 64"),
    ("VADAR_LIBRARY_SEARCH_ROUNDS", str(10**12), "library.search_rounds must be between 1 and 16"),
    ("VADAR_AGENTS_PROGRAM_ATTEMPTS", str(10**12), "agents.program_attempts must be between 1 and 20"),
    ("VADAR_AGENTS_PROGRAM_SAME_ERROR_LIMIT", str(10**12), "agents.program_same_error_limit must be between 1 and 20"),
    ("VADAR_EVAL_JOBS", str(10**6), "eval.jobs must be a positive number up to 1024"),
])
def test_a_count_past_its_ceiling_is_refused_in_one_line(name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(env={name: value})
    text = str(info.value)
    assert text.startswith(message) and name in text and "\n" not in text


@pytest.mark.parametrize(("name", "value"), [
    ("VADAR_SANDBOX_MEMORY_MB", "128"), ("VADAR_SANDBOX_MEMORY_MB", "1048576"), ("VADAR_LIBRARY_SEARCH_SAMPLES", "64"),
    ("VADAR_AGENTS_PROGRAM_ATTEMPTS", "20"),
])
def test_a_count_at_its_ceiling_is_accepted(name: str, value: str) -> None:
    load_config(env={name: value})


@pytest.mark.parametrize(("key", "fault"), [
    ("sk-abc\ndef", "a line break"), ("sk-clé", "a non-ASCII character"), ("   ", "not only spaces"),
    ("", "not only spaces"), ("sk-abc\t", "a line break or another control character"),
    (" sk-abc", "without spaces at either end"),
])
def test_a_key_that_cannot_be_sent_is_refused_at_load_without_showing_it(key: str, fault: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(env={"VADAR_LLM_API_KEY": key})
    text = str(info.value)
    assert text.startswith("llm.api_key must be printable ASCII text") and fault in text
    assert "VADAR_LLM_API_KEY" in text and "\n" not in text and "the value is not shown" in text
    assert "sk-" not in text.replace("sk-no-key-needed", "") and "clé" not in text


def test_a_key_read_from_openai_api_key_is_checked_and_named() -> None:
    env = {"VADAR_LLM_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "sk-real\n"}
    with pytest.raises(ConfigError, match=r"llm\.api_key must be .*set by OPENAI_API_KEY"):
        load_config(env=env)


def test_the_vision_key_is_checked_too() -> None:
    with pytest.raises(ConfigError, match=r"^vision\.vqa_api_key must be printable ASCII"):
        load_config(env={"VADAR_VISION_VQA_API_KEY": "clé"})


def test_ordinary_keys_pass() -> None:
    assert load_config(env={"VADAR_LLM_API_KEY": "sk-proj-AbC_123-xyz.="}).llm.api_key == "sk-proj-AbC_123-xyz.="
