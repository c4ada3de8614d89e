"""What a setting's value must be, declared as data beside each section, and the one function that
checks a section against its declarations.

Every section lists its checks (`Range`, `OneOf`, `HttpUrl`, `NotEmpty`, `HeaderText`, `ModuleSlots`) by field
name; `check_section` applies them, and the declared type of every field, in one pass. A refused
value is one line naming the setting, its environment variable and, when it came from elsewhere,
where it was set.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol
from urllib.parse import urlsplit

from base_modules.registry import SLOTS

DAY_S = 86_400.0
"""The longest timeout any setting takes (a day): a deadline of 1e308 s overflows the clocks it is
added to, and a call meant to run longer than a day has stopped being a timeout."""


class ConfigError(ValueError):
    """A configuration value is missing or malformed; the message names the setting."""


class Check(Protocol):
    """One rule about a setting's value."""

    def problem(self, value: object) -> str | None:
        """What the value must be, when it is not (`a positive number`); None when it passes."""


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Range:
    """A finite number within bounds. `above`/`below` exclude the bound itself; `off` also lets 0
    through (the setting's way of turning itself off); `unit` names the high bound (`a day`)."""

    low: float | None = None
    high: float | None = None
    above: bool = False
    below: bool = False
    off: bool = False
    unit: str = ""

    def problem(self, value: object) -> str | None:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return "a number"
        if self.off and value == 0:
            return None
        if not math.isfinite(value):
            return self.describe()
        too_low = self.low is not None and (value <= self.low if self.above else value < self.low)
        too_high = self.high is not None and (value >= self.high if self.below else value > self.high)
        return self.describe() if too_low or too_high else None

    def describe(self) -> str:
        high = "" if self.high is None else _number(self.high) + (f" ({self.unit})" if self.unit else "")
        if self.low == 0 and self.above:
            text = "a positive number" + (f" up to {high}" if high else "")
        elif self.low is None:
            text = f"{'below' if self.below else 'at most'} {high}"
        elif self.high is None:
            text = "0 or more" if self.low == 0 and not self.above else \
                f"{'above' if self.above else 'at least'} {_number(self.low)}"
        elif not self.above and not self.below:
            text = f"between {_number(self.low)} and {high}"
        else:
            text = (f"{'above' if self.above else 'at least'} {_number(self.low)} and "
                    f"{'below' if self.below else 'at most'} {high}")
        return f"0 (off) or {text}" if self.off else text


@dataclass(frozen=True)
class OneOf:
    """One of a few names, exactly as written."""

    choices: tuple[str, ...]

    def problem(self, value: object) -> str | None:
        return None if value in self.choices else f"one of {', '.join(self.choices)}"


@dataclass(frozen=True)
class NotEmpty:
    """Text with something in it (a model name, a host)."""

    def problem(self, value: object) -> str | None:
        return None if str(value).strip() else "a non-empty text"


@dataclass(frozen=True)
class HttpUrl:
    """An http:// or https:// address that parses, with a host."""

    def problem(self, value: object) -> str | None:
        wanted = "an http:// or https:// URL with a host"
        try:
            parts = urlsplit(str(value))
            parts.port  # noqa: B018 - a port that is no number raises here
        except ValueError as exc:
            return f"{wanted} ({exc})"
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return wanted
        return None


@dataclass(frozen=True)
class HeaderText:
    """A key sent in an HTTP header (`Authorization: Bearer ...`): printable ASCII with something in it.
    A newline, a non-ASCII letter or only spaces cannot be sent, and the client would fail on every
    try and then blame the endpoint. A key is a secret: its refusal names the fault, never the value."""

    secret: ClassVar[bool] = True

    def problem(self, value: object) -> str | None:
        text, wanted = str(value), "printable ASCII text"
        if not text.strip():
            return (f"{wanted} with something in it, not only spaces (any text, e.g. sk-no-key-needed, where "
                    "no key is needed)")
        if not text.isascii():
            return f"{wanted}; it has a non-ASCII character"
        if not text.isprintable():
            return f"{wanted}; it has a line break or another control character"
        if text != text.strip():
            return f"{wanted} without spaces at either end"
        return None


@dataclass(frozen=True)
class ModuleSlots:
    """A mapping whose keys are module slots (`depth`, `vqa`, ...) and whose values name a backend.
    Whether a plugin backend is installed is left to where the modules are built (a Ray worker may
    have a plugin the driver lacks)."""

    def problem(self, value: object) -> str | None:
        if isinstance(value, Mapping) and all(slot in SLOTS and str(name).strip() for slot, name in value.items()):
            return None
        return f"a mapping of modules ({', '.join(SLOTS)}) to backend names"


def env_name(section: str, field: str) -> str:
    """The environment variable of a setting; the home has the one short name `VADAR_HOME`."""
    return "VADAR_HOME" if (section, field) == ("paths", "home") else f"VADAR_{section.upper()}_{field.upper()}"


def refusal(section: str, field: str, what: str, value: object, origin: str | None = None, *,
            secret: bool = False) -> ConfigError:
    """The one line for a refused value: setting, rule, value (unless it is a secret), variable, and
    where it was set."""
    variable = env_name(section, field)
    where = f"; set by {origin}" if origin and origin != variable else ""
    if secret:
        return ConfigError(f"{section}.{field} must be {what} ({variable}{where}; the value is not shown)")
    shown = f"'{value}'" if isinstance(value, Path) else repr(value)
    return ConfigError(f"{section}.{field} must be {what}, got {shown} ({variable}{where})")


def check_section(section: str, values: object, checks: Mapping[str, Check],
                  origins: Mapping[tuple[str, str], str] | None = None) -> None:
    """Every field of the dataclass `values` has its declared type and passes its declared check."""
    hints = typing.get_type_hints(type(values))
    for f in dataclasses.fields(values):  # type: ignore[arg-type]
        value = getattr(values, f.name)
        check = checks.get(f.name)
        what = type_problem(value, hints[f.name])
        if what is None and value is not None and check is not None:
            what = check.problem(value)
        if what is not None:
            raise refusal(section, f.name, what, value, (origins or {}).get((section, f.name)),
                          secret=getattr(check, "secret", False))


def type_problem(value: object, hint: object) -> str | None:
    """What a value of type `hint` must be, when `value` is not one (a config built by hand)."""
    args = typing.get_args(hint)
    if type(None) in args:
        if value is None:
            return None
        hint = next(a for a in args if a is not type(None))
    if typing.get_origin(hint) is dict:
        ok = isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
        return None if ok else "a mapping of names to names"
    kinds: dict[object, tuple[tuple[type, ...], str]] = {
        bool: ((bool,), "true or false"), int: ((int,), "a whole number"), float: ((int, float), "a number"),
        str: ((str,), "a text"), Path: ((Path,), "a path"),
    }
    if hint not in kinds:
        return None
    types, what = kinds[hint]
    if not isinstance(value, types) or (hint is not bool and isinstance(value, bool)):
        return what
    return None
