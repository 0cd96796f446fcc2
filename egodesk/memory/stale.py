"""Moments whose captions and parent-child memory still show an old name (`schema.StaleMoment`).

A change to who someone is (a voice or face named, merged, split or claimed, a line given to another voice)
writes the new names into the lines at once and marks the moments whose memories showed the old ones,
in the change's own transaction; the memories are described and embedded again later, by
`pipeline.speakers.refresh_stale`, because that costs seconds a moment (embedding) while the names must
show at once. A mark outlives a quit, so nothing is left stale for good.
"""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from egodesk.memory.schema import StaleMoment

Spans = dict[int, list[tuple[float, float]]]  # footage id -> moments (wall-clock start, end)


def mark(session: Session, spans: Spans) -> None:
    """Remember that these moments' memories still show an old name."""
    session.add_all(
        StaleMoment(footage_id=footage_id, start_ts=start, end_ts=end)
        for footage_id, moments in spans.items()
        for start, end in moments
    )
    session.flush()


def pending(session: Session) -> dict[int, tuple[list[int], list[tuple[float, float]]]]:
    """footage id -> (the marks' ids, their moments), in footage order."""
    out: dict[int, tuple[list[int], list[tuple[float, float]]]] = defaultdict(lambda: ([], []))
    for row in session.scalars(select(StaleMoment).order_by(StaleMoment.footage_id, StaleMoment.start_ts)):
        ids, moments = out[row.footage_id]
        ids.append(row.id)
        moments.append((row.start_ts, row.end_ts))
    return dict(out)


def clear(session: Session, ids: list[int]) -> None:
    """The marks whose moments were brought up to date."""
    session.execute(delete(StaleMoment).where(StaleMoment.id.in_(ids)))
