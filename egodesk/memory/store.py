"""The library database: the engine and session setup over the tables of `egodesk.memory.schema`.

SQLite in WAL mode with a busy timeout and foreign keys on. One writer at a time (SQLite's rule; the
pipeline is the writer). Every stage writes its results in one transaction, so a crash leaves either
all of a stage's rows or none.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from egodesk.memory.migrations import migrate

# The tables, re-exported for the importers that still name them from here; new code imports them from
# egodesk.memory.schema.
from egodesk.memory.schema import Base, Caption, Clip, Footage, IndexInfo, Job, Keyframe, TranscriptSegment, Unit, Vector

__all__ = [
    "BUSY_TIMEOUT_MS",
    "Store",
    "make_engine",
    "Base",
    "Caption",
    "Clip",
    "Footage",
    "IndexInfo",
    "Job",
    "Keyframe",
    "TranscriptSegment",
    "Unit",
    "Vector",
]

# How long a write waits for another connection's lock before it fails with "database is locked"
# (EGODESK_BUSY_TIMEOUT_MS shortens it for the locked-database fault test).
BUSY_TIMEOUT_MS = int(os.environ.get("EGODESK_BUSY_TIMEOUT_MS", "10000"))


def _on_connect(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def make_engine(path: Path) -> Engine:
    path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(f"sqlite:///{path}", connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})
    event.listen(engine, "connect", _on_connect)
    return engine


class Store:
    """The open library database. `session()` gives a unit of work that commits or rolls back whole."""

    def __init__(self, path: Path):
        self.path = path
        self.engine = make_engine(path)
        migrate(self.engine)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self._sessions() as session:
            try:
                yield session
                session.commit()
            except BaseException:
                session.rollback()
                raise

    def close(self) -> None:
        self.engine.dispose()
