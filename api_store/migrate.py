"""Applying the schema migrations (`api_store.migrations.MIGRATIONS`) to a database, once each.

A database that records a migration this code does not know was written by a newer store and is
refused; a migration that rebuilds tables runs with foreign keys off and checked before commit.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlite_utils import Database

from api_store.connection import utc_now, write_transaction
from api_store.errors import StoreError
from api_store.migrations import MIGRATIONS, Migration

MIGRATIONS_TABLE = "schema_migrations"


def applied_migrations(db: Database) -> list[tuple[str, str]]:
    """`(name, applied_at)` of every migration recorded in `db`, in the order applied."""
    if not db[MIGRATIONS_TABLE].exists():
        return []
    rows = db.query(f"SELECT name, applied_at FROM {MIGRATIONS_TABLE} ORDER BY rowid")
    return [(row["name"], row["applied_at"]) for row in rows]


def apply_migrations(db: Database, migrations: Sequence[Migration] = MIGRATIONS) -> list[str]:
    """Apply the not-yet-applied entries of `migrations`, in order; return the names applied now.

    Refuses a database that records migrations this code does not know: it was written by a
    newer version of the store, and guessing at its schema could corrupt it.
    """
    names = [name for name, _ in migrations]
    if len(set(names)) != len(names):
        raise ValueError(f"migration names must be unique: {names}")
    applied = [name for name, _ in applied_migrations(db)]
    if applied == names:
        return []  # up to date: open without writing, so read-only files work
    with write_transaction(db):
        db.execute(
            f"CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} "
            "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
    unknown = [name for name, _ in applied_migrations(db) if name not in names]
    if unknown:
        raise StoreError(
            f"database records unknown migrations {unknown}; it was written by a newer vadar"
        )
    newly_applied = []
    for name, migrate in migrations:
        rebuilds = getattr(migrate, "rebuilds_tables", False)
        if rebuilds:
            db.execute("PRAGMA foreign_keys = OFF")  # a no-op inside a transaction, so set it first
        try:
            with write_transaction(db):
                # Re-checked under the write lock, so two processes opening at once apply it once.
                if db.execute(f"SELECT 1 FROM {MIGRATIONS_TABLE} WHERE name = ?", [name]).fetchone():
                    continue
                migrate(db)
                if rebuilds and db.execute("PRAGMA foreign_key_check").fetchone() is not None:
                    raise StoreError(f"migration {name} would break foreign keys; nothing was changed")
                db[MIGRATIONS_TABLE].insert({"name": name, "applied_at": utc_now()})
        finally:
            if rebuilds:
                db.execute("PRAGMA foreign_keys = ON")
        newly_applied.append(name)
    return newly_applied
