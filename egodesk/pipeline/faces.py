"""Who was there, in the pipeline: the `faces` ingest stage, and the changes a person makes to faces (name,
merge, forget) with the library purged after a forget.

The stage runs after `keyframes`: it looks for faces in each keyframe of the footage (decoded again in
one pass, at the frame's own size; a photo is its one frame) with the `faces` model of the manifest
(`perception.faces`), then stores the sightings and matches them to the library's faces
(`memory.faces.store_footage`) in one transaction with its job's "done" mark, so a kill leaves it wholly
done or not at all and a rerun replaces that footage's sightings (and, when the captions are already
written, describes again the clips whose named faces changed). Nothing found is done with no
sightings; HOG costs about 30 ms of CPU an 848x480 keyframe, so a footage without faces costs little.
"""

from __future__ import annotations

import logging

import numpy as np
from sqlalchemy import select

from egodesk.core.types import ClipSpan, FootageKind
from egodesk.media.crops import square_crop_jpeg
from egodesk.media.errors import MediaError
from egodesk.media.frames import sample_frames
from egodesk.media.photo import read_photo
from egodesk.memory import faces, stale
from egodesk.memory.faces import FaceInfo, Sighting
from egodesk.memory.schema import Clip, Face, Footage, Keyframe
from egodesk.memory.store import Store
from egodesk.pipeline.engines import Engines
from egodesk.pipeline.jobs import finish
from egodesk.pipeline.speakers import forget_everywhere, purge_freed, refresh_memory
from egodesk.pipeline.stages import StageContext, frame_at

log = logging.getLogger(__name__)

STAGE = "faces"
_HALF_WINDOW = 1e-3  # each keyframe is asked for as a span this wide around its offset: that very frame


def _keyframes(ctx: StageContext) -> list[tuple[int, float]]:
    """(clip id, offset) of each keyframe of the footage, in time order (one per offset)."""
    with ctx.store.session() as session:
        rows = session.execute(
            select(Keyframe.clip_id, Keyframe.offset)
            .join(Clip)
            .where(Clip.footage_id == ctx.footage_id)
            .order_by(Keyframe.offset)
        ).all()
    seen: dict[float, int] = {}
    for clip_id, offset in rows:
        seen.setdefault(round(offset, 3), clip_id)
    return [(clip_id, offset) for offset, clip_id in seen.items()]


def _pictures(ctx: StageContext, wanted: list[tuple[int, float]]):
    """(clip id, offset, RGB picture) of each wanted keyframe: a photo read once; a video decoded front to
    back, its intra frames alone first (about 5x cheaper than every frame: the keyframes stage reads
    only those when they are dense, so its offsets are theirs), every frame from the first keyframe that
    is not one of them on (`sample_frames` with one tiny span per keyframe). One frame in memory at a time."""
    footage = ctx.footage()
    if footage.kind == FootageKind.PHOTO.value:
        bgr = read_photo(footage.path)
        for clip_id, offset in wanted:
            yield clip_id, offset, np.ascontiguousarray(bgr[:, :, ::-1])
        return
    spans = [ClipSpan(i, max(0.0, offset - _HALF_WINDOW), 2 * _HALF_WINDOW) for i, (_, offset) in enumerate(wanted)]
    done: set[int] = set()
    for frame in sample_frames(footage.path, spans, 1, keyframes_only=True):
        clip_id, offset = wanted[frame.clip_index]
        if abs(frame.offset - offset) > _HALF_WINDOW:
            break  # not an intra frame: the rest come from decoding every frame
        done.add(frame.clip_index)
        yield clip_id, offset, np.ascontiguousarray(frame.frame[:, :, ::-1])
    rest = [span for span in spans if span.index not in done]
    for frame in sample_frames(footage.path, rest, 1, keyframes_only=False) if rest else ():
        clip_id, offset = wanted[frame.clip_index]
        yield clip_id, offset, np.ascontiguousarray(frame.frame[:, :, ::-1])


