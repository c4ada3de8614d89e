"""Command-line options shared by several commands, and how they reach the configuration.

Every flag that stands for a setting (`--jobs`, `--samples`, `--modules`, ...) is one row of
`SETTING_FLAGS` and reaches the configuration as a `--set SECTION.FIELD=VALUE` would, after the
command's own `--set` assignments. Precedence, lowest first: defaults, the TOML file, `VADAR_*`
variables, `--set`, then these flags; the result is checked as a whole by the config's one check.
A command declares which of them it takes with `@settings_flags(...)` and receives the loaded
configuration as its `settings` argument.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from vadar.cli.errors import user_errors
from vadar.config import MAX_SAMPLES, ConfigError, VadarConfig, apply_assignments, check_config, load_config

DataOption = Annotated[Path | None, typer.Option(
    "--data", help="Data set directory (CLEVR or Omni3D-Bench layout). Default: the built-in sample.")]
SplitOption = Annotated[str | None, typer.Option(
    "--split", help="Question split, e.g. dev. Default: the sample's split, or the only split.")]
LimitOption = Annotated[int | None, typer.Option("--limit", min=0, help="Use only the first N questions.")]
SkipOption = Annotated[int, typer.Option("--skip", min=0, help="Leave out the first N questions (then --limit).")]
SpreadOption = Annotated[int | None, typer.Option(
    "--spread-over", min=1, help="Pick the --limit questions across the question shapes of the first N "
                                 "(after --skip), the most common shape first, instead of the first --limit.")]
FamilyOption = Annotated[list[str] | None, typer.Option(
    "--family", help="Only questions of this family (the generator's family, CLEVR's template); "
    "repeatable. Applied after --skip, before --limit.")]
ShapeOption = Annotated[list[str] | None, typer.Option(
    "--shape", help="Only questions of this shape: the answer kind and relation family, as "
    "'attribute:spatial', 'count:either' or 'count' (objects alone); repeatable. Applied after --skip "
    "and --family, before --limit.")]
OutOption = Annotated[Path | None, typer.Option(
    "--out", help="Run directory for results and summary. Default: runs/<data>-<split>-<method>[-<modules>].")]
ConfigOption = Annotated[Path | None, typer.Option("--config", help="TOML configuration file.")]
SetOption = Annotated[list[str] | None, typer.Option(
    "--set", metavar="KEY=VALUE", help="Set any setting (KEY is section.field), repeatable: --set llm.temperature=0.2 "
    "--set sandbox.timeout_s=60. Above the config file and VADAR_* variables, below this command's other "
    "options (docs/configuration.md).")]
BatchSizeOption = Annotated[int, typer.Option("--batch-size", min=1, help="Questions per Signature-agent batch.")]
BatchesOption = Annotated[int | None, typer.Option("--batches", min=1, help="Number of batches (default: all).")]
MethodOption = Annotated[str, typer.Option(
    "--method", help="vadar (dynamic API), static-api (predefined modules only), tool-agent or direct.")]


@dataclass(frozen=True)
class SettingFlag:
    """A flag that stands for one setting: what it is called, which setting it sets, its option."""

    flag: str
    setting: str
    option: Any
    """The `Annotated[..., typer.Option(...)]` the commands declare."""
    spelling: Callable[[str], str] = str
    """How a given value is written before it is read as the setting (`--executor Ray` is `ray`)."""
    switch: bool = False
    """An on-only switch (`--keep-going`): absent means "leave the setting alone", not "off"."""

    def assignment(self, value: object) -> str | None:
        """The flag's value as `SECTION.FIELD=VALUE`; None when the flag was not given."""
        if value is None or (value is False and self.switch):
            return None
        text = str(value).lower() if isinstance(value, bool) else self.spelling(str(value))
        return f"{self.setting}={text}"


def _flag(flag: str, setting: str, kind: Any, **option: Any) -> SettingFlag:
    names = option.pop("names", (flag,))
    spelling = option.pop("spelling", str)
    return SettingFlag(flag, setting, Annotated[kind, typer.Option(*names, **option)], spelling, switch=kind is bool)


