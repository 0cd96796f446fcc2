"""Forgetting: remove a footage, or a time range of it, from every place the library keeps it.

Four places hold a footage: its rows in SQLite (footage, clips, keyframes, transcript, captions,
units, speech turns, voice appearances and face sightings; deleting them cascades to jobs and vectors;
the voice and face prints it shaped are recomputed without it, `people.footage_forgotten`,
`faces.footage_forgotten`), the labels of its units in
every hnswlib index (cascading rows cannot reach those: they are marked deleted explicitly and the
indices saved), and its thumbnails on disk. The SQLite part is one transaction; thumbnails are deleted
after it commits (a failed forget leaves everything as it was) and only inside the library's thumbnails
folder.

A range forget deletes the interaction records in the range, not the consolidated entries they were
merged into: those also hold records from outside it. The footage's record stream is then replayed
without the forgotten records (`record_compression.recompress`), so no entry, prototype sum or
carried-over history keeps a trace of them.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import and_, delete, or_, select
from sqlalchemy.orm import Session

from egodesk.core.paths import LibraryPaths
from egodesk.core.settings import Settings
from egodesk.memory import faces, people, record_compression
from egodesk.memory.indices import IndexManager
from egodesk.memory.schema import Caption, Clip, Footage, Keyframe, TranscriptSegment, Unit
from egodesk.memory.store import Store
from egodesk.perception.embedder import TextEmbedder

log = logging.getLogger(__name__)

_CHUNK = 10_000  # ids per IN (...) (SQLite caps bound parameters)


@dataclass
class ForgetReport:
    footage_id: int
    footage_deleted: bool = False
    clips: int = 0
    units: int = 0
    vectors: int = 0
    thumbnails: int = 0


def forget(
    store: Store,
    index_manager: IndexManager,
    paths: LibraryPaths,
    footage_id: int,
    start: float | None = None,
    end: float | None = None,
    embedder: TextEmbedder | None = None,
    settings: Settings | None = None,
) -> ForgetReport:
    """Delete the footage (start and end None), or what of it overlaps [start, end] (wall-clock
    seconds; one side None = open): clips, keyframes, transcript segments, captions and units whose
    interval overlaps, with their derived units, vectors, index labels and thumbnails. The footage
    row itself stays when only a range goes; its interaction records are then recompressed, which
    needs the `embedder` (and the compression `settings`, default ones if None). Raises KeyError for
    an unknown footage."""
    whole = start is None and end is None
    lo = float("-inf") if start is None else start
    hi = float("inf") if end is None else end
    report = ForgetReport(footage_id, footage_deleted=whole)
    with store.session() as s:
        if s.get(Footage, footage_id) is None:
            raise KeyError(f"no footage with id {footage_id}")
        in_range = [Clip.footage_id == footage_id, *([] if whole else _overlap(Clip, lo, hi))]
        clip_ids = s.scalars(select(Clip.id).where(*in_range)).all()
        thumbs = [p for p in s.scalars(select(Keyframe.thumb_path).join(Clip).where(*in_range)) if p]
        unit_ids = _units_to_forget(s, footage_id, None if whole else (lo, hi))
        voices = people.voices_in(s, footage_id)  # their prints are recomputed without it
        seen = faces.faces_in(s, footage_id)  # so are the faces' (its sightings go with its clips)
        report.clips, report.units = len(clip_ids), len(unit_ids)
        report.vectors = sum(index_manager.remove_units(unit_ids, session=s).values())
        if whole:
            s.execute(delete(Footage).where(Footage.id == footage_id))
        else:
            for first in range(0, len(unit_ids), _CHUNK):
                s.execute(delete(Unit).where(Unit.id.in_(unit_ids[first : first + _CHUNK])))
            # Before the clips go: an entry belongs to its first member's clip, and would cascade to all its members.
            if s.scalar(
                select(Unit.id).where(Unit.footage_id == footage_id, Unit.builder == record_compression.BUILDER).limit(1)
            ):
                if embedder is None:
                    raise ValueError("forgetting a time range of a footage with interaction records needs the embedder")
                record_compression.recompress(s, index_manager, embedder, footage_id, settings or Settings())
            # Clips cascade to their keyframes, captions, segments and units; then what overlaps on its own.
            s.execute(delete(Clip).where(*in_range))
            for table in (Caption, TranscriptSegment):
                s.execute(delete(table).where(table.footage_id == footage_id, *_overlap(table, lo, hi)))
        people.footage_forgotten(s, footage_id, voices, None if whole else (lo, hi))
        faces.footage_forgotten(s, seen)
    index_manager.save()
    shutil.rmtree(index_manager.lexical_dir, ignore_errors=True)  # saved BM25 indices hold the forgotten words
    report.thumbnails = _delete_thumbnails(paths, thumbs)
    if whole:
        folder = paths.thumbnails / str(footage_id)
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    log.info(
        "forgot footage %d%s: %d clips, %d units, %d vectors, %d thumbnails",
        footage_id,
        "" if whole else f" [{start}, {end}]",
        report.clips,
        report.units,
        report.vectors,
        report.thumbnails,
    )
    return report


def _overlap(table, lo: float, hi: float) -> list:
    """Rows whose interval overlaps (lo, hi), as `Moment.overlaps` has it: clips that only touch the
    range at an edge stay."""
    return [table.start_ts < hi, table.end_ts > lo]


def _units_to_forget(s: Session, footage_id: int, window: tuple[float, float] | None) -> list[int]:
    """The units to delete (overlapping the window, or in a clip that does) and every unit derived
    from them: those cascade in SQLite, but their index labels must be removed explicitly. Memory
    entries are not among them in a window: recompression remakes them from the records left."""
    query = select(Unit.id).where(Unit.footage_id == footage_id)
    if window is not None:
        lo, hi = window
        clips = select(Clip.id).where(Clip.footage_id == footage_id, *_overlap(Clip, lo, hi))
        query = query.where(or_(Unit.clip_id.in_(clips), and_(*_overlap(Unit, lo, hi))), Unit.kind != record_compression.ENTRY)
    found = set(s.scalars(query))
    frontier = sorted(found)
    while frontier:
        children: set[int] = set()
        for first in range(0, len(frontier), _CHUNK):
            children |= set(s.scalars(select(Unit.id).where(Unit.parent_id.in_(frontier[first : first + _CHUNK]))))
        frontier = sorted(children - found)
        found |= children
    return sorted(found)


def _delete_thumbnails(paths: LibraryPaths, thumbs: list[str]) -> int:
    root = paths.thumbnails.resolve()
    removed = 0
    for name in thumbs:
        path = Path(name).resolve()
        if not path.is_relative_to(root):
            log.warning("not deleting %s: outside the library's thumbnails folder", path)
            continue
        if path.exists():
            path.unlink()
            removed += 1
    return removed
