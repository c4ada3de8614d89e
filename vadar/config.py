"""Explicit configuration: small dataclasses filled from one TOML file plus environment variables.

Nothing is read at import time. Callers build a `VadarConfig` with `load_config()` (or by hand in
tests) and pass it down. Precedence, lowest to highest: dataclass defaults, the TOML file
(`--config`, else `$VADAR_CONFIG`, else `vadar.toml` in the working directory if present), then
environment variables named `VADAR_<SECTION>_<FIELD>` (for example `VADAR_LLM_BASE_URL`).
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from base_modules.real.config import RealModulesConfig


class ConfigError(ValueError):
    """A configuration value is missing or malformed; the message names the setting."""


def default_home() -> Path:
    """Where vadar keeps its database, caches and assembled model by default."""
    return Path(platformdirs.user_data_dir("vadar", appauthor=False))


@dataclass
class LLMConfig:
    """How to reach the chat-completions endpoint. `base_url=None` means: start the embedded one."""

    base_url: str | None = None
    api_key: str = "sk-no-key-needed"
    model: str = "qwen2.5-coder-1.5b-instruct"
    temperature: float = 0.0
    max_tokens: int = 1024
    seed: int | None = 0
    timeout_s: float = 600.0  # the whole call, retries included
    inactivity_timeout_s: float = 180.0  # no byte for this long: that attempt failed
    max_retries: int = 4
    cache: bool = True
    stream: bool = True


@dataclass
class EmbeddedLLMConfig:
    """The offline llama.cpp server vadar starts on 127.0.0.1 when no endpoint is configured."""

    model_path: Path | None = None  # an explicit .gguf; default: assembled from the PyPI parts
    host: str = "127.0.0.1"
    port: int | None = None  # None: pick a free port
    n_ctx: int = 8192
    n_threads: int | None = None  # None: all cores
    n_parallel: int = 1
    startup_timeout_s: float = 180.0


@dataclass
class SandboxConfig:
    """Limits for every piece of generated code."""

    timeout_s: float = 30.0
    memory_mb: int = 2048
    max_stdout_chars: int = 10_000


@dataclass
class AgentsConfig:
    """Attempt limits of the agents; the 5 implementation attempts follow the VADAR paper."""

    signature_attempts: int = 3
    max_new_functions: int = 5
    implementation_attempts: int = 5
    program_attempts: int = 5
    tool_budget: int = 8

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Every limit must be at least 1; a zero would silently disable an agent."""
        for f in dataclasses.fields(self):
            if getattr(self, f.name) < 1:
                raise ConfigError(f"agents.{f.name} must be at least 1, got {getattr(self, f.name)}")


@dataclass
class PathsConfig:
    """Where persistent state lives. Empty paths are derived from `home`."""

    home: Path = field(default_factory=default_home)
    db_path: Path | None = None
    llm_cache_path: Path | None = None
    model_cache_dir: Path | None = None

    @property
    def database(self) -> Path:
        return self.db_path or self.home / "vadar.sqlite"

    @property
    def llm_cache(self) -> Path:
        return self.llm_cache_path or self.home / "llm_cache.sqlite"

    @property
    def model_cache(self) -> Path:
        return self.model_cache_dir or self.home / "models"


MODULE_SLOTS: tuple[str, ...] = ("loc", "depth", "vqa", "same_object", "get_2D_object_size")


@dataclass
class ModulesConfig:
    """Backend per perception module: `oracle`, `real`, or the name of an entry-point plugin."""

    backend: str = "oracle"
    loc: str | None = None
    depth: str | None = None
    vqa: str | None = None
    same_object: str | None = None
    get_2D_object_size: str | None = None

    def spec(self) -> dict[str, str]:
        """Per-slot choices that differ from `backend`."""
        return {slot: value for slot in MODULE_SLOTS if (value := getattr(self, slot))}

    def resolved(self, overrides: Mapping[str, str] | None = None) -> dict[str, str]:
        """The backend of every slot after per-slot settings and `overrides`."""
        chosen = {slot: self.backend for slot in MODULE_SLOTS} | self.spec() | dict(overrides or {})
        return {slot: chosen[slot] for slot in MODULE_SLOTS}


