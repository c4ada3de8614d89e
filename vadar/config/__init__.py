"""Explicit configuration: small dataclasses (`sections`) filled from one TOML file plus environment
variables (`loading`). Nothing is read at import time; callers build a `VadarConfig` with
`load_config()` (or by hand in tests) and pass it down.
"""

from vadar.config.loading import VadarConfig, load_config
from vadar.config.sections import (EXECUTORS, AgentsConfig, ConfigError, EmbeddedLLMConfig, EvalConfig, LibraryConfig,
                                   LLMConfig, ModulesConfig, PathsConfig, RayConfig, ReasoningConfig, SandboxConfig,
                                   default_home, default_model_cache)

__all__ = ["EXECUTORS", "AgentsConfig", "ConfigError", "EmbeddedLLMConfig", "EvalConfig", "LibraryConfig", "LLMConfig",
           "ModulesConfig", "PathsConfig", "RayConfig", "ReasoningConfig", "SandboxConfig", "VadarConfig",
           "default_home", "default_model_cache", "load_config"]
