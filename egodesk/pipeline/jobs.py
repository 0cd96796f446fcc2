"""Durable job rows: one per footage per stage, the state ingest resumes from.

A stage's results and its job's "done" mark are written in the same transaction (see `finish`), so
after a crash a stage is either wholly done or not at all. Jobs left "running" by a crash or a kill
are put back to "pending" by the next holder of the library's writer lock (`recover_orphans`). The
queue runs searchable stages first (`next_job`). A failure is stored as
a sentence the user can act on (`failure_text`): a full disk and a database held locked by another
program are named as such.
"""

from __future__ import annotations

import errno
import time

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from egodesk.core.faults import fault_point
from egodesk.core.stages import LLM_STAGES, MEMORY_STAGES, VIDEO_STAGES
from egodesk.core.types import FootageKind
from egodesk.memory.store import Footage, Job, Store

# What each kind of footage skips: a photo has no sound; a sound recording no pictures, so nothing seen.
_SKIPPED = {
    FootageKind.VIDEO: (),
    FootageKind.PHOTO: ("audio", "asr", "speakers"),
    FootageKind.AUDIO: ("keyframes", "faces", "ocr", "memory-visual"),
}
RESUMABLE = ("pending", "running", "cancelled", "failed")
DISK_FULL = "the disk is full (no space left on device): free some space, then resume"
BUSY = "the library is busy: another program holds its database locked; resume once it has finished"


def stages_for(kind: FootageKind) -> tuple[str, ...]:
    """The stages a media footage of `kind` goes through, in order (text tracks have their own)."""
    return tuple(stage for stage in VIDEO_STAGES + MEMORY_STAGES if stage not in _SKIPPED[kind])


def ensure_jobs(session: Session, footage_id: int, stages: tuple[str, ...], done: tuple[str, ...] = ()) -> None:
    """Create the missing job rows of a footage; existing rows keep their state."""
    have = set(session.scalars(select(Job.stage).where(Job.footage_id == footage_id)))
    for stage in stages:
        if stage not in have:
            session.add(Job(footage_id=footage_id, stage=stage, state="done" if stage in done else "pending"))


def recover_orphans(store: Store) -> int:
    """Jobs a dead worker left 'running' become 'pending' again. Returns how many. Call it only while
    holding the library's writer lock (runner.py): that proves no live worker owns a running job."""
    with store.session() as session:
        result = session.execute(update(Job).where(Job.state == "running").values(state="pending", updated_at=time.time()))
        return result.rowcount or 0


def next_job(store: Store, stage_order: tuple[str, ...], retry_failed: bool = False) -> tuple[int, str] | None:
    """The next stage to run: the first unfinished stage of a footage, in stage order, taking every
    footage's searchable stages before any footage's LLM-built memories, newest footage first."""
    wanted = ("pending", "cancelled", "failed") if retry_failed else ("pending", "cancelled")
    with store.session() as session:
        rows = session.execute(select(Job.footage_id, Job.stage, Job.state).join(Footage).order_by(Footage.id.desc())).all()
    per_footage: dict[int, dict[str, str]] = {}
    for footage_id, stage, state in rows:
        per_footage.setdefault(footage_id, {})[stage] = state
    firsts = [
        (footage_id, _first_unfinished(stages, stage_order, wanted, retry_failed)) for footage_id, stages in per_footage.items()
    ]
    ready = [(footage_id, stage) for footage_id, stage in firsts if stage is not None]
    searchable = [(footage_id, stage) for footage_id, stage in ready if stage not in LLM_STAGES]
    return searchable[0] if searchable else ready[0] if ready else None


def _first_unfinished(
    stages: dict[str, str], stage_order: tuple[str, ...], wanted: tuple[str, ...], retry_failed: bool
) -> str | None:
    """A footage's first stage not done, when it may run now (a failed or running one blocks the rest)."""
    for stage in stage_order:
        state = stages.get(stage)
        if state is None or state == "done":
            continue
        if state == "failed" and not retry_failed:
            return None  # later stages of this footage wait for the failed one
        return stage if state in wanted else None
    return None


def set_state(
    store: Store, footage_id: int, stage: str, state: str, error: str = "", done: int | None = None, total: int | None = None
) -> None:
    values: dict = {"state": state, "error": error, "updated_at": time.time()}
    if state == "running":
        values["attempts"] = Job.attempts + 1
    if done is not None:
        values["done"] = done
    if total is not None:
        values["total"] = total
    with store.session() as session:
        session.execute(update(Job).where(Job.footage_id == footage_id, Job.stage == stage).values(**values))
    if state == "running":
        fault_point(f"{stage}:start")  # marked running, nothing of the stage done yet


def finish(session: Session, footage_id: int, stage: str, count: int) -> None:
    """Mark a stage done inside the transaction that wrote its results."""
    session.flush()
    fault_point(f"{stage}:commit")  # results written but not committed: a kill here must lose them all
    session.execute(
        update(Job)
        .where(Job.footage_id == footage_id, Job.stage == stage)
        .values(state="done", error="", done=count, total=count, updated_at=time.time())
    )


def stage_states(session: Session, footage_id: int) -> dict[str, str]:
    return dict(session.execute(select(Job.stage, Job.state).where(Job.footage_id == footage_id)).all())


def storage_problem(exc: BaseException) -> str | None:
    """DISK_FULL or BUSY when `exc` (or what caused it) is a full disk or a database another connection
    holds locked past the busy timeout; None for any other error."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        err = todo.pop()
        if err is None or id(err) in seen:
            continue
        seen.add(id(err))
        text = str(err).lower()
        if (
            (isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT))
            or "database or disk is full" in text
            or "no space left on device" in text
        ):
            return DISK_FULL
        if "database is locked" in text or "database is busy" in text:
            return BUSY
        todo += [err.__cause__, err.__context__, getattr(err, "orig", None)]  # `orig`: SQLAlchemy's DBAPI error
    return None


def failure_text(exc: BaseException) -> str:
    """What a failed job's row says: the fix first when there is one, then the error itself."""
    detail = f"{type(exc).__name__}: {exc}"
    problem = storage_problem(exc)
    return f"{problem} ({detail})" if problem else detail
