"""Keyed units: how a builder stays idempotent.

A builder gives each top-level unit it makes a stable source key (meta "key": "caption:12",
"frame:40"...) and a digest of what the unit was made from (meta "digest"). On a rerun it declares
the keys and digests it wants now; units whose key and digest still match are kept untouched, the
rest go (with their children, their vectors and their index labels), and only what is missing is
built again. So running a builder twice adds nothing, and a changed source replaces only its units.
"""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from egodesk.memory.indices import IndexManager
from egodesk.memory.schema import Unit


def sync_units(
    s: Session,
    index_manager: IndexManager,
    footage_id: int,
    builder: str,
    wanted: dict[str, str],
    kinds: tuple[str, ...] | None = None,
) -> tuple[set[str], int]:
    """Delete the footage's top-level `builder` units (of `kinds`, default all) whose key is not in
    `wanted` or whose digest differs; returns (keys kept, top-level units removed). Runs in the
    caller's transaction; index labels follow its commit."""
    query = select(Unit).where(Unit.footage_id == footage_id, Unit.builder == builder, Unit.parent_id.is_(None))
    if kinds:
        query = query.where(Unit.kind.in_(kinds))
    kept: set[str] = set()
    stale: list[int] = []
    for unit in s.scalars(query):
        meta = unit.meta or {}
        key = meta.get("key")
        if key in wanted and key not in kept and meta.get("digest") == wanted[key]:
            kept.add(key)
        else:
            stale.append(unit.id)
    if stale:
        children = s.scalars(select(Unit.id).where(Unit.parent_id.in_(stale))).all()
        index_manager.remove_units([*stale, *children], session=s)
        s.execute(delete(Unit).where(Unit.id.in_([*children, *stale])))
    return kept, len(stale)
