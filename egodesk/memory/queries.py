"""What the library holds, read for people: its footage with each one's indexing state, a footage's
clips with what ingest found in each, the memories of the clip under the playhead, and where a piece of
evidence sits in its file. Plain dataclasses, so no SQLAlchemy object leaves the session that read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import and_, or_, select

from egodesk.core.stages import is_searchable
from egodesk.core.stages import rank as stage_rank
from egodesk.core.types import Evidence, FootageKind
from egodesk.memory.store import Caption, Clip, Footage, Job, Keyframe, Store, TranscriptSegment, Unit
from egodesk.perception.ocr import TEXT_BREAK, screen_texts


@dataclass
class FootageInfo:
    id: int
    title: str
    path: str
    kind: str
    start: float
    duration: float
    start_source: str
    has_audio: bool
    stages: dict[str, str]
    state: str  # indexed | indexing | failed | pending | cancelled
    error: str = ""
    thumbnail: Path | None = None
    searchable: bool = False  # its search stages are done; the LLM-built memories may be building
    missing: bool = False  # its media file is gone (moved, deleted, a card taken out): its memories stay


@dataclass
class ClipInfo:
    id: int
    idx: int
    start: float
    end: float
    offset: float
    caption: str
    transcript: list[tuple[float, float, str, str]]  # (start, end, speaker, text)
    tags: list[tuple[str, float]]
    ocr: str
    thumbnails: list[Path] = field(default_factory=list)
    line_ids: list[int] = field(default_factory=list)  # each transcript line's id, in order (who said it: `people said`)


@dataclass
class MemoryView:
    """What memory holds for the clip under the playhead (the memory browser's content)."""

    clip_id: int
    start: float
    end: float
    caption: str
    transcript: list[tuple[float, float, str, str]]
    tags: list[tuple[str, float]]
    ocr: str
    records: list[str]
    statements: list[str]
    line_ids: list[int] = field(default_factory=list)  # each transcript line's id, in order


def overall_state(stages: dict[str, str]) -> str:
    states = set(stages.values())
    if not states or states == {"done"}:
        return "indexed"
    if "failed" in states:
        return "failed"
    if "running" in states:
        return "indexing"
    if "cancelled" in states:
        return "cancelled"
    return "pending"


def footage(store: Store) -> list[FootageInfo]:
    """Every footage in time order, each with its stages' states, first thumbnail and whether its file is
    still there."""
    with store.session() as session:
        rows = session.scalars(select(Footage).order_by(Footage.start_ts, Footage.id)).all()
        all_jobs = session.execute(select(Job.footage_id, Job.stage, Job.state, Job.error)).all()
        thumbs = dict(
            session.execute(
                select(Clip.footage_id, Keyframe.thumb_path).join(Keyframe).where(Clip.idx == 0, Keyframe.idx == 0)
            ).all()
        )
    stages: dict[int, dict[str, str]] = {}
    errors: dict[int, str] = {}
    for footage_id, stage, state, error in all_jobs:
        stages.setdefault(footage_id, {})[stage] = state
        if error:
            errors[footage_id] = f"{stage}: {error}"
    out = []
    for f in rows:
        st = dict(sorted(stages.get(f.id, {}).items(), key=lambda kv: stage_rank(kv[0])))
        thumb = thumbs.get(f.id)
        out.append(
            FootageInfo(
                f.id,
                f.title,
                f.path,
                f.kind,
                f.start_ts,
                f.duration,
                f.start_source,
                f.has_audio,
                st,
                overall_state(st),
                errors.get(f.id, ""),
                Path(thumb) if thumb else None,
                is_searchable(st),
                f.kind != FootageKind.TEXT.value and not Path(f.path).exists(),
            )
        )
    return out


def clips(store: Store, footage_id: int, clip_id: int | None = None) -> list[ClipInfo]:
    """A footage's clips with what ingest found in each (just one clip when `clip_id` is given)."""
    with store.session() as session:
        query = select(Clip).where(Clip.footage_id == footage_id)
        clips = session.scalars(query.where(Clip.id == clip_id) if clip_id is not None else query.order_by(Clip.idx)).all()
        ids = [c.id for c in clips]
        captions = dict(session.execute(select(Caption.clip_id, Caption.text).where(Caption.clip_id.in_(ids))).all())
        segments = session.scalars(
            select(TranscriptSegment).where(TranscriptSegment.clip_id.in_(ids)).order_by(TranscriptSegment.idx)
        ).all()
        keyframes = session.scalars(select(Keyframe).where(Keyframe.clip_id.in_(ids)).order_by(Keyframe.idx)).all()
    out = []
    for clip in clips:
        frames = [k for k in keyframes if k.clip_id == clip.id]
        tags: dict[str, float] = {}
        for kf in frames:
            for label, score in kf.labels or []:
                tags[label] = max(tags.get(label, 0.0), score)
        out.append(
            ClipInfo(
                id=clip.id,
                idx=clip.idx,
                start=clip.start_ts,
                end=clip.end_ts,
                offset=clip.offset,
                caption=captions.get(clip.id, ""),
                transcript=[(s.start_ts, s.end_ts, s.speaker, s.text) for s in segments if s.clip_id == clip.id],
                tags=sorted(tags.items(), key=lambda kv: -kv[1]),
                ocr=TEXT_BREAK.join(screen_texts(k.ocr_text or "" for k in frames)),
                thumbnails=[Path(k.thumb_path) for k in frames if k.thumb_path],
                line_ids=[s.id for s in segments if s.clip_id == clip.id],
            )
        )
    return out


def memory_at(store: Store, footage_id: int, offset: float) -> MemoryView | None:
    """The clip of `footage_id` that contains `offset` seconds into the file, with its memories."""
    with store.session() as session:
        footage = session.get(Footage, footage_id)
        if footage is None:
            return None
        ts = footage.start_ts + offset
        clip = session.scalar(
            select(Clip)
            .where(Clip.footage_id == footage_id, Clip.start_ts <= ts, Clip.end_ts > ts)
            .order_by(Clip.start_ts.desc())
        )
        if clip is None:
            return None
        units = session.scalars(
            select(Unit)
            .where(
                Unit.footage_id == footage_id,
                Unit.kind.in_(("memory-entry", "record", "atomic")),
                Unit.start_ts < clip.end_ts,
                Unit.end_ts > clip.start_ts,
            )
            .order_by(Unit.start_ts)
        ).all()
        clip_id = clip.id
    [info] = clips(store, footage_id, clip_id)
    entries = [u.text for u in units if u.kind == "memory-entry"]
    return MemoryView(
        clip_id=clip_id,
        start=info.start,
        end=info.end,
        caption=info.caption,
        transcript=info.transcript,
        tags=info.tags,
        ocr=info.ocr,
        records=entries or [u.text for u in units if u.kind == "record"],
        statements=[f"[{u.view}] {u.text}" for u in units if u.kind == "atomic"],
        line_ids=info.line_ids,
    )


def place(store: Store, evidence: list[Evidence], starts: dict[int, float]) -> None:
    """Where each piece of evidence is: seconds into its footage file (for the player to seek to) and
    the keyframe of the clip it starts in (for its chip: the window reads nothing to show it). `starts`
    is each footage's start (`footage_starts`), which a caller answering many questions keeps."""
    for ev in evidence:
        if ev.footage_id in starts:
            ev.offset = ev.start - starts[ev.footage_id]
    if not evidence:
        return
    holds_start = or_(
        *(and_(Clip.footage_id == ev.footage_id, Clip.start_ts <= ev.start, Clip.end_ts > ev.start) for ev in evidence)
    )
    query = (
        select(Clip.footage_id, Clip.start_ts, Clip.end_ts, Keyframe.thumb_path)
        .join(Keyframe, Keyframe.clip_id == Clip.id)
        .where(holds_start, Keyframe.thumb_path != "")
        .order_by(Keyframe.idx)
    )
    with store.session() as s:
        frames = s.execute(query).all()
    for ev in evidence:
        for footage_id, start, end, path in frames:
            if footage_id == ev.footage_id and start <= ev.start < end:
                ev.keyframe = path
                break


def footage_starts(store: Store) -> dict[int, float]:
    """Each footage's wall-clock start, by id."""
    with store.session() as s:
        return dict(s.execute(select(Footage.id, Footage.start_ts)).all())
