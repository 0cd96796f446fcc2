"""Durable job rows: one per footage per stage, the state ingest resumes from.

A stage's results and its job's "done" mark are written in the same transaction (see `finish`), so
after a crash a stage is either wholly done or not at all. Jobs left "running" by a crash or a kill
are put back to "pending" when the next worker starts (`recover_orphans`).
"""

from __future__ import annotations

import time

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from egodesk.core.faults import fault_point
from egodesk.memory.store import Footage, Job, Store

VIDEO_STAGES = ("probe", "audio", "asr", "keyframes", "ocr", "captions")
MEMORY_STAGES = ("memory-parent", "memory-visual", "memory-records", "memory-atomic")
RESUMABLE = ("pending", "running", "cancelled", "failed")


def ensure_jobs(session: Session, footage_id: int, stages: tuple[str, ...], done: tuple[str, ...] = ()) -> None:
    """Create the missing job rows of a footage; existing rows keep their state."""
    have = set(session.scalars(select(Job.stage).where(Job.footage_id == footage_id)))
    for stage in stages:
        if stage not in have:
            session.add(Job(footage_id=footage_id, stage=stage, state="done" if stage in done else "pending"))


def recover_orphans(store: Store) -> int:
    """Jobs a dead worker left 'running' become 'pending' again. Returns how many."""
    with store.session() as session:
        result = session.execute(update(Job).where(Job.state == "running").values(state="pending", updated_at=time.time()))
        return result.rowcount or 0


def next_job(store: Store, stage_order: tuple[str, ...], retry_failed: bool = False) -> tuple[int, str] | None:
    """The first unfinished stage of the oldest footage that has one, in stage order."""
    wanted = ("pending", "cancelled", "failed") if retry_failed else ("pending", "cancelled")
    with store.session() as session:
        rows = session.execute(
            select(Job.footage_id, Job.stage, Job.state).join(Footage).order_by(Footage.id)
        ).all()
    per_footage: dict[int, dict[str, str]] = {}
    for footage_id, stage, state in rows:
        per_footage.setdefault(footage_id, {})[stage] = state
    for footage_id, stages in per_footage.items():
        for stage in stage_order:
            state = stages.get(stage)
            if state is None or state == "done":
                continue
            if state == "failed" and not retry_failed:
                break  # later stages of this footage wait for the failed one
            if state in wanted:
                return footage_id, stage
            break
    return None


def set_state(store: Store, footage_id: int, stage: str, state: str, error: str = "", done: int | None = None, total: int | None = None) -> None:
    values: dict = {"state": state, "error": error, "updated_at": time.time()}
    if state == "running":
        values["attempts"] = Job.attempts + 1
    if done is not None:
        values["done"] = done
    if total is not None:
        values["total"] = total
    with store.session() as session:
        session.execute(update(Job).where(Job.footage_id == footage_id, Job.stage == stage).values(**values))


def finish(session: Session, footage_id: int, stage: str, count: int) -> None:
    """Mark a stage done inside the transaction that wrote its results."""
    session.flush()
    fault_point(f"{stage}:commit")  # results written but not committed: a kill here must lose them all
    session.execute(
        update(Job).where(Job.footage_id == footage_id, Job.stage == stage)
        .values(state="done", error="", done=count, total=count, updated_at=time.time())
    )


def stage_states(session: Session, footage_id: int) -> dict[str, str]:
    return dict(session.execute(select(Job.stage, Job.state).where(Job.footage_id == footage_id)).all())
