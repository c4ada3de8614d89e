"""Command-line options shared by several commands, and how they reach the config.

Precedence, lowest first: defaults, the TOML file, `VADAR_*` variables, `--set section.field=value`,
then the command's named options (`--jobs`, `--samples`, ...); the result is checked as a whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from base_modules.registry import BackendError, backend_name, parse_assignment
from vadar.app.run_dirs import modules_label  # noqa: F401 (the run directory names, for the commands)
from vadar.config import MAX_SAMPLES, ConfigError, VadarConfig, check_config, load_config

DataOption = Annotated[Path | None, typer.Option(
    "--data", help="Data set directory (CLEVR or Omni3D-Bench layout). Default: the built-in sample.")]
SplitOption = Annotated[str | None, typer.Option(
    "--split", help="Question split, e.g. dev. Default: the sample's split, or the only split.")]
LimitOption = Annotated[int | None, typer.Option("--limit", min=0, help="Use only the first N questions.")]
SkipOption = Annotated[int, typer.Option("--skip", min=0, help="Leave out the first N questions (then --limit).")]
FamilyOption = Annotated[list[str] | None, typer.Option(
    "--family", help="Only questions of this family (the generator's family, CLEVR's template); "
    "repeatable. Applied after --skip, before --limit.")]
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
LibraryOption = Annotated[bool, typer.Option(
    "--library/--no-library", help="Shorthand: --no-library is --method static-api.")]
JobsOption = Annotated[int | None, typer.Option(
    "--jobs", "-j", min=1, help="Questions answered at once (default: eval.jobs, 1). Helps most with a "
    "server that batches requests (vLLM, a hosted API).")]
KeepGoingOption = Annotated[bool, typer.Option(
    "--keep-going", help="After an endpoint outage outlasts the retries, record that question as an "
    "infrastructure error and go on (a rerun asks it again); default: stop, rerun to resume.")]
ExecutorOption = Annotated[str | None, typer.Option(
    "--executor", help="local (default: this machine, --jobs threads) or ray (every question a task on a "
    "Ray cluster; needs the ray extra).")]
AddressOption = Annotated[str | None, typer.Option(
    "--address", help="With --executor ray: the cluster to join (auto or HOST:PORT). Default: ray.address, "
    "else a local Ray instance for this command.")]
ModulesOption = Annotated[str | None, typer.Option(
    "--modules", help="Backend of every module: oracle, real or a plugin name (default: config, else oracle).")]
ModuleOption = Annotated[list[str] | None, typer.Option(
    "--module", help="Per-module backend, repeatable: --module depth=real.")]

SamplesOption = Annotated[int | None, typer.Option(
    "--samples", min=1, max=MAX_SAMPLES, help="Programs per question (vadar, static-api): the first greedy, the "
    f"rest sampled; the answer most working programs agree on wins (at most {MAX_SAMPLES}; default: "
    "reasoning.samples, 1).")]
FormalizeOption = Annotated[bool | None, typer.Option(
    "--formalize/--no-formalize", help="State a formal task constraint (frame, objects, quantity, answer type) "
    "as JSON before writing the program (default: reasoning.formalize, off).")]
ReflectOption = Annotated[bool | None, typer.Option(
    "--reflect/--no-reflect", help="Check each answer against the question (and constraint) and send one "
    "revision when it does not fit (default: reasoning.reflect, off).")]
TestsOption = Annotated[bool | None, typer.Option(
    "--tests/--no-tests", help="Have the model write tiny test scenes with known answers and run each program "
    "on them with oracle modules; a failing program is repaired once or outvoted (CLEVR-layout data and the "
    "generated benchmark; not for questions with regions or several frames; default: reasoning.tests, off).")]

SizePriorsOption = Annotated[bool | None, typer.Option(
    "--size-priors/--no-size-priors", help="Show the Program agent the typical sizes of the objects and rooms the "
    "question names (cited in base_modules/knowledge/size_priors.json); with --reflect, an answer far outside them "
    "is sent back once (default: reasoning.size_priors, off).")]


def load_settings(config: Path | None, assignments: list[str] | None = None) -> VadarConfig:
    """A command's configuration before its named options: `--config` (else the default file),
    `VADAR_*` variables, then `--set` assignments, checked."""
    return load_config(config, assignments=assignments or ())


def apply_reasoning(settings: VadarConfig, samples: int | None, formalize: bool | None,
                    reflect: bool | None, tests: bool | None = None, size_priors: bool | None = None) -> None:
    """Set `--samples`, `--formalize`, `--reflect`, `--tests`, `--size-priors` on the config (checked like the
    config file's values)."""
    chosen = settings.reasoning
    if size_priors is not None:
        chosen.size_priors = size_priors
    if tests is not None:
        chosen.tests = tests
    if samples is not None:
        chosen.samples = samples
    if formalize is not None:
        chosen.formalize = formalize
    if reflect is not None:
        chosen.reflect = reflect
    check_config(settings, {("reasoning", "samples"): "--samples"} if samples is not None else None)


def parse_module_overrides(values: list[str]) -> dict[str, str]:
    """`--module depth=real` pairs into {slot: backend}; an unknown slot is an error, not ignored."""
    overrides = {}
    for value in values:
        try:
            slot, backend = parse_assignment(value)
        except BackendError as exc:
            raise ConfigError(f"--module {exc}") from None
        overrides[slot] = backend
    return overrides


def apply_module_choice(settings: VadarConfig, modules: str | None, module: list[str] | None) -> dict[str, str]:
    """Set `--modules` on the config; return the `--module` overrides for `DataSelection.prepare`."""
    if modules:
        try:
            settings.modules.backend = backend_name(modules, slot="--modules")
        except BackendError as exc:
            raise ConfigError(str(exc)) from None
    return parse_module_overrides(module or [])


def apply_executor(settings: VadarConfig, executor: str | None, address: str | None) -> None:
    """Set `--executor` and `--address` on the config (checked like the config file's values)."""
    if executor is not None:
        settings.eval.executor = executor.strip().lower()
    if address is not None:
        settings.ray.address = address
    check_config(settings, {("eval", "executor"): "--executor"} if executor is not None else None)
