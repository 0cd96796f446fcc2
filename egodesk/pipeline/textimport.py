"""Text tracks: footage that arrives as text instead of video.

Three formats: the benchmark format's memory.jsonl (one entry a line; each `source` becomes one
text-only footage), and SRT / WebVTT subtitle files (one text-only footage each, or attached to an
existing video footage as its transcript). Entries become clips with a caption (captions, narrations)
or a transcript segment (transcripts), so benchmarks run through exactly the code real footage uses.
A broken line is reported with its line number and skipped; the rest imports. Everything one file
produces is written in one transaction: re-importing the same file adds nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select

from egodesk.core.manifest import sha256_of
from egodesk.core.timeutil import parse_iso
from egodesk.core.types import FootageKind
from egodesk.memory.store import Caption, Clip, Footage, Job, Store, TranscriptSegment
from egodesk.pipeline.jobs import MEMORY_STAGES, ensure_jobs

log = logging.getLogger(__name__)

SPEAKER_PREFIX = re.compile(r"^\s*([A-Z][\w .'-]{0,40}):\s+(.*)$", re.S)
TIMESTAMP = re.compile(r"(?:(\d+):)?(\d{1,2}):(\d{2})[.,](\d{1,3})")
TEXT_STAGE = "text"


@dataclass
class Entry:
    start: float
    end: float
    kind: str  # caption | narration | transcript
    text: str


@dataclass
class TextImportResult:
    footage_ids: list[int] = field(default_factory=list)
    new_ids: list[int] = field(default_factory=list)  # the footages this import created
    entries: int = 0
    problems: list[str] = field(default_factory=list)  # "file:line: reason"


class TextTrackError(ValueError):
    pass


def read_memory_jsonl(path: Path, problems: list[str]) -> dict[str, list[Entry]]:
    """Entries per source, in file order; malformed lines go to `problems`."""
    per_source: dict[str, list[Entry]] = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                entry = Entry(parse_iso(row["start"]), parse_iso(row["end"]), row.get("kind") or "caption", str(row["text"]))
                source = str(row["source"])
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                problems.append(f"{path.name}:{number}: skipped ({type(exc).__name__}: {exc})")
                continue
            if entry.end < entry.start or entry.kind not in ("caption", "narration", "transcript"):
                problems.append(f"{path.name}:{number}: skipped (end before start or unknown kind {entry.kind!r})")
                continue
            per_source.setdefault(source, []).append(entry)
    return per_source


def _cue_time(text: str) -> float:
    match = TIMESTAMP.search(text)
    if not match:
        raise ValueError(f"no timestamp in {text!r}")
    hours, minutes, seconds, fraction = match.groups()
    return int(hours or 0) * 3600 + int(minutes) * 60 + int(seconds) + int(fraction.ljust(3, "0")) / 1000


def read_subtitles(path: Path, problems: list[str]) -> list[Entry]:
    """SRT or WebVTT cues as transcript entries with times relative to the file start."""
    text = path.read_text(encoding="utf-8-sig", errors="replace").replace("\r\n", "\n")
    entries = []
    for block in re.split(r"\n\s*\n", text):
        lines = [ln for ln in block.strip().split("\n") if ln.strip()]
        timing = next((i for i, ln in enumerate(lines) if "-->" in ln), None)
        if timing is None:
            if lines and not lines[0].startswith(("WEBVTT", "NOTE", "STYLE")) and not lines[0].strip().isdigit():
                problems.append(f"{path.name}: skipped a block without timing: {lines[0][:60]!r}")
            continue
        try:
            left, right = lines[timing].split("-->", 1)
            start, end = _cue_time(left), _cue_time(right)
        except ValueError as exc:
            problems.append(f"{path.name}: skipped a cue ({exc})")
            continue
        words = " ".join(re.sub(r"<[^>]+>", "", ln) for ln in lines[timing + 1 :]).strip()
        if words and end >= start:
            entries.append(Entry(start, end, "transcript", words))
    return entries


def _add_entries(session, footage: Footage, entries: list[Entry], first_clip: int = 0, first_segment: int = 0) -> None:
    for offset, entry in enumerate(sorted(entries, key=lambda e: (e.start, e.end))):
        clip = Clip(footage_id=footage.id, idx=first_clip + offset, offset=entry.start - footage.start_ts,
                    start_ts=entry.start, end_ts=entry.end)
        session.add(clip)
        session.flush()
        if entry.kind == "transcript":
            speaker, words = _split_speaker(entry.text)
            session.add(TranscriptSegment(footage_id=footage.id, clip_id=clip.id, idx=first_segment + offset,
                                          start_ts=entry.start, end_ts=entry.end, text=entry.text, speaker=speaker))
        else:
            session.add(Caption(clip_id=clip.id, footage_id=footage.id, start_ts=entry.start, end_ts=entry.end,
                                text=entry.text, captioner="imported", kind=entry.kind))


def _split_speaker(text: str) -> tuple[str, str]:
    match = SPEAKER_PREFIX.match(text)
    return (match.group(1).strip(), match.group(2)) if match else ("", text)


def _text_footage(session, content_hash: str, path: str, title: str, entries: list[Entry]) -> tuple[Footage, bool]:
    existing = session.scalar(select(Footage).where(Footage.content_hash == content_hash))
    if existing is not None:
        return existing, False
    start = min(e.start for e in entries)
    footage = Footage(content_hash=content_hash, path=path, kind=FootageKind.TEXT.value, title=title, start_ts=start,
                      start_source="text", duration=max(e.end for e in entries) - start)
    session.add(footage)
    session.flush()
    _add_entries(session, footage, entries)
    session.add(Job(footage_id=footage.id, stage=TEXT_STAGE, state="done", done=len(entries), total=len(entries)))
    ensure_jobs(session, footage.id, MEMORY_STAGES)
    return footage, True


def import_memory_jsonl(store: Store, path: Path) -> TextImportResult:
    """One text-only footage per source of a benchmark memory.jsonl."""
    result = TextImportResult()
    per_source = read_memory_jsonl(path, result.problems)
    if not per_source:
        raise TextTrackError(f"{path}: no valid entries ({len(result.problems)} problems)")
    file_hash = sha256_of(path)
    with store.session() as session:
        for source, entries in per_source.items():
            content_hash = hashlib.sha256(f"{file_hash}:{source}".encode()).hexdigest()
            footage, created = _text_footage(session, content_hash, f"{path}#{source}", source, entries)
            result.footage_ids.append(footage.id)
            if created:
                result.new_ids.append(footage.id)
                result.entries += len(entries)
    return result


def import_subtitles(store: Store, path: Path, start_ts: float, attach_to: int | None = None) -> TextImportResult:
    """An SRT/VTT file as its own text-only footage starting at `start_ts`, or as the transcript of the
    existing footage `attach_to` (cue times are then relative to that footage's start)."""
    result = TextImportResult()
    cues = read_subtitles(path, result.problems)
    if not cues:
        raise TextTrackError(f"{path}: no subtitle cues found ({'; '.join(result.problems[:3]) or 'empty file'})")
    with store.session() as session:
        if attach_to is None:
            entries = [Entry(start_ts + c.start, start_ts + c.end, c.kind, c.text) for c in cues]
            footage, created = _text_footage(session, sha256_of(path), str(path), path.stem, entries)
            if created:
                result.new_ids.append(footage.id)
                result.entries += len(entries)
        else:
            footage = session.get(Footage, attach_to)
            if footage is None:
                raise TextTrackError(f"no footage with id {attach_to}")
            _attach_transcript(session, footage, cues)
            result.entries = len(cues)
        result.footage_ids.append(footage.id)
    return result


def _attach_transcript(session, footage: Footage, cues: list[Entry]) -> None:
    """Replace a footage's transcript with the cues, each mapped onto the clip it starts in."""
    clips = session.scalars(select(Clip).where(Clip.footage_id == footage.id).order_by(Clip.idx)).all()
    for old in session.scalars(select(TranscriptSegment).where(TranscriptSegment.footage_id == footage.id)):
        session.delete(old)
    session.flush()
    for idx, cue in enumerate(cues):
        start, end = footage.start_ts + cue.start, footage.start_ts + cue.end
        clip = next((c for c in clips if c.start_ts <= start < c.end_ts), None)
        speaker, _ = _split_speaker(cue.text)
        session.add(TranscriptSegment(footage_id=footage.id, clip_id=clip.id if clip else None, idx=idx,
                                      start_ts=start, end_ts=end, text=cue.text, speaker=speaker))
