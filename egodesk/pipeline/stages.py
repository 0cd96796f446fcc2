"""The ingest stages of one media footage, each a function that reads what earlier stages stored and
writes its own results together with its job's "done" mark in one transaction.

Order (the only place that knows it is `core/stages.py`): probe (at import) -> audio -> asr
-> speakers (`speakers.py`: who spoke when) -> keyframes (frame features, tags and thumbnails from one
tagger pass) -> faces (`faces.py`: who was there) -> ocr -> captions. A photo skips the sound stages and is its own one frame (`frames_of`,
`frame_at`); a sound recording skips the picture stages (`jobs.stages_for`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sqlalchemy import delete, func, select

from egodesk.core.faults import fault_point
from egodesk.core.types import ClipSpan, FootageKind, Progress
from egodesk.media.audio import extract_audio
from egodesk.media.frames import SampledFrame, read_frame_at, sample_frames
from egodesk.media.keyframes import select_keyframes, write_thumbnail
from egodesk.media.photo import read_photo
from egodesk.memory.corrections import SCREEN, apply_corrections
from egodesk.memory.faces import names_in_clips
from egodesk.memory.schema import Caption, Clip, Footage, Keyframe, TranscriptSegment
from egodesk.memory.speech import clip_speech, write_transcript
from egodesk.memory.store import Store
from egodesk.perception.asr import transcribe_as_usual
from egodesk.pipeline.engines import Engines
from egodesk.pipeline.jobs import finish, stage_states

log = logging.getLogger(__name__)


class Cancelled(Exception):
    """The user asked to stop; the stage is left unfinished and resumes next time."""


@dataclass
class StageContext:
    store: Store
    engines: Engines
    footage_id: int
    progress: Callable[[Progress], None]
    should_stop: Callable[[], bool]

    def report(self, stage: str, done: int, total: int, message: str = "") -> None:
        self.progress(Progress(stage, done, total, self.footage_id, message))
        fault_point(f"{stage}:{done}")
        if self.should_stop():
            raise Cancelled(stage)

    def footage(self) -> Footage:
        with self.store.session() as session:
            return session.get_one(Footage, self.footage_id)

    def clips(self) -> list[Clip]:
        with self.store.session() as session:
            return list(session.scalars(select(Clip).where(Clip.footage_id == self.footage_id).order_by(Clip.idx)))

    @property
    def audio_path(self) -> Path:
        return self.engines.paths.cache / "audio" / f"{self.footage_id}.wav"


def run_audio(ctx: StageContext) -> None:
    footage = ctx.footage()
    ctx.audio_path.parent.mkdir(parents=True, exist_ok=True)
    has_audio = footage.has_audio and extract_audio(footage.path, ctx.audio_path)
    with ctx.store.session() as session:
        session.get_one(Footage, ctx.footage_id).has_audio = bool(has_audio)
        finish(session, ctx.footage_id, "audio", 1 if has_audio else 0)


def run_asr(ctx: StageContext) -> None:
    footage = ctx.footage()
    clips = ctx.clips()
    segments = []
    language = ""
    if footage.has_audio and ctx.audio_path.exists():
        transcript = transcribe_as_usual(ctx.engines.transcriber, ctx.audio_path, usual_language(ctx.store, ctx.footage_id))
        language = transcript.language or ""
        for segment in transcript.segments:  # lazily decoded: a cancel lands between segments
            segments.append(segment)
            fault_point("asr:segment")
            ctx.report("asr", int(segment.end), int(footage.duration) or 1)
    with ctx.store.session() as session:
        lines = (
            {
                "start_ts": footage.start_ts + segment.start,
                "end_ts": footage.start_ts + segment.end,
                "text": segment.text.strip(),
                "language": language,
                "words": [
                    [w.text, footage.start_ts + w.start, footage.start_ts + w.end, round(w.probability, 3)] for w in segment.words
                ],
            }
            for segment in segments
        )
        write_transcript(session, ctx.footage_id, clips, lines)  # the person's words and the turns' voices go back
        finish(session, ctx.footage_id, "asr", len(segments))
        speakers_to_run = stage_states(session, ctx.footage_id).get("speakers") not in (None, "done")
    if ctx.audio_path.exists() and not speakers_to_run:
        ctx.audio_path.unlink()  # the transcript is stored; the WAV was only its input (and the speakers stage's)


def usual_language(store: Store, except_footage: int) -> str | None:
    """The language most of the library's other transcript segments were heard in (None before any)."""
    with store.session() as session:
        return session.scalars(
            select(TranscriptSegment.language)
            .where(TranscriptSegment.footage_id != except_footage, TranscriptSegment.language != "")
            .group_by(TranscriptSegment.language)
            .order_by(func.count().desc(), TranscriptSegment.language)
            .limit(1)
        ).first()


