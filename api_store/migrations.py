"""Append-only, named schema migrations: the steps, in order (`MIGRATIONS`).

`api_store.migrate` applies them; each entry runs once, inside its own transaction together with
the row that records it in `schema_migrations`, so a crash mid-migration leaves no trace.
Never edit or reorder an entry that has shipped: databases in the wild have recorded it as
applied and will not run it again. Change the schema by appending a new entry.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from sqlite_utils import Database


Migration = tuple[str, Callable[[Database], None]]


def _script(db: Database, sql: str) -> None:
    """Run `;`-separated DDL statement by statement, staying inside the caller's transaction.

    (`executescript` would commit first, breaking the migration's all-or-nothing guarantee.)
    """
    statement = ""
    for line in sql.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            db.execute(statement)
            statement = ""
    if statement.strip():
        raise ValueError(f"incomplete SQL statement in migration: {statement!r}")


def _initial_schema(db: Database) -> None:
    _script(
        db,
        """
        CREATE TABLE runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'failed')),
            model TEXT,
            config TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(config)),
            started_at TEXT NOT NULL,
            finished_at TEXT
        );
        CREATE TABLE batches (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id INTEGER NOT NULL REFERENCES runs(id),
            idx INTEGER NOT NULL CHECK (idx >= 0),
            question_ids TEXT NOT NULL CHECK (json_valid(question_ids)),
            created_at TEXT NOT NULL,
            UNIQUE (run_id, idx)
        );
        -- One row per function name: its identity and the pointer to its current version.
        CREATE TABLE functions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            name TEXT NOT NULL UNIQUE,
            normalized_name TEXT NOT NULL UNIQUE,
            current_version_id INTEGER REFERENCES function_versions(id),
            created_at TEXT NOT NULL
        );
        -- Every version ever recorded. Content is immutable; only status/last_error change.
        CREATE TABLE function_versions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            function_id INTEGER NOT NULL REFERENCES functions(id),
            version INTEGER NOT NULL CHECK (version >= 1),
            signature TEXT NOT NULL,
            docstring TEXT NOT NULL,
            code TEXT,
            content_hash TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('proposed', 'implemented', 'failed')),
            last_error TEXT,
            run_id INTEGER REFERENCES runs(id),
            batch_id INTEGER REFERENCES batches(id),
            model TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (function_id, version),
            CHECK (status <> 'implemented' OR code IS NOT NULL)
        );
        CREATE TRIGGER function_versions_content_immutable
        BEFORE UPDATE OF function_id, version, signature, docstring, code, content_hash,
                         run_id, batch_id, model, created_at
        ON function_versions
        BEGIN
            SELECT RAISE(ABORT, 'function versions are append-only; record a new version');
        END;
        CREATE TRIGGER function_versions_no_delete
        BEFORE DELETE ON function_versions
        BEGIN
            SELECT RAISE(ABORT, 'function versions are append-only; they cannot be deleted');
        END;
        CREATE TRIGGER functions_pointer_same_function
        BEFORE UPDATE OF current_version_id ON functions
        WHEN NEW.current_version_id IS NOT NULL
             AND (SELECT function_id FROM function_versions WHERE id = NEW.current_version_id)
                 IS NOT NEW.id
        BEGIN
            SELECT RAISE(ABORT, 'current_version_id must point at a version of the same function');
        END;
        -- Which library functions a version calls (by name: calls resolve to current versions).
        CREATE TABLE function_dependencies (
            version_id INTEGER NOT NULL REFERENCES function_versions(id),
            depends_on_id INTEGER NOT NULL REFERENCES functions(id),
            PRIMARY KEY (version_id, depends_on_id)
        );
        CREATE INDEX function_dependencies_depends_on ON function_dependencies(depends_on_id);
        -- Every API-agent attempt, attached to the version (proposal) it tried to implement.
        CREATE TABLE implementation_attempts (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            version_id INTEGER NOT NULL REFERENCES function_versions(id),
            attempt INTEGER NOT NULL CHECK (attempt >= 1),
            prompt_hash TEXT,
            code TEXT,
            error TEXT,
            test_call TEXT,
            test_result TEXT,
            passed INTEGER CHECK (passed IN (0, 1)),
            run_id INTEGER REFERENCES runs(id),
            batch_id INTEGER REFERENCES batches(id),
            model TEXT,
            created_at TEXT NOT NULL
        );
        CREATE INDEX implementation_attempts_version ON implementation_attempts(version_id);
        -- One final program per question per run; re-recording replaces it (resume-safe).
        CREATE TABLE programs (
            run_id INTEGER NOT NULL REFERENCES runs(id),
            question_id TEXT NOT NULL,
            batch_id INTEGER REFERENCES batches(id),
            code TEXT,
            answer TEXT,
            error TEXT,
            attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
            prompt_tokens INTEGER NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
            completion_tokens INTEGER NOT NULL DEFAULT 0 CHECK (completion_tokens >= 0),
            latency_s REAL,
            correct INTEGER CHECK (correct IN (0, 1)),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (run_id, question_id)
        );
        -- Function versions joined with their names; what `FunctionRecord.from_row` reads.
        CREATE VIEW function_version_rows AS
        SELECT v.id AS version_id, f.id AS function_id, f.name, f.normalized_name,
               v.version, v.signature, v.docstring, v.code, v.content_hash, v.status,
               v.last_error, v.run_id, v.batch_id, v.model, v.created_at, v.updated_at,
               (f.current_version_id = v.id) AS is_current
        FROM function_versions AS v JOIN functions AS f ON f.id = v.function_id;
        """,
    )


def _library_evidence(db: Database) -> None:
    _script(
        db,
        """
        -- Programs written on build questions while deciding which helpers join the library:
        -- 'with' the candidate helpers or 'without' them. Correct ones are worked examples.
        CREATE TABLE verified_programs (
            id INTEGER PRIMARY KEY,
            batch_id INTEGER REFERENCES batches(id),
            question_id TEXT NOT NULL,
            question TEXT NOT NULL,
            variant TEXT NOT NULL,
            code TEXT,
            answer TEXT,
            gold TEXT,
            error TEXT,
            correct INTEGER CHECK (correct IN (0, 1)),
            uses TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(uses)),
            created_at TEXT NOT NULL
        );
        CREATE INDEX verified_programs_question ON verified_programs (question_id);
        -- Why a function version was admitted, rejected or retired, with the evidence.
        CREATE TABLE function_decisions (
            id INTEGER PRIMARY KEY,
            version_id INTEGER NOT NULL REFERENCES function_versions(id),
            decision TEXT NOT NULL CHECK (decision IN ('admitted', 'rejected', 'retired', 'repair')),
            mode TEXT NOT NULL,
            evidence TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(evidence)),
            created_at TEXT NOT NULL
        );
        CREATE INDEX function_decisions_version ON function_decisions (version_id);
        """,
    )


def _rebuilds_tables(migrate: Callable[[Database], None]) -> Callable[[Database], None]:
    """Mark a migration that recreates a table other tables point at.

    SQLite cannot change a CHECK constraint in place; its documented procedure (create the new
    table, copy, drop the old, rename) needs foreign-key enforcement off, which can only be
    switched outside a transaction. `api_store.migrate.apply_migrations` does that around such a migration and
    runs `PRAGMA foreign_key_check` before committing it.
    """
    migrate.rebuilds_tables = True  # type: ignore[attr-defined]
    return migrate


@_rebuilds_tables
def _run_outcomes_and_batch_proposals(db: Database) -> None:
    """Runs may end `interrupted`; a batch keeps the proposals it implements, so a resume reuses them."""
    _script(
        db,
        """
        CREATE TABLE runs_new (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'interrupted', 'failed')),
            model TEXT,
            config TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(config)),
            started_at TEXT NOT NULL,
            finished_at TEXT
        );
        INSERT INTO runs_new (id, kind, status, model, config, started_at, finished_at)
            SELECT id, kind, status, model, config, started_at, finished_at FROM runs;
        DROP TABLE runs;
        ALTER TABLE runs_new RENAME TO runs;
        ALTER TABLE batches ADD COLUMN proposals TEXT CHECK (proposals IS NULL OR json_valid(proposals));
        """,
    )


def _rebuild_decisions(db: Database, decision_check: str) -> None:
    """`function_decisions` again, with `decision_check` on its `decision` column, rows kept."""
    _script(
        db,
        f"""
        CREATE TABLE function_decisions_new (
            id INTEGER PRIMARY KEY,
            version_id INTEGER NOT NULL REFERENCES function_versions(id),
            decision TEXT NOT NULL {decision_check},
            mode TEXT NOT NULL,
            evidence TEXT NOT NULL DEFAULT '{{}}' CHECK (json_valid(evidence)),
            created_at TEXT NOT NULL
        );
        INSERT INTO function_decisions_new (id, version_id, decision, mode, evidence, created_at)
            SELECT id, version_id, decision, mode, evidence, created_at FROM function_decisions;
        DROP TABLE function_decisions;
        ALTER TABLE function_decisions_new RENAME TO function_decisions;
        CREATE INDEX function_decisions_version ON function_decisions (version_id);
        """,
    )


@_rebuilds_tables
def _evaluated_decisions(db: Database) -> None:
    """A function's figures in each evaluation are kept as `evaluated` decisions."""
    _rebuild_decisions(db, "CHECK (decision IN ('admitted', 'rejected', 'retired', 'repair', 'evaluated'))")