def run_faces(ctx: StageContext) -> None:
    wanted = _keyframes(ctx)
    ctx.report(STAGE, 0, len(wanted) or 1)
    found: list[Sighting] = []
    if wanted:
        finder = ctx.engines.face_finder
        for done, (clip_id, offset, rgb) in enumerate(_pictures(ctx, wanted), start=1):
            height, width = rgb.shape[:2]
            found += [Sighting(clip_id, offset, f.box, (width, height), f.score, f.vector) for f in finder.find(rgb)]
            ctx.report(STAGE, done, len(wanted))
    with ctx.store.session() as session:
        before = faces.names_in_clips(session, ctx.footage_id)
        count = faces.store_footage(session, ctx.footage_id, found)
        after = faces.names_in_clips(session, ctx.footage_id)
        finish(session, ctx.footage_id, STAGE, count)
    moved = {clip for clip in set(before) | set(after) if before.get(clip) != after.get(clip)}
    if moved:  # a rerun after the captions: those whose named faces changed are described again
        spans = [(c.start_ts, c.end_ts) for c in ctx.clips() if c.id in moved]
        refresh_memory(ctx.store, ctx.engines, {ctx.footage_id: spans})


FACE_STAGE_FUNCTIONS = {STAGE: run_faces}


def list_faces(store: Store) -> list[FaceInfo]:
    with store.session() as session:
        return faces.faces(session)


def _info(store: Store, face_id: int) -> FaceInfo:
    return next(f for f in list_faces(store) if f.id == face_id)


def name_face(store: Store, face_id: int, name: str) -> FaceInfo:
    """Name a face; the clips it was seen in are marked for `speakers.refresh_stale`, which describes them
    again ("Ana is in view.") with their memories."""
    with store.session() as session:
        faces.rename(session, face_id, name)
        stale.mark(session, faces.spans_of(session, {face_id}))
    return _info(store, face_id)


def merge_faces(store: Store, into: int, other: int) -> FaceInfo:
    with store.session() as session:
        stale.mark(session, faces.spans_of(session, {into, other}))
        faces.merge(session, into, other)
    return _info(store, into)


def face_pictures(store: Store, side: int = 96, limit: int = 60, cache: dict | None = None) -> dict[int, bytes]:
    """A small square JPEG of each of the `limit` most seen faces, from its best sighting's frame read
    again from the footage (`media.crops`; a video's frame costs an ffmpeg seek, about 0.1 s, hence the
    limit, and `cache`, keyed by the sighting, so a list read again during an import reads no frame
    twice): in memory only, so no file of a face is kept. A footage that cannot be read any more (moved,
    deleted) leaves its faces without a picture."""
    out: dict[int, bytes] = {}
    used: set = set()
    for face in list_faces(store)[:limit]:
        if face.best is None:
            continue
        key = (face.best, side)
        used.add(key)
        if cache is not None and key in cache:
            out[face.id] = cache[key]
            continue
        footage_id, offset, left, top, right, bottom, width, height = face.best
        with store.session() as session:
            footage = session.get(Footage, footage_id)
            if footage is None:
                continue
            session.expunge(footage)
        try:
            frame = frame_at(footage, offset)
        except (MediaError, OSError, ValueError) as exc:
            log.info("no picture of face %s: %s", face.id, exc)
            continue
        scale = frame.shape[1] / width if width else 1.0  # the frame as read now, against the one looked at
        box = (round(left * scale), round(top * scale), round(right * scale), round(bottom * scale))
        out[face.id] = square_crop_jpeg(frame, box, side)
        if cache is not None:
            cache[key] = out[face.id]
    if cache is not None:
        for gone in set(cache) - used:  # a face forgotten or merged away: its picture is not kept
            del cache[gone]
    return out


def forget_face(store: Store, engines: Engines, face_id: int) -> int:
    """Delete a face's print and name from the library (`memory.faces.forget_face`), then its name from
    every memory that showed it and the freed pages (`speakers.forget_everywhere`), so no file keeps
    them. No index file holds a face print: prints are matched from SQLite. Returns how many sightings
    lost their face."""
    with store.session() as session:
        face = session.get(Face, face_id)
        name = face.name if face is not None else None
        changed = faces.spans_of(session, {face_id})
        count = faces.forget_face(session, face_id)
    if name:
        forget_everywhere(store, engines, name, changed)
    else:  # an unnamed face showed in no memory: only its print's freed pages are left to purge
        purge_freed(store)
    return count