def run_keyframes(ctx: StageContext) -> None:
    """Sample frames per clip, run the tagger once over them, pick keyframes by k-means over the
    features (CARVE), store features, top labels and a thumbnail for each keyframe. Frames arrive in
    time order, so each clip is processed as soon as its frames are in: memory stays one clip deep."""
    footage = ctx.footage()
    clips = ctx.clips()
    by_index = {c.idx: c for c in clips}
    spans = [ClipSpan(c.idx, c.offset, c.end_ts - c.start_ts) for c in clips]
    rows: list[Keyframe] = []
    buffer: list = []
    seen = 0
    for frame in frames_of(footage, spans, ctx.engines.settings.frames_per_clip):
        if buffer and frame.clip_index != buffer[0].clip_index:
            rows += _keyframes_of(ctx, footage, by_index[buffer[0].clip_index], buffer)
            seen += 1
            ctx.report("keyframes", seen, len(clips))
            buffer = []
        buffer.append(frame)
    if buffer:
        rows += _keyframes_of(ctx, footage, by_index[buffer[0].clip_index], buffer)
        seen += 1
    if seen < len(clips):
        log.info("footage %s: frames decoded for %d of %d clips", ctx.footage_id, seen, len(clips))
    with ctx.store.session() as session:
        session.execute(delete(Keyframe).where(Keyframe.clip_id.in_([c.id for c in clips])))
        session.add_all(rows)
        finish(session, ctx.footage_id, "keyframes", len(rows))


def frames_of(footage: Footage, spans: list[ClipSpan], per_clip: int) -> Iterable[SampledFrame]:
    """`per_clip` frames sampled from each clip of a video; a photo is its one frame (copies of it would
    only be tagged alike)."""
    if footage.kind == FootageKind.PHOTO.value:
        return [SampledFrame(clip_index=spans[0].index, offset=0.0, frame=read_photo(footage.path))]
    return sample_frames(footage.path, spans, per_clip)


def frame_at(footage: Footage, offset: float) -> np.ndarray:
    """The picture `offset` seconds into a video, or the photo."""
    return read_photo(footage.path) if footage.kind == FootageKind.PHOTO.value else read_frame_at(footage.path, offset)


def _keyframes_of(ctx: StageContext, footage: Footage, clip: Clip, frames: list) -> list[Keyframe]:
    settings = ctx.engines.settings
    tagger = ctx.engines.tagger
    result = tagger.analyse([f.frame for f in frames])
    thumbs_dir = ctx.engines.paths.thumbnails / str(ctx.footage_id)
    rows = []
    for order, i in enumerate(select_keyframes(result.features, settings.keyframes_per_clip)):
        thumb = thumbs_dir / f"{clip.idx:05d}_{order}.jpg"
        write_thumbnail(frames[i].frame, thumb)
        labels = tagger.top_labels(result.probs[i], settings.tags_per_frame)
        rows.append(
            Keyframe(
                clip_id=clip.id,
                idx=order,
                offset=frames[i].offset,
                ts=footage.start_ts + frames[i].offset,
                thumb_path=str(thumb),
                feature=result.features[i].astype(np.float32).tobytes(),
                labels=[[label, round(float(score), 4)] for label, score in labels],
            )
        )
    return rows


