"""A person's corrections of what the machine misheard (a transcript line) or misread (a keyframe's
on-screen text).

The rules, and why:
- The correction is the person's, so nothing derived overwrites it: it lives in its own table
  (`schema.Correction`), keyed by footage, kind and the line's span, and every stage that rewrites those
  lines (ASR, OCR, an attached subtitle file) applies the corrections over what it wrote, in its own
  transaction (`apply_corrections`). A re-import of the same file, `egodesk resume` or a rerun of a stage
  therefore leaves the person's words in place; forgetting the footage deletes them with it.
- The corrected text is written into the line's own row (`TranscriptSegment.text`, `Keyframe.ocr_text`),
  so everything that reads lines (search through its FTS triggers, the memory builders, subtitles of an
  export) reads the person's words without knowing about corrections.
- A corrected transcript line drops its word timings: they time the words the machine heard, and
  `speech.clip_speech` would otherwise split the line across clips by those old words.
- Each save is a row, the latest one of a line in force; undo deletes it, bringing back the one before
  or, after the first, what the machine had written (`heard`, `heard_words`). Saving the text already in
  force adds nothing.
- A line is found by a moment within it (a transcript line that holds it, or the nearest keyframe with
  on-screen text within `SCREEN_SLACK_S`); no line there, an empty or over-long text and an unknown
  footage raise `CorrectionError`, with the reason, before anything is written.
- After a rerun of a stage the lines may be cut a little differently: a correction goes to the line that
  overlaps its span most, if they share at least half of the shorter one (`same_line`).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from egodesk.core.timeutil import clock
from egodesk.memory.schema import Clip, Correction, Footage, Keyframe, TranscriptSegment
from egodesk.memory.store import Store

SPEECH, SCREEN = "speech", "screen"
KINDS = (SPEECH, SCREEN)
TEXT_MAX_CHARS = 2_000  # a line longer than this is a paste gone wrong, not a line heard
SPEECH_SLACK_S = 0.25  # a moment this close to a transcript line's edge still names it
SCREEN_SLACK_S = 8.0  # on-screen text is read once a clip: the nearest keyframe holding text this close


class CorrectionError(ValueError):
    """A correction that cannot be made as asked, with the reason a person can act on."""


@dataclass
class CorrectedLine:
    """A line as it stands after a correction or an undo: wall-clock span, the text in force, what the
    machine heard, and whether the text is the person's."""

    footage_id: int
    kind: str
    start: float
    end: float
    text: str
    heard: str
    corrected: bool


def _clean(text: str) -> str:
    cleaned = " ".join(text.split())
    if not cleaned:
        raise CorrectionError("a corrected line needs some text (to undo a correction, use undo)")
    if len(cleaned) > TEXT_MAX_CHARS:
        raise CorrectionError(f"a line can hold at most {TEXT_MAX_CHARS} characters (this one has {len(cleaned)})")
    return cleaned


def same_line(kind: str, a: tuple[float, float], b: tuple[float, float]) -> float:
    """How well span `b` is the line of span `a`: their overlap, 0 when they are not the same line."""
    if kind == SCREEN:
        return 1.0 / (1.0 + abs(a[0] - b[0])) if abs(a[0] - b[0]) <= 0.5 else 0.0
    overlap = min(a[1], b[1]) - max(a[0], b[0])
    shorter = min(a[1] - a[0], b[1] - b[0])
    if shorter <= 0:  # a line of no length: the same when they start together
        return 1.0 if abs(a[0] - b[0]) <= 0.05 else 0.0
    return overlap if overlap >= shorter / 2 else 0.0


def _lines(session: Session, footage_id: int, kind: str) -> list[TranscriptSegment] | list[Keyframe]:
    if kind == SPEECH:
        return list(session.scalars(select(TranscriptSegment).where(TranscriptSegment.footage_id == footage_id)))
    return list(
        session.scalars(
            select(Keyframe)
            .join(Clip)
            .where(Clip.footage_id == footage_id, Keyframe.ocr_text.is_not(None), Keyframe.ocr_text != "")
        )
    )


def _span(line: TranscriptSegment | Keyframe) -> tuple[float, float]:
    return (line.start_ts, line.end_ts) if isinstance(line, TranscriptSegment) else (line.ts, line.ts)


def _text(line: TranscriptSegment | Keyframe) -> str:
    return line.text if isinstance(line, TranscriptSegment) else line.ocr_text or ""


def _write(line: TranscriptSegment | Keyframe, text: str, words: list | None) -> None:
    if isinstance(line, TranscriptSegment):
        line.text, line.words = text, words
    else:
        line.ocr_text = text


def _line_at(session: Session, footage: Footage, kind: str, at: float) -> TranscriptSegment | Keyframe:
    """The line the person means by the moment `at` (wall clock), or CorrectionError saying there is none."""
    if kind not in KINDS:
        raise CorrectionError(f"a correction is of what was said ({SPEECH}) or shown ({SCREEN}), not {kind!r}")
    slack = SPEECH_SLACK_S if kind == SPEECH else SCREEN_SLACK_S
    near = [line for line in _lines(session, footage.id, kind) if _span(line)[0] - slack <= at < _span(line)[1] + slack]

    def distance(line: TranscriptSegment | Keyframe) -> tuple[bool, float]:
        """A line holding the moment first, then the one whose middle is nearest."""
        start, end = _span(line)
        return not start <= at < end, abs((start + end) / 2 - at)

    if not near:
        what = "line heard" if kind == SPEECH else "on-screen text read"
        raise CorrectionError(f"there is no {what} at {clock(at - footage.start_ts)} in “{footage.title}”")
    return min(near, key=distance)


