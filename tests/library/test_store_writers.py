"""Writes to the library store come from `vadar/library/` only; the run machinery keeps its own
bookkeeping (runs and batches), and agents only read (`vadar.agents.library_view`)."""

from __future__ import annotations

import ast
from pathlib import Path

from api_store import ApiStore

ROOT = Path(__file__).resolve().parents[2]
LIBRARY_WRITES = {"propose", "implement", "mark_admitted", "mark_retired", "mark_failed", "set_dependencies",
                  "record_attempt", "record_proposals", "record_program", "record_verified_program",
                  "withdraw_programs", "record_decision", "import_functions"}
RUN_BOOKKEEPING = {"start_run", "finish_run", "reopen_run", "start_batch"}


def _store_writes(path: Path) -> set[str]:
    """Write methods `path` calls on anything named like a store (`store.x`, `self.store.x`, `session.store.x`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.func.attr for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in LIBRARY_WRITES | RUN_BOOKKEEPING and "store" in ast.unparse(node.func.value)}


def test_the_write_methods_named_here_are_the_stores():
    assert all(callable(getattr(ApiStore, name, None)) for name in LIBRARY_WRITES | RUN_BOOKKEEPING)


def test_only_the_library_writes_to_the_store_and_runs_keep_their_bookkeeping():
    offenders = {}
    for path in sorted((ROOT / "vadar").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("vadar/library/"):
            continue
        allowed = RUN_BOOKKEEPING if relative.startswith("vadar/runs/") else set()
        writes = _store_writes(path) - allowed
        if writes:
            offenders[relative] = sorted(writes)
    assert offenders == {}


def test_the_gate_is_the_only_writer_of_admitted():
    writers = {path.relative_to(ROOT).as_posix() for path in sorted((ROOT / "vadar").rglob("*.py"))
               if "mark_admitted" in _store_writes(path)}
    assert writers == {"vadar/library/gate.py"}