@dataclass
class VadarConfig:
    llm: LLMConfig = field(default_factory=LLMConfig)
    embedded: EmbeddedLLMConfig = field(default_factory=EmbeddedLLMConfig)
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    agents: AgentsConfig = field(default_factory=AgentsConfig)
    paths: PathsConfig = field(default_factory=PathsConfig)
    modules: ModulesConfig = field(default_factory=ModulesConfig)
    vision: RealModulesConfig = field(default_factory=RealModulesConfig)


_SECTIONS: dict[str, str] = {
    "llm": "llm", "embedded": "embedded", "sandbox": "sandbox", "agents": "agents", "paths": "paths",
    "modules": "modules", "vision": "vision",
}


def load_config(path: Path | None = None, env: Mapping[str, str] | None = None) -> VadarConfig:
    """Build the configuration from defaults, an optional TOML file and the environment."""
    env = os.environ if env is None else env
    config = VadarConfig()
    toml_path = path or (Path(env["VADAR_CONFIG"]) if env.get("VADAR_CONFIG") else None)
    if toml_path is None and Path("vadar.toml").is_file():
        toml_path = Path("vadar.toml")
    if toml_path is not None:
        _apply_toml(config, toml_path)
    _apply_env(config, env)
    config.agents.validate()
    return config


def _apply_toml(config: VadarConfig, path: Path) -> None:
    if not path.is_file():
        raise ConfigError(f"config file {path} does not exist (set by --config or VADAR_CONFIG)")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    for section, values in data.items():
        if section not in _SECTIONS or not isinstance(values, dict):
            raise ConfigError(f"{path}: unknown section [{section}]; known: {', '.join(_SECTIONS)}")
        target = getattr(config, section)
        for key, raw in values.items():
            _set_field(target, key, raw, origin=f"{path} [{section}] {key}")


def _apply_env(config: VadarConfig, env: Mapping[str, str]) -> None:
    for section in _SECTIONS:
        target = getattr(config, section)
        for f in dataclasses.fields(target):
            name = f"VADAR_{section.upper()}_{f.name.upper()}"
            if name in env:
                _set_field(target, f.name, env[name], origin=name)
    if "VADAR_HOME" in env:
        config.paths.home = Path(env["VADAR_HOME"])
    if config.llm.base_url and config.llm.api_key == LLMConfig.api_key and env.get("OPENAI_API_KEY"):
        config.llm.api_key = env["OPENAI_API_KEY"]


def _set_field(target: object, key: str, raw: object, *, origin: str) -> None:
    fields = {f.name: f for f in dataclasses.fields(target)}  # type: ignore[arg-type]
    if key not in fields:
        raise ConfigError(f"{origin}: unknown setting '{key}'; known: {', '.join(fields)}")
    hints = typing.get_type_hints(type(target))
    setattr(target, key, _coerce(raw, hints[key], origin))


def _coerce(raw: object, hint: object, origin: str) -> object:
    args = typing.get_args(hint)
    optional = (typing.get_origin(hint) in (typing.Union, types.UnionType)) and type(None) in args
    base = next((a for a in args if a is not type(None)), hint) if optional else hint
    if optional and (raw is None or (isinstance(raw, str) and raw.strip().lower() in ("", "none", "null"))):
        return None
    try:
        if base is bool:
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError(f"expected a boolean, got {raw!r}")
        if base is Path:
            return Path(str(raw)).expanduser()
        if base in (int, float, str):
            return base(raw)  # type: ignore[operator]
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{origin}: {exc}") from exc
    raise ConfigError(f"{origin}: unsupported setting type {hint}")
