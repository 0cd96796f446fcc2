"""Unit vectors in SQLite: the source of truth every hnswlib index is rebuilt from.

Table `vector` (unit_id, space, data): `data` is the float32 bytes of one L2-normalised vector; `space`
names the embedding space, which is also the name of the index built over it ("caption", "subchunk",
"visual-frame", ...). A unit has at most one vector per space; writing it again replaces it.

All functions take an open SQLAlchemy session and never commit: the caller's unit of work decides
(`Store.session()`), so a builder writes its units and their vectors in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, cast

import numpy as np
from sqlalchemy import CursorResult, Result, delete, func, select
from sqlalchemy.dialects.sqlite import insert
from sqlalchemy.orm import Session

from egodesk.memory.schema import Vector

# SQLite caps bound parameters per statement (32,766 since 3.32); stay well below it.
_IN_CHUNK = 10_000


def normalise(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length as float32 (cosine = dot product). A zero row cannot be a direction
    for cosine search, so it is refused rather than silently stored as NaN."""
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    if matrix.ndim != 2:
        raise ValueError(f"expected a (n, dim) matrix, got shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if np.any(norms < 1e-12) or not np.all(np.isfinite(norms)):
        bad = np.flatnonzero((norms[:, 0] < 1e-12) | ~np.isfinite(norms[:, 0]))
        raise ValueError(f"vectors {bad[:5].tolist()} are zero or not finite; cannot be used for cosine search")
    return (matrix / norms).astype(np.float32, copy=False)


def put_vectors(session: Session, space: str, unit_ids: Sequence[int], matrix: np.ndarray) -> None:
    """Store (or replace) one vector per unit in `space`. Rows are L2-normalised before storing.
    The units must exist (foreign key); nothing is committed here."""
    ids = [int(i) for i in unit_ids]
    matrix = normalise(matrix)
    if len(ids) != matrix.shape[0]:
        raise ValueError(f"{len(ids)} unit ids for {matrix.shape[0]} vectors")
    if not ids:
        return
    stmt = insert(Vector)
    stmt = stmt.on_conflict_do_update(index_elements=[Vector.unit_id, Vector.space], set_={"data": stmt.excluded.data})
    session.execute(stmt, [{"unit_id": uid, "space": space, "data": row.tobytes()} for uid, row in zip(ids, matrix)])


def load_vectors(session: Session, space: str, unit_ids: Iterable[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(ids int64 (n,), matrix float32 (n, dim)) of `space`, ordered by unit id; all of the space's
    vectors, or only those of `unit_ids` that have one. An empty space gives shapes (0,) and (0, 0)."""
    if unit_ids is None:
        rows = session.execute(select(Vector.unit_id, Vector.data).where(Vector.space == space).order_by(Vector.unit_id)).all()
    else:
        wanted = sorted({int(i) for i in unit_ids})
        rows = []
        for start in range(0, len(wanted), _IN_CHUNK):
            chunk = wanted[start : start + _IN_CHUNK]
            rows += session.execute(
                select(Vector.unit_id, Vector.data).where(Vector.space == space, Vector.unit_id.in_(chunk))
            ).all()
        rows.sort(key=lambda r: r[0])
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    dim = len(rows[0][1]) // 4
    # One join + one frombuffer instead of a numpy call per row: 100k rows load in a fraction of a second.
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
    return ids, matrix.copy()


def vector_ids(session: Session, space: str) -> np.ndarray:
    """The unit ids that have a vector in `space` (int64, sorted). Read from the driver's cursor: every
    index load runs this (a library's first question loads several) and ORM rows tripled its time."""
    driver = session.connection().connection.driver_connection
    assert driver is not None  # a connection checked out of the pool has its sqlite3 connection
    cursor = driver.execute(f"SELECT unit_id FROM {Vector.__tablename__} WHERE space = ? ORDER BY unit_id", (space,))
    return np.fromiter((row[0] for row in cursor), dtype=np.int64)


def vector_dim(session: Session, space: str) -> int | None:
    """The dimension of the space's stored vectors (None when it has none)."""
    size = session.scalar(select(func.length(Vector.data)).where(Vector.space == space).limit(1))
    return None if size is None else int(size) // 4


def spaces_of(session: Session, unit_ids: Iterable[int]) -> dict[str, list[int]]:
    """For the given units, which spaces hold a vector of each: {space: [unit ids]}."""
    wanted = sorted({int(i) for i in unit_ids})
    out: dict[str, list[int]] = {}
    for start in range(0, len(wanted), _IN_CHUNK):
        chunk = wanted[start : start + _IN_CHUNK]
        for uid, space in session.execute(select(Vector.unit_id, Vector.space).where(Vector.unit_id.in_(chunk))):
            out.setdefault(space, []).append(uid)
    return out


def delete_vectors(session: Session, space: str | None = None, unit_ids: Iterable[int] | None = None) -> int:
    """Delete vectors: of `unit_ids` in `space`, of `unit_ids` in every space (space None), or a whole
    space (unit_ids None). Returns how many rows went. Refuses to delete everything at once."""
    if space is None and unit_ids is None:
        raise ValueError("delete_vectors needs a space, unit ids, or both")
    if unit_ids is None:
        return _rowcount(session.execute(delete(Vector).where(Vector.space == space)))
    wanted = sorted({int(i) for i in unit_ids})
    removed = 0
    for start in range(0, len(wanted), _IN_CHUNK):
        stmt = delete(Vector).where(Vector.unit_id.in_(wanted[start : start + _IN_CHUNK]))
        if space is not None:
            stmt = stmt.where(Vector.space == space)
        removed += _rowcount(session.execute(stmt))
    return removed


def _rowcount(result: Result[Any]) -> int:
    """The rows a DELETE removed (session.execute is typed as returning a plain Result)."""
    return cast("CursorResult[Any]", result).rowcount
