"""Loading the configuration: small dataclasses filled from one TOML file, environment variables and
`section.field=value` assignments, then checked in one pass.

Nothing is read at import time. Callers build a `VadarConfig` with `load_config()` (or by hand in
tests, then `check_config()`) and pass it down. Precedence, lowest to highest: dataclass defaults,
the TOML file (`--config`, else `$VADAR_CONFIG`, else `vadar.toml` in the working directory if
present), environment variables named `VADAR_<SECTION>_<FIELD>` (for example
`VADAR_LLM_BASE_URL`; the home is `VADAR_HOME`), then assignments (`--set llm.temperature=0.2`).
A command's named flags (`--jobs`, `--samples`) come last.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from base_modules.real.config import RealModulesConfig
from base_modules.registry import SLOTS
from vadar.config.checks import ConfigError, check_section, env_name
from vadar.config.sections import (AgentsConfig, EmbeddedLLMConfig, EvalConfig, LibraryConfig, LLMConfig,
                                   ModulesConfig, PathsConfig, RayConfig, ReasoningConfig, SandboxConfig)
from vadar.config.values import Origins, set_field, set_module
from vadar.config.vision import VISION_CHECKS


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


SECTIONS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(VadarConfig))
"""The sections, as named in TOML (`[llm]`), variables (`VADAR_LLM_...`) and `--set` (`llm.`)."""

RETIRED_VARIABLES: Mapping[str, str] = {
    "VADAR_PATHS_HOME": "VADAR_PATHS_HOME is not read: set VADAR_HOME, the one variable of paths.home",
}
"""Variables the generic naming would suggest that are refused, each with its one line."""


def check_config(config: VadarConfig, origins: Mapping[tuple[str, str], str] | None = None) -> None:
    """Every setting of every section against its type and declared checks; the first refusal is raised.
    (`[vision]` keeps its checks beside the others, its dataclass beside the modules it configures.)"""
    for section in SECTIONS:
        values = getattr(config, section)
        checks = VISION_CHECKS if section == "vision" else type(values).CHECKS
        check_section(section, values, checks, origins)


def load_config(path: Path | None = None, env: Mapping[str, str] | None = None,
                assignments: Sequence[str] = ()) -> VadarConfig:
    """Build the configuration from defaults, an optional TOML file, the environment and
    `section.field=value` assignments (`--set`), and check it."""
    env = os.environ if env is None else env
    config = VadarConfig()
    origins: Origins = {}
    toml_path = path or (Path(env["VADAR_CONFIG"]) if env.get("VADAR_CONFIG") else None)
    if toml_path is None and Path("vadar.toml").is_file():
        toml_path = Path("vadar.toml")
    if toml_path is not None:
        _apply_toml(config, toml_path, origins)
    _apply_env(config, env, origins)
    apply_assignments(config, assignments, origins)
    check_config(config, origins)
    return config


def apply_assignments(config: VadarConfig, assignments: Sequence[str], origins: Origins | None = None) -> None:
    """`llm.temperature=0.2` settings (the command line's `--set`), coerced like variables; not checked here."""
    origins = {} if origins is None else origins
    for text in assignments:
        key, sep, value = text.partition("=")
        section, dot, name = key.strip().partition(".")
        if not sep or not dot or not section or not name.strip():
            raise ConfigError(f"--set {text!r}: expected SECTION.FIELD=VALUE, e.g. --set llm.temperature=0.2")
        origin = f"--set {key.strip()}"
        if section not in SECTIONS:
            raise ConfigError(f"{origin}: unknown section '{section}'; known: {', '.join(SECTIONS)}")
        _assign(config, section, name.strip(), value, origin, origins)


def _assign(config: VadarConfig, section: str, key: str, raw: object, origin: str, origins: Origins) -> None:
    if section == "modules":
        set_module(config.modules, key, raw, origin=origin, origins=origins)
    else:
        set_field(section, getattr(config, section), key, raw, origin=origin, origins=origins)


def _apply_toml(config: VadarConfig, path: Path, origins: Origins) -> None:
    if not path.is_file():
        raise ConfigError(f"config file {path} does not exist (set by --config or VADAR_CONFIG)")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    for section, values in data.items():
        if section not in SECTIONS or not isinstance(values, dict):
            raise ConfigError(f"{path}: unknown section [{section}]; known: {', '.join(SECTIONS)}")
        for key, raw in values.items():
            _assign(config, section, key, raw, f"{path} [{section}] {key}", origins)


def _apply_env(config: VadarConfig, env: Mapping[str, str], origins: Origins) -> None:
    for name, line in RETIRED_VARIABLES.items():
        if name in env:
            raise ConfigError(line)
    for section in SECTIONS:
        for f in dataclasses.fields(getattr(config, section)):
            name = env_name(section, f.name)
            if name in env:
                _assign(config, section, f.name, env[name], name, origins)
    for slot in SLOTS:  # one slot's variable wins over VADAR_MODULES_PER_MODULE for that slot
        name = f"VADAR_MODULES_{slot.upper()}"
        if name in env:
            set_module(config.modules, slot, env[name], origin=name, origins=origins)
    if config.llm.base_url and config.llm.api_key == LLMConfig.api_key and env.get("OPENAI_API_KEY"):
        config.llm.api_key = env["OPENAI_API_KEY"]
        origins[("llm", "api_key")] = "OPENAI_API_KEY"
