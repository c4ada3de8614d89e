"""Helpers stored before the helper rules held (or written into the store by hand) cannot take a
module's, a built-in's or the sandbox's name, break every program, or swell every request: when a
namespace is built they are left out with a warning, and the run goes on."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from api_store import ApiStore
from omni3d_bench import sample_path
from omni3d_bench.datasets import load_dataset
from vadar.config import VadarConfig
from vadar.llm.doubles import ScriptedLLM
from vadar.programs.namespace import program_namespace
from vadar.runs.pipeline import evaluate
from vadar.runs.prepare import DataSelection
from vadar.runs.session import open_session
from vadar.sandbox import execute

TWICE = "def _twice(x):\n    return 2 * x\n"
IMPOSTORS = {
    "loc": "def loc(image, prompt):\n    return [[0, 0, 1, 1]] * 7\n",
    "len": "def len(x):\n    return 7\n",
    "sum": "def sum(x):\n    return 7\n",
    "print": "def print(*args):\n    return 1 / 0\n",
    "math": "def math():\n    return 7\n",
    "image": "def image():\n    return 7\n",
    "_getattr_": "def _getattr_(obj, name):\n    return 7\n",
    "_print_": "def _print_(x=None):\n    return 7\n",
    "_write_": "def _write_(obj):\n    return obj\n",
    "_breaks_policy": "def _breaks_policy():\n    return ().__class__\n",
}


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    """Each helper left out is warned about once per process; each test here starts afresh."""
    monkeypatch.setattr("vadar.programs.helper_rules._warned", set())


def _store_with(path: Path, helpers: dict[str, str], docstring: str = "A helper.") -> None:
    with ApiStore(path) as store:
        for name, code in helpers.items():
            store.propose(name, "(*args)", docstring)
            store.implement(name, code)
            store.mark_admitted(name)


@pytest.mark.parametrize("name", list(IMPOSTORS))
def test_a_helper_that_breaks_a_rule_is_left_out_of_the_namespace(tmp_path: Path, caplog, name: str) -> None:
    _store_with(tmp_path / "lib.sqlite", {name: IMPOSTORS[name], "_twice": TWICE})
    dataset = load_dataset(sample_path())
    question = dataset.questions(dataset.splits()[0])[0]  # How many cylinders are there? (2)
    from base_modules.oracle import clevr_oracle_modules

    with ApiStore(tmp_path / "lib.sqlite") as store, caplog.at_level(logging.WARNING):
        namespace = program_namespace(dataset.image(question), clevr_oracle_modules(dataset.scene),
                                      store.library())
    assert f"library function {name} is left out" in caplog.text
    result = execute("final_result = _twice(len(loc(image, 'cylinder'))) + sum([0])\nprint('ok')", namespace,
                     timeout_s=20, memory_mb=512)
    assert result.error is None and result.value == 4
    assert [call.name for call in result.calls] == ["loc"]


def test_a_run_over_a_poisoned_library_answers_from_the_modules(tmp_path: Path, run_config: VadarConfig, caplog):
    huge = "Docstring. " * 300_000  # 3.3 MB: the 60 MB one went into every request
    _store_with(run_config.paths.database, {k: v for k, v in IMPOSTORS.items() if k != "_print_"})  # print's twin
    _store_with(run_config.paths.database, {"_huge_doc": "def _huge_doc(x):\n    return x\n"}, docstring=huge)
    _store_with(run_config.paths.database, {"_twice": TWICE}, docstring="Twice x.")
    llm = ScriptedLLM([f"```python\nfinal_result = _twice(len(loc(image, '{what}'))) // 2\n```"
                       for what in ("cylinder", "things")])  # each of the question's own objects
    data = DataSelection(limit=2).prepare()
    out = tmp_path / "run"
    with open_session(run_config, llm=llm) as session, caplog.at_level(logging.WARNING):
        summary = evaluate(session, data, out, method="vadar", show_progress=False)
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert summary.questions == 2 and all(row["error"] is None for row in rows)
    assert rows[0]["answer"] == 2 and rows[0]["score"] == 1.0  # 2 cylinders: the module counted, not `loc`
    assert [call["name"] for call in rows[0]["module_calls"]] == ["loc"]
    prompt = "\n".join(str(m["content"]) for m in llm.calls[0])
    assert "def _twice" in prompt and "_huge_doc" not in prompt and len(prompt) < 40_000
    assert "def loc(image, prompt):\n    return" not in prompt and "_breaks_policy" not in prompt
    assert "library function _huge_doc is left out" in caplog.text
    assert "library function _breaks_policy is left out" in caplog.text


def test_a_library_past_the_request_bound_keeps_its_first_helpers(tmp_path: Path, run_config: VadarConfig, caplog):
    body = "    return x\n" + "    # padding\n" * 500
    many = {f"_pad{k:03d}": f"def _pad{k:03d}(x):\n{body}" for k in range(60)}  # 60 x 7 kB: past 200 kB of code
    _store_with(run_config.paths.database, {"_twice": TWICE, **many})
    llm = ScriptedLLM(["```python\nfinal_result = _twice(1)\n```"])
    data = DataSelection(limit=1).prepare()
    with open_session(run_config, llm=llm) as session, caplog.at_level(logging.WARNING):
        evaluate(session, data, tmp_path / "run", method="vadar", show_progress=False)
    row = json.loads((tmp_path / "run" / "results.jsonl").read_text())
    assert row["answer"] == 2 and row["error"] is None
    assert "library function _pad059 is left out: the library's helpers before it fill the bound" in caplog.text