SETTING_FLAGS: dict[str, SettingFlag] = {flag.flag.removeprefix("--").split("/")[0].replace("-", "_"): flag for flag in (
    _flag("--jobs", "eval.jobs", int | None, names=("--jobs", "-j"), min=1, help="Questions answered at once (default: "
          "eval.jobs, 1). Helps most with a server that batches requests (vLLM, a hosted API)."),
    _flag("--keep-going", "eval.keep_going", bool, help="After an endpoint outage outlasts the retries, record "
          "that question as an infrastructure error and go on (a rerun asks it again); default: stop, rerun to resume."),
    _flag("--executor", "eval.executor", str | None, spelling=lambda text: text.strip().lower(), help="local (default: this machine, --jobs threads) or ray "
          "(every question a task on a Ray cluster; needs the ray extra)."),
    _flag("--address", "ray.address", str | None, help="With --executor ray: the cluster to join (auto or "
          "HOST:PORT). Default: ray.address, else a local Ray instance for this command."),
    _flag("--modules", "modules.backend", str | None, help="Backend of every module: oracle, real or a plugin name "
          "(default: config, else oracle)."),
    _flag("--samples", "reasoning.samples", int | None, min=1, max=MAX_SAMPLES, help="Programs per question (vadar, "
          "static-api): the first greedy, the rest sampled; the answer most working programs agree on wins (at most "
          f"{MAX_SAMPLES}; default: reasoning.samples, 1)."),
    _flag("--formalize", "reasoning.formalize", bool | None, names=("--formalize/--no-formalize",), help="State a "
          "formal task constraint (frame, objects, quantity, answer type) as JSON before writing the program "
          "(default: reasoning.formalize, off)."),
    _flag("--reflect", "reasoning.reflect", bool | None, names=("--reflect/--no-reflect",), help="Check each "
          "answer against the question (and constraint) and send one revision when it does not fit (default: "
          "reasoning.reflect, off)."),
    _flag("--tests", "reasoning.tests", bool | None, names=("--tests/--no-tests",), help="Have the model write "
          "tiny test scenes with known answers and run each program on them with oracle modules; a failing program "
          "is repaired once or outvoted (CLEVR-layout data and the generated benchmark; not for questions with "
          "regions or several frames; default: reasoning.tests, off)."),
    _flag("--size-priors", "reasoning.size_priors", bool | None, names=("--size-priors/--no-size-priors",),
          help="Show the Program agent the typical sizes of the objects and rooms the question names (cited in "
          "base_modules/knowledge/size_priors.json); with --reflect, an answer far outside them is sent back once "
          "(default: reasoning.size_priors, off)."),
    _flag("--find-order", "reasoning.find_order", bool | None, names=("--find-order/--no-find-order",),
          help="List, after the question, the objects its spatial relation chains name, innermost first, each "
          "with its relation to an earlier one: 'the cube left of the ball behind the cylinder' is found from the "
          "cylinder (default: reasoning.find_order, off)."),
    _flag("--module", "modules", list[str] | None, help="Per-module backend, repeatable: --module depth=real."),
)}
"""Every flag that stands for a setting, by the name of its parameter."""

REASONING = ("samples", "formalize", "reflect", "tests", "size_priors", "find_order")
MODULES = ("modules", "module")
EXECUTION = ("jobs", "executor", "address")
NOT_MODULES = ("backend", "per_module")
"""Keys of `[modules]` that are no module: `--module backend=real` is not `--modules real`."""


def flag_assignments(chosen: dict[str, Any]) -> list[tuple[SettingFlag, str]]:
    """The flags given, each with its `SECTION.FIELD=VALUE` (`--module depth=real` is `modules.depth=real`)."""
    found: list[tuple[SettingFlag, str]] = []
    for name, value in chosen.items():
        flag = SETTING_FLAGS[name]
        if name == "module":
            for pair in value or ():
                slot, sep, backend = pair.partition("=")
                if not sep or not slot.strip() or not backend.strip() or slot.strip() in NOT_MODULES:
                    raise ConfigError(f"--module {pair!r}: expected SLOT=BACKEND, e.g. --module depth=real")
                found.append((flag, f"modules.{slot.strip()}={backend.strip()}"))
        elif (assignment := flag.assignment(value)) is not None:
            found.append((flag, assignment))
    return found


def load_settings(config: Path | None, assignments: Sequence[str] | None = None,
                  flags: dict[str, Any] | None = None) -> VadarConfig:
    """A command's configuration: `--config` (else the default file), `VADAR_*` variables, `--set`,
    then the setting flags given, each through the `--set` path; checked, a refusal naming the flag."""
    settings = load_config(config, assignments=assignments or ())
    origins: dict[tuple[str, str], str] = {}
    for flag, assignment in flag_assignments(flags or {}):
        try:
            apply_assignments(settings, [assignment], origins)
        except ConfigError as exc:
            raise ConfigError(str(exc).replace(f"--set {assignment.partition('=')[0]}", flag.flag, 1)) from None
        section, _, field = assignment.partition("=")[0].partition(".")
        origins[(section, "per_module" if section == "modules" and field != "backend" else field)] = flag.flag
    check_config(settings, origins)
    return settings


Command = TypeVar("Command", bound=Callable[..., Any])


def settings_flags(*names: str) -> Callable[[Command], Command]:
    """Give a command `--config`, `--set` and the setting flags `names` (rows of `SETTING_FLAGS`); it
    receives the loaded, checked configuration as its `settings` argument instead of the flags."""

    def decorate(command: Command) -> Command:
        own = [p for p in inspect.signature(command, eval_str=True).parameters.values() if p.name != "settings"]
        added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=SETTING_FLAGS[name].option,
                                   default=False if SETTING_FLAGS[name].switch else None) for name in names]
        added += [inspect.Parameter("config", inspect.Parameter.KEYWORD_ONLY, annotation=ConfigOption, default=None),
                  inspect.Parameter("assignments", inspect.Parameter.KEYWORD_ONLY, annotation=SetOption, default=None)]

        @functools.wraps(command)
        def run(**given: Any) -> Any:
            flags = {name: given.pop(name) for name in names}
            config, assignments = given.pop("config"), given.pop("assignments")
            with user_errors():
                settings = load_settings(config, assignments, flags)
            return command(settings=settings, **given)

        parameters = [*own, *added]
        run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in parameters}
        return run  # type: ignore[return-value]

    return decorate
