"""Explicit configuration: small dataclasses (`sections`, with the checks their values must pass,
`checks`) filled from one TOML file, environment variables and `--set` assignments (`loading`,
`values`). Nothing is read at import time; callers build a `VadarConfig` with `load_config()` (or by
hand, then `check_config()`) and pass it down.
"""

from vadar.config.checks import DAY_S, ConfigError, env_name
from vadar.config.loading import SECTIONS, VadarConfig, apply_assignments, check_config, load_config
from vadar.config.sections import (EXECUTORS, MAX_SAMPLES, SPECULATIVE_TYPES, AgentsConfig, EmbeddedLLMConfig,
                                   EvalConfig, LibraryConfig, LLMConfig, ModulesConfig, PathsConfig, RayConfig,
                                   ReasoningConfig, SandboxConfig, default_home, default_model_cache)

__all__ = ["DAY_S", "EXECUTORS", "MAX_SAMPLES", "SECTIONS", "SPECULATIVE_TYPES", "AgentsConfig", "ConfigError",
           "EmbeddedLLMConfig", "EvalConfig", "LibraryConfig", "LLMConfig", "ModulesConfig", "PathsConfig",
           "RayConfig", "ReasoningConfig", "SandboxConfig", "VadarConfig", "apply_assignments", "check_config",
           "default_home", "default_model_cache", "env_name", "load_config"]
