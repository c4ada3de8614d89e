"""benchmarks/validation_replay.py: a recorded build's first validation round judged again at a level."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import validation_replay  # noqa: E402


def differing(question, vadar, static, helpers=()):
    return {"question": question, "vadar": vadar, "static": static, "helpers": list(helpers), "examples": []}


def test_a_recorded_round_is_replayed_question_by_question(tmp_path, monkeypatch, capsys):
    build = tmp_path / "build"
    build.mkdir()
    rounds = [{"won": 1, "lost": 4, "helpers": {},
               "differing": [differing("1", 1.0, 0.0), *(differing(str(i), 0.0, 1.0, ["_bad"]) for i in range(2, 5)),
                             differing("5", 0.0, 1.0)]}]
    (build / "validation.json").write_text(json.dumps({"rounds": rounds}))
    old = tmp_path / "old.json"  # recorded before rounds kept their questions
    old.write_text(json.dumps({"rounds": [{"won": 3, "lost": 4, "helpers": {"_h": {"wins": 0, "losses": 1}}}]}))
    monkeypatch.setattr(sys, "argv", ["validation_replay.py", str(build), str(old)])
    assert validation_replay.main() == 0
    first, second = capsys.readouterr().out.splitlines()
    # 1 won, 4 lost: p 0.1875, behind at 0.2; `_bad` lost its 3 (p 0.125) and goes on its own evidence
    assert first.endswith("1 won, 4 lost (one-sided p 0.188): significantly behind at 0.2; withdraws _bad")
    assert second.endswith("3 won, 4 lost (one-sided p 0.500): not significantly behind at 0.2; withdraws nothing "
                           "(from totals: no question-level record)")
    monkeypatch.setattr(sys, "argv", ["validation_replay.py", str(build), "--level", "0.1"])
    validation_replay.main()
    assert capsys.readouterr().out.strip().endswith("not significantly behind at 0.1; withdraws nothing")