@_rebuilds_tables
def _decision_kinds_in_code(db: Database) -> None:
    """Decision kinds are checked by the store (`evidence.DECISIONS`), so a new kind (a helper's
    search, its validation) needs no table rebuild."""
    _rebuild_decisions(db, "")


def _withdrawn_examples(db: Database) -> None:
    """A right build program can be withdrawn from the worked examples (the validation gate found
    that questions shown it were answered worse), with the reason; it stays as evidence."""
    _script(db, "ALTER TABLE verified_programs ADD COLUMN withdrawn TEXT;")


def _other_scenes(db: Database) -> None:
    """A right build program is run on other scenes its question applies to; what it gave there is
    kept, and one wrong there is no longer counted right (a yes/no answer is right half the time by chance)."""
    _script(db, "ALTER TABLE verified_programs ADD COLUMN other_scenes TEXT CHECK (other_scenes IS NULL OR "
                "json_valid(other_scenes));")


def _group_attempts(db: Database) -> None:
    """Refused group helper requests of the distillation's group route, so a build asks for a group once."""
    _script(db, """
        CREATE TABLE group_attempts (
            id INTEGER PRIMARY KEY,
            batch_id INTEGER REFERENCES batches(id),
            frame TEXT NOT NULL,
            question_ids TEXT NOT NULL CHECK (json_valid(question_ids)),
            name TEXT NOT NULL,
            reason TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        """)


