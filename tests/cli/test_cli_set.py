"""`--set section.field=value` on every command that reads the configuration: above the file and the
variables, below the command's named options, refused in one line when it names nothing."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

import vadar.app.instance as instance
from vadar.cli import app
from vadar.llm.doubles import ScriptedLLM
from vadar.runs.session import open_session as real_open_session

runner = CliRunner()


def commands(group, prefix: tuple[str, ...] = ()) -> dict:
    """Every command under `group` by its path (`("library", "list")`)."""
    found = {}
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            found.update(commands(command, (*prefix, name)))
        else:
            found[(*prefix, name)] = command
    return found


def test_every_command_that_reads_the_configuration_takes_set() -> None:
    every = commands(typer.main.get_command(app))  # type: ignore[arg-type]
    reading = {path for path, command in every.items()
               if any(opt in ("--config", "--db") for param in command.params for opt in param.opts)}
    assert {("run",), ("eval",), ("solve",), ("report",), ("library", "list"), ("llm", "serve")} <= reading
    for path in reading:
        assert any("--set" in param.opts for param in every[path].params), f"vadar {' '.join(path)} lacks --set"


def test_set_chooses_the_home_over_the_variable(tmp_path) -> None:
    chosen = tmp_path / "chosen"
    result = runner.invoke(app, ["library", "list", "--set", f"paths.home={chosen}"],
                           env={"VADAR_HOME": str(tmp_path / "variable")})
    assert result.exit_code == 2 and f"no library database at {chosen / 'vadar.sqlite'}" in result.output


@pytest.mark.parametrize(("args", "message"), [
    (["library", "list", "--set", "llm.temprature=0.2"], "unknown setting 'temprature' in [llm]; known: base_url"),
    (["eval", "--set", "llm.temperature=nan"], "llm.temperature must be between 0 and 2, got nan"),
    (["solve", "--question", "How many?", "--image", "x.png", "--set", "reasoning.samples=17"],
     "reasoning.samples must be between 1 and 16, got 17"),
    (["llm", "bench", "--set", "llm.base_url=http://[::1"], "llm.base_url must be an http:// or https:// URL"),
    (["report", "run", "--set", "sandbox"], "--set 'sandbox': expected SECTION.FIELD=VALUE"),
])
def test_a_bad_set_is_one_line_without_a_traceback(tmp_path, monkeypatch, args: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, args, env={"VADAR_HOME": str(tmp_path / "home")})
    assert result.exit_code != 0 and message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


def test_named_options_win_over_set_which_wins_over_variables(tmp_path, monkeypatch) -> None:
    seen = []
    llm = ScriptedLLM(["<answer>2</answer>"] * 4)

    def session(config, **kwargs):
        seen.append(config)
        return real_open_session(config, llm=llm, **kwargs)

    monkeypatch.setattr(instance, "open_session", session)
    monkeypatch.setenv("VADAR_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("VADAR_LLM_TEMPERATURE", "0.1")
    result = runner.invoke(app, ["eval", "--method", "direct", "--limit", "1", "--out", str(tmp_path / "run"),
                                 "--set", "eval.jobs=2", "--jobs", "3", "--set", "llm.temperature=0.4",
                                 "--set", "agents.tool_budget=5"])
    assert result.exit_code == 0, result.output
    assert (seen[0].eval.jobs, seen[0].llm.temperature, seen[0].agents.tool_budget) == (3, 0.4, 5)


def test_a_flag_is_its_setting_applied_after_set(tmp_path, monkeypatch) -> None:
    from vadar.cli.options import SETTING_FLAGS, load_settings

    monkeypatch.setenv("VADAR_HOME", str(tmp_path))
    settings = load_settings(None, ["eval.jobs=2", "eval.keep_going=on", "reasoning.reflect=on"],
                             {"jobs": 4, "executor": " Ray ", "keep_going": False, "reflect": None, "samples": 3})
    assert (settings.eval.jobs, settings.eval.executor, settings.eval.keep_going) == (4, "ray", True)
    assert (settings.reasoning.reflect, settings.reasoning.samples) == (True, 3)
    assert all("." in flag.setting or flag.flag == "--module" for flag in SETTING_FLAGS.values())
