"""Loading the configuration: small dataclasses filled from one TOML file plus environment variables.

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

from base_modules.real.config import RealModulesConfig
from base_modules.registry import SLOTS, BackendError, backend_name, slot_name
from vadar.config.sections import (AgentsConfig, ConfigError, EmbeddedLLMConfig, EvalConfig, LibraryConfig, LLMConfig,
                                   ModulesConfig, PathsConfig, RayConfig, ReasoningConfig, SandboxConfig)


@dataclass
class VadarConfig:
    llm: LLMConfig = field(default_factory=LLMConfig)
    embedded: EmbeddedLLMConfig = field(default_factory=EmbeddedLLMConfig)
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    agents: AgentsConfig = field(default_factory=AgentsConfig)
    reasoning: ReasoningConfig = field(default_factory=ReasoningConfig)
    library: LibraryConfig = field(default_factory=LibraryConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    ray: RayConfig = field(default_factory=RayConfig)
    paths: PathsConfig = field(default_factory=PathsConfig)
    modules: ModulesConfig = field(default_factory=ModulesConfig)
    vision: RealModulesConfig = field(default_factory=RealModulesConfig)


_SECTIONS: dict[str, str] = {
    "llm": "llm", "embedded": "embedded", "sandbox": "sandbox", "agents": "agents", "reasoning": "reasoning",
    "library": "library",
    "eval": "eval", "ray": "ray", "paths": "paths",
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
    config.llm.validate()
    config.embedded.validate()
    config.sandbox.validate()
    config.agents.validate()
    config.reasoning.validate()
    config.library.__post_init__()
    config.eval.validate()
    config.ray.validate()
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
            origin = f"{path} [{section}] {key}"
            if section == "modules" and key != "backend":
                _set_module(config.modules, key, raw, origin=origin)
            else:
                _set_field(target, key, raw, origin=origin)


def _apply_env(config: VadarConfig, env: Mapping[str, str]) -> None:
    for section in _SECTIONS:
        target = getattr(config, section)
        for f in dataclasses.fields(target):
            name = f"VADAR_{section.upper()}_{f.name.upper()}"
            if name in env:
                _set_field(target, f.name, env[name], origin=name)
    for slot in SLOTS:
        name = f"VADAR_MODULES_{slot.upper()}"
        if name in env:
            _set_module(config.modules, slot, env[name], origin=name)
    if "VADAR_HOME" in env:
        config.paths.home = Path(env["VADAR_HOME"])
    if config.llm.base_url and config.llm.api_key == LLMConfig.api_key and env.get("OPENAI_API_KEY"):
        config.llm.api_key = env["OPENAI_API_KEY"]


def _set_module(modules: ModulesConfig, slot: str, raw: object, *, origin: str) -> None:
    """`[modules] depth = "real"`: a per-slot backend, checked and normalised by the registry."""
    try:
        canonical = slot_name(slot)
        modules.per_module[canonical] = backend_name(str(raw), slot=canonical)
    except BackendError as exc:
        raise ConfigError(f"{origin}: {exc}") from None


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
