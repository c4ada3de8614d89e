"""benchmarks/helper_search_once.py with a scripted model: the search record and the kept code are printed."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

from omni3d_bench.sample import sample_path
from vadar.llm.doubles import ScriptedLLM

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import helper_search_once  # noqa: E402
from left_of_helpers import RIGHT, WRONG  # noqa: E402


def test_a_wrong_then_a_right_sample_is_searched_and_the_right_one_kept(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("VADAR_HOME", str(tmp_path))
    llm = ScriptedLLM([f"```python\n{WRONG}```", f"```python\n{RIGHT}```"])

    @contextmanager
    def endpoint(config):
        yield "http://127.0.0.1:1/v1"

    monkeypatch.setattr(helper_search_once, "open_endpoint", endpoint)
    monkeypatch.setattr(helper_search_once, "build_chat_model", lambda config, base_url: llm)
    monkeypatch.setattr(sys, "argv", ["helper_search_once.py", str(sample_path()), "_objects_left_of",
                                      "(image: Image, reference: BBox) -> list[BBox]", "Objects left of the reference.",
                                      "--samples", "4", "--rounds", "1", "--limit", "3"])
    assert helper_search_once.main() == 0
    out = capsys.readouterr().out
    assert "implemented ['_objects_left_of'] failed {}" in out
    assert "'claim': 'relation:left', 'samples': 2, 'passed': [2]" in out
    assert RIGHT.strip().splitlines()[-1].strip() in out
