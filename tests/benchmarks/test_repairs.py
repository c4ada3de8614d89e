"""benchmarks/repairs.py: each recorded repair once, with the decision that followed it."""

from __future__ import annotations

import sys
from pathlib import Path

from api_store import ApiStore

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import repairs  # noqa: E402


def store_with(path: Path, after: dict[str, str]) -> Path:
    with ApiStore(path) as store:
        for name, decision in after.items():
            store.propose(name, "(image: Image) -> int", "A count.")
            store.implement(name, f"def {name}(image):\n    return 1\n")
            store.record_decision(name, "repair", mode="labelled", evidence={"reason": "programs were wrong"})
            store.record_decision(name, decision, mode="labelled", evidence={})
    return path


def test_each_repair_is_counted_once_with_what_followed(tmp_path, monkeypatch, capsys):
    first = store_with(tmp_path / "a.sqlite", {"_one": "rejected", "_two": "admitted"})
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(first.read_bytes())  # a store copied from another holds the same repairs
    found = repairs.repairs([first, copy])
    assert sorted(found) == [("_one", "programs were wrong", "rejected"), ("_two", "programs were wrong", "admitted")]
    monkeypatch.setattr(sys, "argv", ["repairs.py", str(first), str(copy)])
    repairs.main()
    out = capsys.readouterr().out
    assert "2 repairs in 2 stores" in out and "1  then rejected" in out and "1  then admitted" in out
