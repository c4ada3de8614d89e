"""The Python API refuses bad input in one line of its documented error type, checks `v.config`
again after `open()`, and gives the run directory back when a job ends, failed or not."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

import vadar
from omni3d_bench.types import DatasetError
from vadar.config import ConfigError
from vadar.llm.doubles import ScriptedLLM
from vadar.llm.errors import LLMUnavailableError
from test_python_api import COUNT, IMAGE, SCENES

DOCUMENTED = (ConfigError, DatasetError, vadar.LibraryError)


def another_process_can_write(out: Path) -> bool:
    """Whether a second process may take the run directory's lock now."""
    probe = ("import sys; from filelock import FileLock, Timeout\n"
             "try:\n    FileLock(sys.argv[1], timeout=0).acquire()\nexcept Timeout:\n    sys.exit(3)\n")
    return subprocess.run([sys.executable, "-c", probe, str(out / ".run.lock")]).returncode == 0


def test_the_run_directory_is_given_back_when_evaluate_ends(tmp_path):
    with vadar.open(home=tmp_path / "home", llm=ScriptedLLM([COUNT] * 3), quiet=True) as v:
        v.evaluate(limit=1, method="static-api", out=tmp_path / "run")
        assert another_process_can_write(tmp_path / "run")  # before close(): the job is over


def test_the_run_directory_is_given_back_after_a_failure(tmp_path):
    llm = ScriptedLLM([LLMUnavailableError("endpoint down")] * 20)
    with vadar.open(home=tmp_path / "home", llm=llm, quiet=True) as v:
        with pytest.raises(Exception, match="rerun"):
            v.evaluate(limit=1, method="static-api", out=tmp_path / "run")
        assert another_process_can_write(tmp_path / "run")


def test_the_run_directory_is_given_back_when_build_ends(tmp_path, monkeypatch):
    monkeypatch.setenv("VADAR_LIBRARY_VALIDATION", "false")  # the gate has its own tests
    with vadar.open(home=tmp_path / "home", llm=ScriptedLLM(["# no new functions"] * 20), quiet=True) as v:
        v.build(limit=2, batch_size=2, out=tmp_path / "build")
        assert another_process_can_write(tmp_path / "build")


@pytest.mark.parametrize("section, field, value, message", [
    ("sandbox", "memory_mb", -1, "sandbox.memory_mb must be between 128 and 1048576 (1 TiB), got -1"),
    ("llm", "temperature", math.nan, "llm.temperature must be between 0 and 2, got nan"),
    ("sandbox", "timeout_s", "soon", "sandbox.timeout_s must be"),
])
def test_settings_changed_after_open_are_checked_before_use(tmp_path, section, field, value, message):
    llm = ScriptedLLM([COUNT])
    with vadar.open(home=tmp_path / "home", llm=llm, quiet=True) as v:
        setattr(getattr(v.config, section), field, value)
        with pytest.raises(ConfigError, match="v.config after open") as refused:
            v.solve(IMAGE, "How many cylinders are there?", scene=SCENES)
        with pytest.raises(ConfigError):
            v.evaluate(limit=1, out=tmp_path / "run")
    assert message in str(refused.value) and "\n" not in str(refused.value)
    assert llm.calls == []


@pytest.mark.parametrize("keywords, message", [
    ({"batch_size": 0}, "batch_size must be at least 1, not 0"),
    ({"batch_size": -1}, "batch_size must be at least 1, not -1"),
    ({"batches": 0}, "batches must be at least 1, not 0"),
    ({"batch_size": "10"}, "batch_size must be an integer, not str"),
    ({"batch_size": True}, "batch_size must be an integer, not bool"),
])
def test_a_build_of_no_batches_is_refused_in_one_line(tmp_path, keywords, message):
    llm = ScriptedLLM([])
    with vadar.open(home=tmp_path / "home", llm=llm, quiet=True) as v:
        with pytest.raises(ConfigError, match=message):
            v.build(limit=2, out=tmp_path / "build", **keywords)
        with pytest.raises(ConfigError):
            v.run(limit=2, out=tmp_path / "run", **keywords)
    assert llm.calls == [] and not (tmp_path / "build").exists()


def test_an_empty_home_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="home must name a path"):
        vadar.open(home="")
    assert list(tmp_path.iterdir()) == []


def _solve(v, **changed):
    arguments = {"images": IMAGE, "question": "How many cylinders are there?", "scene": SCENES, **changed}
    return v.solve(arguments.pop("images"), arguments.pop("question"), **arguments)


@pytest.mark.parametrize("call", [
    lambda v, tmp: _solve(v, images=123),
    lambda v, tmp: _solve(v, images=[IMAGE, None]),
    lambda v, tmp: _solve(v, question=None),
    lambda v, tmp: _solve(v, regions="0,0,10,10"),
    lambda v, tmp: _solve(v, regions=[12]),
    lambda v, tmp: _solve(v, scene=tmp),
    lambda v, tmp: _solve(v, library="no"),
    lambda v, tmp: v.evaluate(limit="3"),
    lambda v, tmp: v.evaluate(skip=None),
    lambda v, tmp: v.evaluate(families="abc"),
    lambda v, tmp: v.evaluate(method=None),
    lambda v, tmp: v.evaluate(questions=3),
    lambda v, tmp: v.evaluate(data=5),
    lambda v, tmp: v.evaluate(out=7, limit=1),
    lambda v, tmp: v.evaluate(jobs=0, limit=1),
    lambda v, tmp: v.library.show(None),
    lambda v, tmp: v.library.add(123),
    lambda v, tmp: v.library.add(tmp),
    lambda v, tmp: v.library.add("def _h(x:\n"),
    lambda v, tmp: v.library.export(tmp),
    lambda v, tmp: vadar.Library(None),
    lambda v, tmp: vadar.open(config=5),
    lambda v, tmp: vadar.open(config=tmp),
    lambda v, tmp: vadar.open(modules=5),
    lambda v, tmp: vadar.open(modules={"depth": 1}),
])
def test_a_wrong_argument_is_one_line_of_a_documented_type(tmp_path, call):
    llm = ScriptedLLM([])
    with vadar.open(home=tmp_path / "home", llm=llm, quiet=True) as v:
        v.library.add('def _h(x):\n    """Doc."""\n    return x\n')
        with pytest.raises(DOCUMENTED) as refused:
            call(v, tmp_path)
    assert "\n" not in str(refused.value).strip() and llm.calls == []
