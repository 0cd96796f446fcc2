"""Tables of the record and atomic builders: Imprint's compression state and the batch progress mark.

- `event_prototype`: Imprint's event prototypes of one footage (auxiliary, never retrieved): the running
  sum of member context embeddings, recurrence count nu and last-seen time.
- `memory_entry_state`: per consolidated memory entry (a Unit kind="memory-entry") the running sums its
  consolidation compares against (action-object and context) and those of its retrieval vectors.
- `build_progress`: per footage and builder, the last clip a committed batch covered, plus the
  builder's carried-over state (Imprint: the last k action-object embeddings). It is written in the same
  transaction as the batch's units, so a killed build resumes after the last committed batch.

Vectors are float64 bytes so a resumed build continues from exactly the numbers it stopped with.
"""

from __future__ import annotations

import time

import numpy as np
from sqlalchemy import Float, ForeignKey, Integer, LargeBinary, String, UniqueConstraint, select
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Mapped, Session, mapped_column

from egodesk.memory.schema import Base


class EventPrototype(Base):
    __tablename__ = "event_prototype"
    __table_args__ = (UniqueConstraint("footage_id", "seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    footage_id: Mapped[int] = mapped_column(ForeignKey("footage.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)  # creation order within the footage
    context_sum: Mapped[bytes] = mapped_column(LargeBinary)
    count: Mapped[int] = mapped_column(Integer)
    last_seen: Mapped[float] = mapped_column(Float)


class MemoryEntryState(Base):
    __tablename__ = "memory_entry_state"
    __table_args__ = (UniqueConstraint("footage_id", "seq"),)

    unit_id: Mapped[int] = mapped_column(ForeignKey("unit.id", ondelete="CASCADE"), primary_key=True)
    footage_id: Mapped[int] = mapped_column(ForeignKey("footage.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    event_sum: Mapped[bytes] = mapped_column(LargeBinary)
    context_sum: Mapped[bytes] = mapped_column(LargeBinary)
    object_sum: Mapped[bytes] = mapped_column(LargeBinary)
    action_sum: Mapped[bytes] = mapped_column(LargeBinary)
    count: Mapped[int] = mapped_column(Integer)


class BuildProgress(Base):
    __tablename__ = "build_progress"

    footage_id: Mapped[int] = mapped_column(ForeignKey("footage.id", ondelete="CASCADE"), primary_key=True)
    builder: Mapped[str] = mapped_column(String(32), primary_key=True)
    last_idx: Mapped[int] = mapped_column(Integer, default=-1)  # Clip.idx of the last clip done
    batches: Mapped[int] = mapped_column(Integer, default=0)
    state: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    updated_at: Mapped[float] = mapped_column(Float, default=time.time)


TABLES = tuple(Base.metadata.tables[table.__tablename__] for table in (EventPrototype, MemoryEntryState, BuildProgress))


def create_tables(conn: Connection) -> None:
    """The migration that adds these tables (a no-op where they exist already)."""
    Base.metadata.create_all(conn, tables=list(TABLES), checkfirst=True)


def to_bytes(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float64).tobytes()


def from_bytes(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=np.float64).copy()


def get_progress(session: Session, footage_id: int, builder: str) -> BuildProgress:
    """The footage's progress row for `builder`, created (not yet flushed) when there is none."""
    row = session.get(BuildProgress, (footage_id, builder))
    if row is None:
        row = BuildProgress(footage_id=footage_id, builder=builder, last_idx=-1, batches=0)
        session.add(row)
    return row


def last_done(session: Session, footage_id: int, builder: str) -> int:
    row = session.scalar(
        select(BuildProgress.last_idx).where(BuildProgress.footage_id == footage_id, BuildProgress.builder == builder)
    )
    return -1 if row is None else int(row)
