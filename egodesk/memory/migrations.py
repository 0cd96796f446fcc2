"""Schema versions. The database's `PRAGMA user_version` says which migrations have run; each one runs
in its own transaction, so an interrupted upgrade resumes cleanly. Version 1 creates the schema."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine


def _v1_create(conn: Connection) -> None:
    from egodesk.memory.store import Base

    Base.metadata.create_all(conn)


def _v2_record_tables(conn: Connection) -> None:
    from egodesk.memory.record_tables import create_tables

    create_tables(conn)


MIGRATIONS: list[Callable[[Connection], None]] = [_v1_create, _v2_record_tables]


def current_version(conn: Connection) -> int:
    return conn.execute(text("PRAGMA user_version")).scalar_one()


def migrate(engine: Engine) -> int:
    """Run every migration past the stored version; returns the new version."""
    with engine.begin() as conn:
        version = current_version(conn)
    for number, step in enumerate(MIGRATIONS[version:], start=version + 1):
        with engine.begin() as conn:
            step(conn)
            conn.execute(text(f"PRAGMA user_version={number}"))
    return len(MIGRATIONS)