def _history(session: Session, footage_id: int, kind: str, span: tuple[float, float]) -> list[Correction]:
    """The corrections of the line with this span, oldest first."""
    rows = session.scalars(
        select(Correction).where(Correction.footage_id == footage_id, Correction.kind == kind).order_by(Correction.id)
    )
    return [c for c in rows if same_line(kind, (c.start_ts, c.end_ts), span) > 0]


def _footage(session: Session, footage_id: int) -> Footage:
    footage = session.get(Footage, footage_id)
    if footage is None:
        raise CorrectionError(f"there is no footage {footage_id} in this library")
    return footage


def correct(store: Store, footage_id: int, at: float, text: str, kind: str = SPEECH) -> CorrectedLine:
    """Put the person's `text` in place of the line at the moment `at` (wall clock) of a footage."""
    cleaned = _clean(text)
    with store.session() as session:
        line = _line_at(session, _footage(session, footage_id), kind, at)
        span = _span(line)
        history = _history(session, footage_id, kind, span)
        heard = history[0].heard if history else _text(line)
        changed = cleaned != _text(line)
        if changed:
            words = history[0].heard_words if history else getattr(line, "words", None)
            session.add(
                Correction(
                    footage_id=footage_id,
                    kind=kind,
                    start_ts=span[0],
                    end_ts=span[1],
                    text=cleaned,
                    heard=heard,
                    heard_words=words,
                )
            )
            _write(line, cleaned, None)
        return CorrectedLine(footage_id, kind, span[0], span[1], cleaned, heard, changed or bool(history))


def undo(store: Store, footage_id: int, at: float, kind: str = SPEECH) -> CorrectedLine:
    """Take back the latest correction of the line at `at`: the one before it is in force again, or what
    the machine heard. CorrectionError when the line has none."""
    with store.session() as session:
        footage = _footage(session, footage_id)
        line = _line_at(session, footage, kind, at)
        history = _history(session, footage_id, kind, _span(line))
        if not history:
            raise CorrectionError(f"the line at {clock(at - footage.start_ts)} in “{footage.title}” has no correction to undo")
        last = history.pop()
        session.delete(last)
        if history:
            _write(line, history[-1].text, None)
        else:
            _write(line, last.heard, last.heard_words)
        start, end = _span(line)
        return CorrectedLine(footage_id, kind, start, end, _text(line), last.heard, bool(history))


def clips_of(store: Store, footage_id: int, start: float, end: float) -> list[int]:
    """The clips a corrected line (wall-clock span) is part of, in time order: those it overlaps, or for
    a line of no length (on-screen text) the one holding its moment. Their memories say what the line
    said, so they are the ones built again after a correction; a clip the line merely touches at an
    edge is not."""
    with store.session() as session:
        rows = session.execute(
            select(Clip.id, Clip.start_ts, Clip.end_ts).where(Clip.footage_id == footage_id).order_by(Clip.start_ts)
        ).all()
    if end > start:
        return [clip_id for clip_id, a, b in rows if a < end and b > start]
    holding = [clip_id for clip_id, a, b in rows if a <= start < b]
    return holding[:1] or [clip_id for clip_id, a, _ in rows if a <= start][-1:]


def apply_corrections(session: Session, footage_id: int, kinds: tuple[str, ...] = KINDS) -> int:
    """Write the corrections in force over the footage's lines of `kinds`, as a stage that rewrote them
    must, in its own transaction (`session`); the number of lines corrected. A correction whose line is
    gone (a stage that now hears nothing there) waits in its table for a line to come back."""
    applied: set[int] = set()
    for kind in kinds:
        rows = list(
            session.scalars(
                select(Correction).where(Correction.footage_id == footage_id, Correction.kind == kind).order_by(Correction.id)
            )
        )
        if not rows:
            continue
        session.flush()
        lines = _lines(session, footage_id, kind)
        for correction in rows:  # oldest first: the latest correction of a line is written last
            span = (correction.start_ts, correction.end_ts)
            best = max(lines, key=lambda line: same_line(kind, span, _span(line)), default=None)
            if best is not None and same_line(kind, span, _span(best)) > 0:
                _write(best, correction.text, None)
                applied.add(best.id)
    return len(applied)


def corrections(store: Store, footage_id: int | None = None) -> list[CorrectedLine]:
    """The corrections in force (the latest of each line), in time order."""
    with store.session() as session:
        query = select(Correction).order_by(Correction.id)
        rows = session.scalars(query if footage_id is None else query.where(Correction.footage_id == footage_id)).all()
    latest: dict[tuple[int, str, float, float], Correction] = {}
    first: dict[tuple[int, str, float, float], str] = {}
    for row in rows:
        key = (row.footage_id, row.kind, row.start_ts, row.end_ts)
        first.setdefault(key, row.heard)
        latest[key] = row
    out = [CorrectedLine(c.footage_id, c.kind, c.start_ts, c.end_ts, c.text, first[k], True) for k, c in latest.items()]
    return sorted(out, key=lambda c: (c.start, c.footage_id, c.kind))
