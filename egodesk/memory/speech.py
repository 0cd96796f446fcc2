"""What was said during each clip, from the stored transcript.

A transcript segment is stored with the clip it starts in, but a sentence often runs on past the
clip's end. Each clip is told the words said within its own span (the segment's word timings), so
a clip whose speech began in the previous one is not silent to the captioner and the memory
builders. A segment without word timings (imported subtitles) stays whole with the clip it starts in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol, TypeVar

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from egodesk.memory.corrections import SPEECH, apply_corrections
from egodesk.memory.people import attach_lines, relabel
from egodesk.memory.schema import TranscriptSegment


class _Span(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def start_ts(self) -> float: ...
    @property
    def end_ts(self) -> float: ...


SpanT = TypeVar("SpanT", bound=_Span)


def clip_holding(clips: Sequence[SpanT], ts: float) -> SpanT | None:
    """The clip whose span holds `ts` (clips in time order); a moment at or past the last clip's
    end belongs to the last clip, since a footage's final clip ends where its audio may run on."""
    for clip in clips:
        if clip.start_ts <= ts < clip.end_ts:
            return clip
    return clips[-1] if clips and ts >= clips[-1].start_ts else None


def write_transcript(session: Session, footage_id: int, clips: Sequence[_Span], lines: Iterable[dict[str, Any]]) -> None:
    """Replace a footage's transcript with `lines`, in order: each a segment's `start_ts`, `end_ts`, `text`
    and what else is known of it (`language`, `words`, `speaker`), stored with the clip holding its start
    (`clip_holding`). The person's corrections then go back over the new lines, and each line gets the
    voice its speech turns overlap longest and that voice's label (`people.attach_lines`, `relabel`), so
    a line written again (a rerun of the ASR, a subtitle file attached) says who spoke as before."""
    session.execute(delete(TranscriptSegment).where(TranscriptSegment.footage_id == footage_id))
    for idx, line in enumerate(lines):
        clip = clip_holding(clips, line["start_ts"])
        session.add(TranscriptSegment(footage_id=footage_id, clip_id=clip.id if clip else None, idx=idx, **line))
    apply_corrections(session, footage_id, (SPEECH,))
    attach_lines(session, footage_id)
    relabel(session)


def segment_clip(segment: TranscriptSegment, clips: Sequence[_Span]) -> int | None:
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


def clip_speech(segments: Iterable[TranscriptSegment], clips: Sequence[_Span]) -> dict[int, list[str]]:
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
                if line := transcript_line(seg, " ".join(w.strip() for w in words)):
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
