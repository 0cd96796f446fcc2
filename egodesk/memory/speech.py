"""What was said during each clip, from the stored transcript.

A transcript segment is stored with the clip it starts in, but a sentence often runs on past the
clip's end. Each clip is told the words said within its own span (the segment's word timings), so
a clip whose speech began in the previous one is not silent to the captioner and the memory
builders. A segment without word timings (imported subtitles) stays whole with the clip it starts in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from egodesk.memory.schema import Clip, TranscriptSegment


def transcript_line(segment: TranscriptSegment, text: str | None = None) -> str:
    """ "Speaker: words" (imported text may already carry the speaker prefix); `text`, a part of the
    segment's words, in place of all of them."""
    text = (segment.text if text is None else text).strip()
    if segment.speaker and text and not text.startswith(f"{segment.speaker}:"):
        return f"{segment.speaker}: {text}"
    return text


def clip_speech(segments: Iterable[TranscriptSegment], clips: Sequence[Clip]) -> dict[int, list[str]]:
    """Each clip's speech lines, in the order given: a segment's words go to the clip their middle
    falls in; a segment within one clip, or without word timings, is one line of the clip it starts
    in (its stored clip, else the one whose span holds its start)."""
    ordered = sorted(clips, key=lambda c: c.start_ts)
    out: dict[int, list[str]] = {c.id: [] for c in ordered}

    def clip_at(ts: float) -> int | None:
        return next((c.id for c in ordered if c.start_ts <= ts < c.end_ts), None)

    for seg in segments:
        parts: dict[int, list[str]] = {}
        for word, start, end, *_ in seg.words or []:
            if (clip := clip_at((start + end) / 2)) is not None:
                parts.setdefault(clip, []).append(word)
        if len(parts) > 1:
            for clip, words in parts.items():
                if line := transcript_line(seg, " ".join(w.strip() for w in words)):
                    out[clip].append(line)
            continue
        clip = seg.clip_id if seg.clip_id in out else clip_at(seg.start_ts)
        if clip is not None and (line := transcript_line(seg)):
            out[clip].append(line)
    return out