def run_ocr(ctx: StageContext) -> None:
    """On-screen text of the middle keyframe of each clip (OCR costs ~0.5 s a frame: one a clip keeps
    ingest within its real-time budget)."""
    footage = ctx.footage()
    with ctx.store.session() as session:
        keyframes = list(
            session.scalars(select(Keyframe).join(Clip).where(Clip.footage_id == ctx.footage_id).order_by(Clip.idx, Keyframe.idx))
        )
    per_clip: dict[int, list[Keyframe]] = {}
    for kf in keyframes:
        per_clip.setdefault(kf.clip_id, []).append(kf)
    texts: dict[int, str] = {}
    enabled = ctx.engines.settings.ocr_enabled
    for done, frames in enumerate(per_clip.values(), start=1):
        if enabled:
            chosen = frames[len(frames) // 2]
            texts[chosen.id] = ctx.engines.text_reader.read(frame_at(footage, chosen.offset))
        ctx.report("ocr", done, len(per_clip))
    with ctx.store.session() as session:
        for kf in keyframes:
            session.get_one(Keyframe, kf.id).ocr_text = texts.get(kf.id, "")
        apply_corrections(session, ctx.footage_id, (SCREEN,))
        finish(session, ctx.footage_id, "ocr", sum(1 for t in texts.values() if t))


def _caption(
    engines: Engines, footage: Footage, clip: Clip, keyframes: list[Keyframe], speech: str, previous: str, seen: list[str]
) -> str:
    """One clip's caption from its keyframes (those of other clips are skipped), what was said in it and
    the caption before it, after the named faces `seen` in it ("Ana is in view.", `captioner.in_view`):
    the one way a clip is described, for the stage and for `recaption`."""
    from egodesk.perception.captioner import ClipContext, in_view
    from egodesk.perception.captioner import Keyframe as CaptionFrame

    views = [
        CaptionFrame(
            image=frame_at(footage, kf.offset) if engines.captioner.needs_images else None,
            tags=[(label, score) for label, score in (kf.labels or [])],
            ocr=kf.ocr_text or "",
            time=kf.ts,
        )
        for kf in keyframes
        if kf.clip_id == clip.id
    ]
    context = ClipContext(
        start=clip.start_ts,
        end=clip.end_ts,
        keyframes=views,
        transcript=speech,
        wearer=engines.settings.wearer_name,
        previous_caption=previous,
    )
    return f"{in_view(seen)} {engines.captioner.caption(context).strip()}".strip()


def _said(session, footage_id: int, clips: list[Clip]) -> dict[int, list[str]]:
    segments = session.scalars(
        select(TranscriptSegment).where(TranscriptSegment.footage_id == footage_id).order_by(TranscriptSegment.idx)
    )
    return clip_speech(list(segments), clips)


def run_captions(ctx: StageContext) -> None:
    settings = ctx.engines.settings
    footage = ctx.footage()
    clips = ctx.clips()
    with ctx.store.session() as session:
        keyframes = list(
            session.scalars(select(Keyframe).join(Clip).where(Clip.footage_id == ctx.footage_id).order_by(Keyframe.idx))
        )
        said = _said(session, ctx.footage_id, clips)
        seen = names_in_clips(session, ctx.footage_id)
    captions = []
    previous = ""
    for done, clip in enumerate(clips, start=1):
        text = _caption(ctx.engines, footage, clip, keyframes, " ".join(said[clip.id]).strip(), previous, seen.get(clip.id, []))
        captions.append(
            Caption(
                clip_id=clip.id,
                footage_id=ctx.footage_id,
                start_ts=clip.start_ts,
                end_ts=clip.end_ts,
                text=text,
                captioner=settings.captioner,
                kind="caption",
            )
        )
        previous = text
        ctx.report("captions", done, len(clips))
    with ctx.store.session() as session:
        session.execute(delete(Caption).where(Caption.footage_id == ctx.footage_id))
        session.add_all(captions)
        finish(session, ctx.footage_id, "captions", len(captions))


def recaption(store: Store, engines: Engines, footage_id: int, start: float, end: float) -> int:
    """Describe again the clips of a footage that overlap [start, end] (a corrected line's span), as the
    captions stage would, and replace their captions: a caption quotes what was said and read there, so it
    must follow a correction. Only captions this library's captioner wrote (not imported ones) and only
    once the captions stage is done (before, it will read the corrected line itself). The number of
    captions replaced."""
    with store.session() as session:
        footage = session.get_one(Footage, footage_id)
        clips = list(session.scalars(select(Clip).where(Clip.footage_id == footage_id).order_by(Clip.idx)))
        captions = {c.clip_id: c for c in session.scalars(select(Caption).where(Caption.footage_id == footage_id))}
        touched = [c for c in clips if c.start_ts <= end and c.end_ts >= start and c.id in captions]
        touched = [c for c in touched if captions[c.id].captioner != "imported"]
        if not touched:
            return 0
        keyframes = list(session.scalars(select(Keyframe).where(Keyframe.clip_id.in_([c.id for c in touched]))))
        said = _said(session, footage_id, clips)
        seen = names_in_clips(session, footage_id)
        session.expunge_all()
    previous = {clip.id: captions[prior.id].text if prior.id in captions else "" for prior, clip in zip(clips, clips[1:])}
    texts = {
        c.id: _caption(engines, footage, c, keyframes, " ".join(said[c.id]).strip(), previous.get(c.id, ""), seen.get(c.id, []))
        for c in touched
    }
    with store.session() as session:
        for clip_id, text in texts.items():
            row = session.scalar(select(Caption).where(Caption.clip_id == clip_id))
            if row is not None:
                row.text = text
    return len(texts)


STAGE_FUNCTIONS: dict[str, Callable[[StageContext], None]] = {
    "audio": run_audio,
    "asr": run_asr,
    "keyframes": run_keyframes,
    "ocr": run_ocr,
    "captions": run_captions,
}
