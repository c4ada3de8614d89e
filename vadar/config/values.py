"""Turning written values (TOML, `VADAR_*` variables, `--set`) into settings of their declared type.

Every source goes through `set_field` (one setting of a section) or `set_modules` (the per-module
backends), so a value means the same wherever it is written, and a bad one is one line naming
where it was written.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping, MutableMapping
from pathlib import Path

from base_modules.registry import SLOTS, BackendError, backend_name, parse_assignment, slot_name
from vadar.config.checks import ConfigError
from vadar.config.sections import ModulesConfig

Origins = MutableMapping[tuple[str, str], str]
"""Where each setting set so far was written (`VADAR_LLM_TEMPERATURE`, `vadar.toml [llm] temperature`)."""


def set_field(section: str, target: object, key: str, raw: object, *, origin: str, origins: Origins) -> None:
    """Set `target.key` (a field of the section's dataclass) from a written value."""
    fields = {f.name: f for f in dataclasses.fields(target)}  # type: ignore[arg-type]
    if key not in fields:
        raise ConfigError(f"{origin}: unknown setting '{key}' in [{section}]; known: {', '.join(fields)}")
    hints = typing.get_type_hints(type(target))
    setattr(target, key, coerce(raw, hints[key], origin))
    origins[(section, key)] = origin


def set_module(modules: ModulesConfig, key: str, raw: object, *, origin: str, origins: Origins) -> None:
    """One `[modules]` entry: `backend`, `per_module` (several slots at once), or one slot's backend."""
    try:
        if key == "backend":
            modules.backend = backend_name(str(raw), slot="backend")
        elif key == "per_module":
            modules.per_module.update(per_module_backends(raw))
        else:
            canonical = _slot(key, origin)
            modules.per_module[canonical] = backend_name(str(raw), slot=canonical)
    except BackendError as exc:
        raise ConfigError(f"{origin}: {exc}") from None
    origins[("modules", "per_module" if key != "backend" else "backend")] = origin


def _slot(key: str, origin: str) -> str:
    try:
        return slot_name(key)
    except BackendError:
        raise ConfigError(f"{origin}: unknown module {key.strip()!r}; [modules] takes backend, per_module or a "
                          f"module: {', '.join(SLOTS)}") from None


def per_module_backends(raw: object) -> dict[str, str]:
    """`depth=real,vqa=real` (a variable or `--set`) or a TOML table `{depth = "real"}`: {slot: backend}."""
    if isinstance(raw, Mapping):
        pairs = [f"{slot}={backend}" for slot, backend in raw.items()]
    else:
        pairs = [part for part in str(raw).split(",") if part.strip()]
    if not pairs:
        raise BackendError("expected SLOT=BACKEND pairs separated by commas, e.g. depth=real,vqa=real")
    return dict(parse_assignment(pair) for pair in pairs)


def coerce(raw: object, hint: object, origin: str) -> object:
    """`raw` as a value of type `hint`: booleans from on/off words, `none` for an optional setting."""
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
            if not str(raw).strip() or "\0" in str(raw):
                raise ValueError(f"expected a path, got {raw!r}")
            return Path(str(raw)).expanduser()
        if base in (int, float, str):
            if not isinstance(raw, (str, int, float)) or (base is not str and isinstance(raw, bool)):
                raise ValueError(f"expected {'a text' if base is str else 'a number'}, got {raw!r}")
            if base is int and isinstance(raw, float) and not raw.is_integer():
                raise ValueError(f"expected a whole number, got {raw!r}")
            return base(raw)  # type: ignore[operator]
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{origin}: {exc}") from exc
    raise ConfigError(f"{origin}: unsupported setting type {hint}")
