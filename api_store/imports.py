"""Reading an export (`ApiStore.export`) back into a store: functions with every version,
their implementation attempts, dependencies and admission decisions.

Runs, batches and programs belong to the home that made them and are not imported, unless asked
for with `with_build`: then the export's build runs with their batches (which questions the library
was built on, so an evaluation can tell whether it shares their scenes) and its verified programs
(the worked examples) and its refused group requests come too, under new ids. Imported versions and
attempts keep their model and timestamps but point at no run. Checking that each source is a valid
library function is the caller's job (the store knows no Python rules).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from api_store.base import StoreBase
from api_store.connection import utc_now
from api_store.errors import DuplicateFunctionError, StoreError
from api_store.names import check_function_name, content_hash, normalize_name
from api_store.records import FunctionStatus

EXPORT_FORMAT = "vadar-api-store"
EXPORT_FORMAT_VERSION = 1


class ImportMixin(StoreBase):
    """`import_functions`: all of an export's functions, or none of them."""

    def import_functions(self, data: Mapping[str, Any], *, replace: bool = False,
                         with_build: bool = False) -> list[str]:
        """Add every function of `data` (an export) in one transaction; return their names.

        A name the library already has is refused (`DuplicateFunctionError`) unless `replace`:
        then the imported versions are appended after the existing ones (versions are never
        deleted) and become current. A trivial rename of an existing function is always refused.
        With `with_build`, the export's build runs, their batches and its verified programs are
        added too (`_import_build`).
        """
        functions = _functions_of(data)
        with self.transaction():
            version_ids: dict[tuple[str, int], int] = {}
            for entry in functions:
                version_ids.update(self._import_function(entry, replace=replace))
            for entry in functions:
                for version in entry["history"]:
                    self._import_dependencies(version_ids[(entry["name"], version["version"])],
                                              version.get("dependencies") or [])
            for decision in data.get("decisions") or []:
                version_id = version_ids.get((decision.get("name"), decision.get("version")))
                if version_id is not None:
                    self._insert("function_decisions", {
                        "version_id": version_id, "decision": decision["decision"], "mode": decision["mode"],
                        "evidence": json.dumps(decision.get("evidence") or {}, default=str),
                        "created_at": decision.get("created_at") or utc_now()})
            if with_build:
                self._import_build(data)
        return [entry["name"] for entry in functions]

    def _import_build(self, data: Mapping[str, Any]) -> None:
        """The export's build runs with their batches, verified programs and refused group requests, under new ids."""
        batch_ids: dict[int, int] = {}
        for run in data.get("runs") or []:
            if run.get("kind") != "build-api":
                continue
            run_id = self._insert("runs", {
                "kind": run["kind"], "status": run.get("status") or "finished", "model": run.get("model"),
                "config": json.dumps(run.get("config") or {}, default=str, sort_keys=True),
                "started_at": run.get("started_at") or utc_now(), "finished_at": run.get("finished_at")})
            for batch in run.get("batches") or []:
                batch_ids[batch["id"]] = self._insert("batches", {
                    "run_id": run_id, "idx": batch["index"], "question_ids": json.dumps(batch["question_ids"]),
                    "proposals": None if batch.get("proposals") is None else json.dumps(batch["proposals"]),
                    "created_at": batch.get("created_at") or utc_now()})
        for program in data.get("verified_programs") or []:
            self._insert("verified_programs", {
                "batch_id": batch_ids.get(program.get("batch_id")), "question_id": str(program["question_id"]),
                "question": program["question"], "variant": program["variant"], "code": program.get("code"),
                "answer": program.get("answer"), "gold": program.get("gold"), "error": program.get("error"),
                "correct": None if program.get("correct") is None else int(program["correct"]),
                "uses": json.dumps(sorted(program.get("uses") or [])), "withdrawn": program.get("withdrawn"),
                "other_scenes": None if program.get("other_scenes") is None else json.dumps(program["other_scenes"]),
                "created_at": utc_now()})
        for attempt in data.get("group_attempts") or []:
            self._insert("group_attempts", {
                "batch_id": batch_ids.get(attempt.get("batch_id")), "frame": attempt["frame"],
                "question_ids": json.dumps([str(q) for q in attempt["question_ids"]]), "name": attempt["name"],
                "reason": attempt["reason"], "created_at": attempt.get("created_at") or utc_now()})

    def _import_function(self, entry: Mapping[str, Any], *, replace: bool) -> dict[tuple[str, int], int]:
        name = entry["name"]
        existing = self._row("SELECT f.id AS function_id, f.name, max(v.version) AS version FROM functions AS f "
                             "LEFT JOIN function_versions AS v ON v.function_id = f.id "
                             "WHERE f.normalized_name = ? GROUP BY f.id", [normalize_name(name)])
        if existing is not None and (existing["name"] != name or not replace):
            raise DuplicateFunctionError(name, existing["name"])
        if existing is None:
            function_id = self._insert("functions", {"name": name, "normalized_name": normalize_name(name),
                                                     "created_at": entry["history"][0].get("created_at") or utc_now()})
            offset = 0
        else:
            function_id, offset = existing["function_id"], existing["version"] or 0
        ids: dict[tuple[str, int], int] = {}
        for version in entry["history"]:
            now = utc_now()
            version_id = ids[(name, version["version"])] = self._insert("function_versions", {
                "function_id": function_id, "version": offset + version["version"],
                "signature": version["signature"], "docstring": version["docstring"], "code": version.get("code"),
                "content_hash": content_hash(version["signature"], version["docstring"], version.get("code")),
                "status": FunctionStatus(version["status"]).value, "last_error": version.get("last_error"),
                "run_id": None, "batch_id": None, "model": version.get("model"),
                "created_at": version.get("created_at") or now, "updated_at": version.get("updated_at") or now})
            for attempt in version.get("attempts") or []:
                self._insert("implementation_attempts", {
                    "version_id": version_id, "attempt": attempt["attempt"], "prompt_hash": attempt.get("prompt_hash"),
                    "code": attempt.get("code"), "error": attempt.get("error"),
                    "test_call": attempt.get("test_call"), "test_result": attempt.get("test_result"),
                    "passed": attempt.get("passed"), "run_id": None, "batch_id": None,
                    "model": attempt.get("model"), "created_at": attempt.get("created_at") or now})
        self._db.execute("UPDATE functions SET current_version_id = ? WHERE id = ?",
                         [ids[(name, entry["version"])], function_id])
        return ids

    def _import_dependencies(self, version_id: int, names: Sequence[str]) -> None:
        for dependency in dict.fromkeys(names):
            row = self._row("SELECT id FROM functions WHERE name = ?", [dependency])
            if row is None:
                raise StoreError(f"the export's functions depend on {dependency!r}, which it does not hold")
            self._insert("function_dependencies", {"version_id": version_id, "depends_on_id": row["id"]})


def _functions_of(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The export's functions, each with a non-empty history holding its current version."""
    if not isinstance(data, Mapping) or data.get("format") != EXPORT_FORMAT:
        raise StoreError(f"not a library export (its \"format\" is not {EXPORT_FORMAT!r})")
    functions = data.get("functions")
    if not isinstance(functions, list):
        raise StoreError("the export has no \"functions\" list")
    for entry in functions:
        if not isinstance(entry, dict) or not isinstance(entry.get("history"), list) or not entry["history"]:
            raise StoreError(f"the export's function {entry.get('name') if isinstance(entry, dict) else entry!r} "
                             "has no version history")
        try:
            check_function_name(entry.get("name"))
        except ValueError as exc:
            raise StoreError(f"the export holds a function named {exc}") from None
        if entry.get("version") not in {v.get("version") for v in entry["history"]}:
            raise StoreError(f"the export's function {entry['name']!r}: its current version is not in its history")
    return functions
