"""What was said during each clip, from the stored transcript.

A transcript segment is stored with the clip it starts in, but a sentence often runs on past the
clip's end. Each clip is told the words said within its own span (the segment's word timings), so
a clip whose speech began in the previous one is not silent to the captioner and the memory
builders. A segment without word timings (imported subtitles) stays whole with the clip it starts in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from egodesk.core.words import spoken_text
from egodesk.memory.clipspans import Span, clip_holding
from egodesk.memory.corrections import SPEECH, apply_corrections
from egodesk.memory.line_voices import attach_lines
from egodesk.memory.people import relabel
from egodesk.memory.schema import TranscriptSegment


def write_transcript(session: Session, footage_id: int, clips: Sequence[Span], lines: Iterable[dict[str, Any]]) -> None:
    """Replace a footage's transcript with `lines`, in order: each a segment's `start_ts`, `end_ts`, `text`
    and what else is known of it (`language`, `words`, `speaker`), stored with the clip holding its start
    (`clip_holding`). Each line is then cut where its speaker changes and gets the voice its speech turns
    overlap longest (`line_voices.attach_lines`), so a line written again (a rerun of the ASR, a subtitle
    file attached) says who spoke as before; then the person's corrections go back over the lines, after
    the cut because a person corrects the lines as they were shown (one speaker's part of a line); then the
    labels (`relabel`)."""
    session.execute(delete(TranscriptSegment).where(TranscriptSegment.footage_id == footage_id))
    for idx, line in enumerate(lines):
        clip = clip_holding(clips, line["start_ts"])
        session.add(TranscriptSegment(footage_id=footage_id, clip_id=clip.id if clip else None, idx=idx, **line))
    session.flush()
    attach_lines(session, footage_id)
    apply_corrections(session, footage_id, (SPEECH,))
    relabel(session)


def segment_clip(segment: TranscriptSegment, clips: Sequence[Span]) -> int | None:
    """The clip a segment belongs to: its stored clip, else the one whose span holds its start."""
    if segment.clip_id is not None:
        return segment.clip_id
    clip = clip_holding(clips, segment.start_ts)
    return clip.id if clip is not None else None


def transcript_line(segment: TranscriptSegment, text: str | None = None) -> str:
    """ "Speaker: words" (imported text may already carry the speaker prefix); `text`, a part of the
    segment's words, in place of all of them."""
    text = (segment.text if text is None else text).strip()
    if segment.speaker and text and not text.startswith(f"{segment.speaker}:"):
        return f"{segment.speaker}: {text}"
    return text


def clip_speech(segments: Iterable[TranscriptSegment], clips: Sequence[Span]) -> dict[int, list[str]]:
    """Each clip's speech lines, in the order given: a segment's words go to the clip their middle
    falls in; a segment within one clip, or without word timings, is one line of the clip it starts
    in (`segment_clip`)."""
    ordered = sorted(clips, key=lambda c: c.start_ts)
    out: dict[int, list[str]] = {c.id: [] for c in ordered}
    for seg in segments:
        parts: dict[int, list[str]] = {}
        for word, start, end, *_ in seg.words or []:
            if (holder := clip_holding(ordered, (start + end) / 2)) is not None:
                parts.setdefault(holder.id, []).append(word)
        if len(parts) > 1:
            for clip, words in parts.items():
                if line := transcript_line(seg, spoken_text(words)):
                    out[clip].append(line)
            continue
        home = segment_clip(seg, ordered)
        if home in out and (line := transcript_line(seg)):
            out[home].append(line)
    return out


def lines_between(session: Session, footage_id: int, start: float, end: float) -> list[tuple[float, float, str]]:
    """The transcript lines ("Speaker: words") of a footage that overlap [start, end] (wall-clock), with
    their own start and end, in time order: what an exported moment's subtitles show."""
    segments = session.scalars(
        select(TranscriptSegment)
        .where(TranscriptSegment.footage_id == footage_id, TranscriptSegment.start_ts < end, TranscriptSegment.end_ts > start)
        .order_by(TranscriptSegment.start_ts, TranscriptSegment.idx)
    )
    return [(seg.start_ts, seg.end_ts, line) for seg in segments if (line := transcript_line(seg))]