@_rebuilds_tables
def _helper_lifecycle(db: Database) -> None:
    """A helper's life is its version's status: proposed, candidate, admitted, retired or failed.

    What was `implemented` was the library to every reader, so it becomes `admitted` (a version
    the gate had judged, one added by hand or imported, one built with admission off alike); a
    `failed` version whose last decision retired it becomes `retired`. Only the status column's
    check changes: the table, the triggers and the view over it are made again around the same rows.
    """
    _script(
        db,
        """
        DROP VIEW function_version_rows;
        DROP TRIGGER functions_pointer_same_function;
        CREATE TABLE function_versions_new (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            function_id INTEGER NOT NULL REFERENCES functions(id),
            version INTEGER NOT NULL CHECK (version >= 1),
            signature TEXT NOT NULL,
            docstring TEXT NOT NULL,
            code TEXT,
            content_hash TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('proposed', 'candidate', 'admitted', 'retired', 'failed')),
            last_error TEXT,
            run_id INTEGER REFERENCES runs(id),
            batch_id INTEGER REFERENCES batches(id),
            model TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (function_id, version),
            CHECK (status NOT IN ('candidate', 'admitted') OR code IS NOT NULL)
        );
        INSERT INTO function_versions_new
            SELECT v.id, v.function_id, v.version, v.signature, v.docstring, v.code, v.content_hash,
                   CASE
                       WHEN v.status = 'implemented' THEN 'admitted'
                       WHEN v.status = 'failed' AND v.code IS NOT NULL AND (
                           SELECT d.decision FROM function_decisions AS d
                           WHERE d.version_id = v.id AND d.decision IN ('admitted', 'rejected', 'retired')
                           ORDER BY d.id DESC LIMIT 1) = 'retired' THEN 'retired'
                       ELSE v.status
                   END,
                   v.last_error, v.run_id, v.batch_id, v.model, v.created_at, v.updated_at
            FROM function_versions AS v;
        DROP TABLE function_versions;
        ALTER TABLE function_versions_new RENAME TO function_versions;
        CREATE TRIGGER function_versions_content_immutable
        BEFORE UPDATE OF function_id, version, signature, docstring, code, content_hash,
                         run_id, batch_id, model, created_at
        ON function_versions
        BEGIN
            SELECT RAISE(ABORT, 'function versions are append-only; record a new version');
        END;
        CREATE TRIGGER function_versions_no_delete
        BEFORE DELETE ON function_versions
        BEGIN
            SELECT RAISE(ABORT, 'function versions are append-only; they cannot be deleted');
        END;
        CREATE TRIGGER functions_pointer_same_function
        BEFORE UPDATE OF current_version_id ON functions
        WHEN NEW.current_version_id IS NOT NULL
             AND (SELECT function_id FROM function_versions WHERE id = NEW.current_version_id)
                 IS NOT NEW.id
        BEGIN
            SELECT RAISE(ABORT, 'current_version_id must point at a version of the same function');
        END;
        CREATE VIEW function_version_rows AS
        SELECT v.id AS version_id, f.id AS function_id, f.name, f.normalized_name,
               v.version, v.signature, v.docstring, v.code, v.content_hash, v.status,
               v.last_error, v.run_id, v.batch_id, v.model, v.created_at, v.updated_at,
               (f.current_version_id = v.id) AS is_current
        FROM function_versions AS v JOIN functions AS f ON f.id = v.function_id;
        """,
    )


MIGRATIONS: list[Migration] = [
    ("0001_initial_schema", _initial_schema),
    ("0002_library_evidence", _library_evidence),
    ("0003_run_outcomes_and_batch_proposals", _run_outcomes_and_batch_proposals),
    ("0004_evaluated_decisions", _evaluated_decisions),
    ("0005_decision_kinds_in_code", _decision_kinds_in_code),
    ("0006_withdrawn_examples", _withdrawn_examples),
    ("0007_helper_lifecycle", _helper_lifecycle),
    ("0008_other_scenes", _other_scenes),
    ("0009_group_attempts", _group_attempts),
]
