"""The function library: proposals, versioned implementations, failures, dependencies, attempts.

Versions are append-only. `propose` and `implement` add a version and move the function's
current-version pointer to it; `mark_admitted`, `mark_retired` and `mark_failed` change only the
status of the current version (`FunctionStatus`: proposed -> candidate -> admitted -> retired).
The database enforces the append-only rule with triggers, so no caller can rewrite history.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from api_store.base import StoreBase
from api_store.connection import utc_now
from api_store.errors import DuplicateFunctionError, StoreError, UnknownFunctionError
from api_store.names import check_function_name, content_hash, normalize_name
from api_store.records import AttemptRecord, FunctionRecord, FunctionStatus

_ATTEMPT_COLUMNS = """
    a.id, f.name AS function_name, v.version, a.attempt, a.prompt_hash, a.code, a.error,
    a.test_call, a.test_result, a.passed, a.run_id, a.batch_id, a.model, a.created_at
"""


class FunctionsMixin(StoreBase):
    """Methods of `ApiStore` that concern library functions."""

    # ----------------------------------------------------------------- writing

    def propose(
        self,
        name: str,
        signature: str,
        docstring: str,
        *,
        run_id: int | None = None,
        batch_id: int | None = None,
        model: str | None = None,
    ) -> FunctionRecord:
        """Record a new function proposed by the Signature agent (status `proposed`, no code).

        A name whose current version failed or was retired may be proposed again (a new version). Any other
        clash, including a trivial rename (same `normalize_name`), raises
        `DuplicateFunctionError`, so the library never holds two copies of one helper.
        """
        check_function_name(name)
        with self.transaction():
            existing = self._function_row_by_normalized(normalize_name(name))
            if existing is not None:
                if existing["name"] != name or not FunctionStatus(existing["status"]).gone:
                    raise DuplicateFunctionError(name, existing["name"])
                function_id = existing["function_id"]
            else:
                function_id = self._insert(
                    "functions",
                    {
                        "name": name,
                        "normalized_name": normalize_name(name),
                        "created_at": utc_now(),
                    },
                )
            self._add_version(
                function_id, signature, docstring, None, FunctionStatus.PROPOSED,
                run_id=run_id, batch_id=batch_id, model=model,
            )
            return self.current(name)

    def implement(
        self,
        name: str,
        code: str,
        *,
        signature: str | None = None,
        docstring: str | None = None,
        dependencies: Sequence[str] | None = None,
        run_id: int | None = None,
        batch_id: int | None = None,
        model: str | None = None,
    ) -> FunctionRecord:
        """Record working `code` for `name` as a new, current `candidate` version: it runs, but
        only the admission gate (`mark_admitted`) puts it in the library.

        Works from any status (a failed function can be repaired); the name must exist.
        `signature`/`docstring` default to the current version's; `dependencies=None` keeps the
        current version's dependency list. Recording content identical to a current version that
        runs (candidate or admitted) is a no-op, so a resumed run does not add empty versions.
        """
        with self.transaction():
            current = self.current(name)
            signature = current.signature if signature is None else signature
            docstring = current.docstring if docstring is None else docstring
            deps = list(current.dependencies) if dependencies is None else list(dependencies)
            same_content = current.content_hash == content_hash(signature, docstring, code)
            if (
                same_content
                and current.status.runs
                and list(current.dependencies) == deps
            ):
                return current
            row = self._function_row(name)
            self._add_version(
                row["function_id"], signature, docstring, code, FunctionStatus.CANDIDATE,
                run_id=run_id, batch_id=batch_id, model=model,
            )
            self.set_dependencies(name, deps)
            return self.current(name)

    def mark_admitted(self, name: str) -> FunctionRecord:
        """The current version, a candidate, joins the library (the admission gate's verdict)."""
        with self.transaction():
            current = self.current(name)
            if current.status is FunctionStatus.ADMITTED:
                return current
            if current.status is not FunctionStatus.CANDIDATE:
                raise StoreError(f"only a candidate can be admitted; {name} v{current.version} is {current.status.value}")
            return self._set_status(name, FunctionStatus.ADMITTED, None)

    def mark_retired(self, name: str, reason: str) -> FunctionRecord:
        """The current version leaves the library with `reason`; its history stays."""
        return self._set_status(name, FunctionStatus.RETIRED, reason)

    def mark_failed(self, name: str, reason: str) -> FunctionRecord:
        """Mark the current version `failed` with `reason`; failed functions leave the prompts."""
        return self._set_status(name, FunctionStatus.FAILED, reason)

    def _set_status(self, name: str, status: FunctionStatus, reason: str | None) -> FunctionRecord:
        with self.transaction():
            row = self._function_row(name)
            self._db.execute(
                "UPDATE function_versions SET status = ?, last_error = ?, updated_at = ? "
                "WHERE id = ?",
                [status.value, reason, utc_now(), row["version_id"]],
            )
            return self.current(name)

    def set_dependencies(self, name: str, dependencies: Iterable[str]) -> None:
        """Replace the list of library functions that the current version of `name` calls.

        Every dependency must exist; a function may not depend on itself, directly or through
        others, so depth-first implementation and topological rendering always terminate.
        """
        deps = list(dict.fromkeys(dependencies))  # de-duplicate, keep order
        with self.transaction():
            row = self._function_row(name)
            dep_rows = [self._function_row(dep) for dep in deps]
            for dep in deps:
                if dep == name or name in self._transitive_dependencies(dep):
                    raise StoreError(f"{name!r} cannot depend on {dep!r}: that would be a cycle")
            self._db.execute(
                "DELETE FROM function_dependencies WHERE version_id = ?", [row["version_id"]]
            )
            self._db["function_dependencies"].insert_all(
                {"version_id": row["version_id"], "depends_on_id": dep["function_id"]}
                for dep in dep_rows
            )

    def record_attempt(
        self,
        name: str,
        attempt: int,
        *,
        code: str | None = None,
        error: str | None = None,
        test_call: str | None = None,
        test_result: str | None = None,
        passed: bool | None = None,
        prompt_hash: str | None = None,
        run_id: int | None = None,
        batch_id: int | None = None,
        model: str | None = None,
    ) -> AttemptRecord:
        """Log one API-agent attempt at `name`, attached to its current version (the proposal).

        Attempts are a log: recording the same attempt number twice (e.g. after a resume) keeps
        both rows. Use `names.prompt_hash(prompt)` for `prompt_hash`.
        """
        with self.transaction():
            row = self._function_row(name)
            attempt_id = self._insert(
                "implementation_attempts",
                {
                    "version_id": row["version_id"],
                    "attempt": attempt,
                    "prompt_hash": prompt_hash,
                    "code": code,
                    "error": error,
                    "test_call": test_call,
                    "test_result": test_result,
                    "passed": None if passed is None else int(passed),
                    "run_id": run_id,
                    "batch_id": batch_id,
                    "model": model,
                    "created_at": utc_now(),
                },
            )
            found = self._row(
                f"SELECT {_ATTEMPT_COLUMNS} FROM implementation_attempts AS a "
                "JOIN function_versions AS v ON v.id = a.version_id "
                "JOIN functions AS f ON f.id = v.function_id WHERE a.id = ?",
                [attempt_id],
            )
            assert found is not None
            return AttemptRecord.from_row(found)

    # ----------------------------------------------------------------- reading

    def current(self, name: str) -> FunctionRecord:
        """The current version of `name`, whatever its status; `UnknownFunctionError` if none."""
        records = self._load_versions("name = ? AND is_current", [name])
        if not records:
            raise UnknownFunctionError(name)
        return records[0]

    def __contains__(self, name: object) -> bool:
        with self._snapshot():
            return self._row("SELECT 1 FROM functions WHERE name = ?", [name]) is not None

    def functions(
        self,
        status: FunctionStatus | str | Iterable[FunctionStatus | str] | None = None,
        *,
        include_failed: bool = False,
    ) -> list[FunctionRecord]:
        """Current versions in creation order (the order the library grew in).

        `status` filters to one status or several; without it, every status except `failed` and
        `retired` (unless `include_failed`). What prompts show is `library()`.
        """
        if status is None:
            wanted = [s.value for s in FunctionStatus if include_failed or not s.gone]
        elif isinstance(status, str):
            wanted = [FunctionStatus(status).value]
        else:
            wanted = [FunctionStatus(s).value for s in status]
        marks = ", ".join("?" for _ in wanted)
        return self._load_versions(f"is_current AND status IN ({marks})", wanted)

    def library(self, *, with_candidates: bool = False) -> list[FunctionRecord]:
        """The library: the admitted helpers, in the order it grew. `with_candidates` adds the
        candidates on their way to the gate, for who builds on them before the verdict (the API
        agent implementing a batch depth-first, its ground-truth checks)."""
        wanted = [FunctionStatus.ADMITTED, *([FunctionStatus.CANDIDATE] if with_candidates else [])]
        return self.functions(wanted)

    def history(self, name: str) -> list[FunctionRecord]:
        """Every version of `name`, oldest first; the current one has `is_current=True`."""
        records = self._load_versions("name = ?", [name])
        if not records:
            raise UnknownFunctionError(name)
        return records

    def find_by_normalized_name(self, name: str) -> FunctionRecord | None:
        """The current version of the function whose normalised name equals `name`'s, if any."""
        records = self._load_versions("normalized_name = ? AND is_current", [normalize_name(name)])
        return records[0] if records else None

    def dependencies(self, name: str) -> list[str]:
        """Names the current version of `name` calls, in the order they were recorded."""
        return list(self.current(name).dependencies)

    def dependents(self, name: str) -> list[str]:
        """Names whose current version calls `name` (e.g. to revisit them when `name` fails)."""
        with self._snapshot():
            row = self._function_row(name)
            rows = self._rows(
                "SELECT f.name FROM function_dependencies AS d "
                "JOIN functions AS f ON f.current_version_id = d.version_id "
                "WHERE d.depends_on_id = ? ORDER BY f.id",
                [row["function_id"]],
            )
        return [r["name"] for r in rows]

    def attempts(self, name: str) -> list[AttemptRecord]:
        """Every recorded implementation attempt for `name`, across all versions, oldest first."""
        with self._snapshot():
            self._function_row(name)
            rows = self._rows(
                f"SELECT {_ATTEMPT_COLUMNS} FROM implementation_attempts AS a "
                "JOIN function_versions AS v ON v.id = a.version_id "
                "JOIN functions AS f ON f.id = v.function_id WHERE f.name = ? ORDER BY a.id",
                [name],
            )
        return [AttemptRecord.from_row(r) for r in rows]

    # ----------------------------------------------------------------- internals

    def _add_version(
        self,
        function_id: int,
        signature: str,
        docstring: str,
        code: str | None,
        status: FunctionStatus,
        *,
        run_id: int | None,
        batch_id: int | None,
        model: str | None,
    ) -> None:
        previous = self._row(
            "SELECT max(version) AS version FROM function_versions WHERE function_id = ?",
            [function_id],
        )
        now = utc_now()
        version_id = self._insert(
            "function_versions",
            {
                "function_id": function_id,
                "version": ((previous or {}).get("version") or 0) + 1,
                "signature": signature,
                "docstring": docstring,
                "code": code,
                "content_hash": content_hash(signature, docstring, code),
                "status": status.value,
                "last_error": None,
                "run_id": run_id,
                "batch_id": batch_id,
                "model": model,
                "created_at": now,
                "updated_at": now,
            },
        )
        self._db.execute(
            "UPDATE functions SET current_version_id = ? WHERE id = ?",
            [version_id, function_id],
        )

    def _function_row(self, name: str) -> dict[str, Any]:
        row = self._row(
            "SELECT function_id, version_id, name, status FROM function_version_rows "
            "WHERE name = ? AND is_current",
            [name],
        )
        if row is None:
            raise UnknownFunctionError(name)
        return row

    def _function_row_by_normalized(self, normalized: str) -> dict[str, Any] | None:
        return self._row(
            "SELECT function_id, version_id, name, status FROM function_version_rows "
            "WHERE normalized_name = ? AND is_current",
            [normalized],
        )

    def _transitive_dependencies(self, name: str) -> set[str]:
        rows = self._rows(
            """
            WITH RECURSIVE reach(id) AS (
                SELECT d.depends_on_id FROM function_dependencies AS d
                JOIN functions AS f ON f.current_version_id = d.version_id WHERE f.name = ?
                UNION
                SELECT d.depends_on_id FROM reach
                JOIN functions AS f ON f.id = reach.id
                JOIN function_dependencies AS d ON d.version_id = f.current_version_id
            )
            SELECT f.name FROM reach JOIN functions AS f ON f.id = reach.id
            """,
            [name],
        )
        return {r["name"] for r in rows}

    def _load_versions(self, where: str, params: list[Any]) -> list[FunctionRecord]:
        """Function versions matching `where` (on `function_version_rows`), with dependencies."""
        with self._snapshot():
            rows = self._rows(
                f"SELECT * FROM function_version_rows WHERE {where} "
                "ORDER BY function_id, version",
                params,
            )
            dep_rows = self._rows(
                "SELECT d.version_id, f.name FROM function_dependencies AS d "
                "JOIN functions AS f ON f.id = d.depends_on_id "
                "WHERE d.version_id IN "
                f"(SELECT version_id FROM function_version_rows WHERE {where}) "
                "ORDER BY d.rowid",
                params,
            )
        deps: dict[int, list[str]] = {}
        for dep in dep_rows:
            deps.setdefault(dep["version_id"], []).append(dep["name"])
        return [FunctionRecord.from_row(r, tuple(deps.get(r["version_id"], ()))) for r in rows]
