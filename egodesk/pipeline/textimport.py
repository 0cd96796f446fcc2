"""Text tracks: footage that arrives as text instead of video.

Three formats: the benchmark format's memory.jsonl (one entry a line; each `source` becomes one
text-only footage), and SRT / WebVTT subtitle files (one text-only footage each, or attached to an
existing video footage as its transcript). Entries become clips with a caption (captions, narrations)
or a transcript segment (transcripts), so benchmarks run through exactly the code real footage uses.
A broken line is reported with its line number and skipped; the rest imports. Everything one file
produces is written in one transaction: re-importing the same file adds nothing.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select

from egodesk.core.manifest import sha256_of
from egodesk.core.stages import MEMORY_STAGES
from egodesk.core.timeutil import parse_iso
from egodesk.core.types import FootageKind
from egodesk.media.errors import MediaError
from egodesk.memory.schema import Caption, Clip, Footage, Job, TranscriptSegment
from egodesk.memory.speech import write_transcript
from egodesk.memory.store import Store
from egodesk.pipeline.jobs import ensure_jobs

log = logging.getLogger(__name__)

SPEAKER_PREFIX = re.compile(r"^\s*([A-Z][\w .'-]{0,40}):\s+(.*)$", re.S)
# hh:mm:ss,mmm (SRT) or [hh:]mm:ss.mmm (WebVTT); a missing fraction is tolerated.
CUE_TIME = re.compile(r"(?:(\d+):)?([0-5]?\d):([0-5]\d)(?:[.,](\d{1,3}))?")
TEXT_STAGE = "text"
KINDS = ("caption", "narration", "transcript")
HEADERS = ("WEBVTT", "NOTE", "STYLE", "REGION")  # WebVTT blocks that are not cues


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


class TextTrackError(MediaError):
    """A text track egodesk cannot use; like a bad video's error, `str()` is "<path>: <reason>"."""


def _lines(path: Path, problems: list[str]) -> list[tuple[int, str]]:
    """The file's lines, numbered from 1. UTF-8 (a BOM is dropped), or UTF-16 with its BOM; lines that
    are not UTF-8 are read as Windows-1252 (what old subtitle files use) and noted: their text is kept.
    Binary data (a video with a subtitle's name) is refused."""
    data = path.read_bytes()
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return list(enumerate(data.decode("utf-16", errors="replace").replace("\r", "").split("\n"), start=1))
    if b"\x00" in data:
        raise TextTrackError(path, "not a text file (it contains binary data; a video with a text track's name?)")
    out, legacy = [], []
    for number, raw in enumerate(data.removeprefix(codecs.BOM_UTF8).split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            line = raw.decode("cp1252", errors="replace")
            legacy.append(number)
        out.append((number, line.rstrip("\r")))
    if legacy:
        problems.append(f"{path.name}:{legacy[0]}: {len(legacy)} line(s) are not UTF-8 text; read as Windows-1252")
    return out


def _entry(row) -> tuple[str, Entry]:
    """A memory.jsonl row as (source, entry); ValueError says what is wrong with it."""
    if not isinstance(row, dict):
        raise ValueError("not a JSON object")
    missing = [key for key in ("source", "start", "end", "text") if key not in row]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    if not isinstance(row["text"], str) or not row["text"].strip():
        raise ValueError("no text")
    try:
        start, end = parse_iso(str(row["start"])), parse_iso(str(row["end"]))
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"bad time ({exc})") from exc
    kind = row.get("kind") or "caption"
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}")
    if end < start:
        raise ValueError("end before start")
    return str(row["source"]), Entry(start, end, kind, row["text"])


def read_memory_jsonl(path: Path, problems: list[str]) -> dict[str, list[Entry]]:
    """Entries per source, in file order; malformed lines go to `problems` with their line numbers."""
    per_source: dict[str, list[Entry]] = {}
    for number, line in _lines(path, problems):
        if not line.strip():
            continue
        try:
            source, entry = _entry(json.loads(line))
        except json.JSONDecodeError as exc:
            problems.append(f"{path.name}:{number}: skipped (invalid JSON: {exc.msg} at column {exc.colno})")
            continue
        except ValueError as exc:
            problems.append(f"{path.name}:{number}: skipped ({exc})")
            continue
        per_source.setdefault(source, []).append(entry)
    return per_source


def _cue_time(text: str) -> float:
    match = CUE_TIME.fullmatch(text)
    if not match:
        raise ValueError(f"bad timestamp {text!r}")
    hours, minutes, seconds, fraction = match.groups()
    return int(hours or 0) * 3600 + int(minutes) * 60 + int(seconds) + int((fraction or "0").ljust(3, "0")) / 1000


def _cue_times(line: str) -> tuple[float, float]:
    left, right = line.split("-->", 1)
    end = right.split()  # WebVTT cue settings may follow the end time
    return _cue_time(left.strip()), _cue_time(end[0] if end else "")


def _blocks(lines: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """Runs of non-blank lines (cues, headers), each line with its number."""
    blocks: list[list[tuple[int, str]]] = [[]]
    for number, line in lines:
        if line.strip():
            blocks[-1].append((number, line.strip()))
        elif blocks[-1]:
            blocks.append([])
    return [b for b in blocks if b]


def read_subtitles(path: Path, problems: list[str]) -> list[Entry]:
    """SRT or WebVTT cues as transcript entries with times relative to the file start; a broken cue
    goes to `problems` with its line number."""
    entries = []
    for block in _blocks(_lines(path, problems)):
        timing = next((i for i, (_, line) in enumerate(block) if "-->" in line), None)
        where = f"{path.name}:{block[0][0] if timing is None else block[timing][0]}"
        if timing is None:
            if not block[0][1].startswith(HEADERS):
                problems.append(f"{where}: skipped a block without a timing line: {block[0][1][:60]!r}")
            continue
        try:
            start, end = _cue_times(block[timing][1])
        except ValueError as exc:
            problems.append(f"{where}: skipped a cue ({exc})")
            continue
        words = " ".join(re.sub(r"<[^>]+>", "", line) for _, line in block[timing + 1 :]).strip()
        if not words:
            problems.append(f"{where}: skipped a cue without text")
        elif end < start:
            problems.append(f"{where}: skipped a cue that ends before it starts")
        else:
            entries.append(Entry(start, end, "transcript", words))
    return entries


def _add_entries(session, footage: Footage, entries: list[Entry], first_clip: int = 0, first_segment: int = 0) -> None:
    for offset, entry in enumerate(sorted(entries, key=lambda e: (e.start, e.end))):
        clip = Clip(
            footage_id=footage.id,
            idx=first_clip + offset,
            offset=entry.start - footage.start_ts,
            start_ts=entry.start,
            end_ts=entry.end,
        )
        session.add(clip)
        session.flush()
        if entry.kind == "transcript":
            speaker, words = _split_speaker(entry.text)
            session.add(
                TranscriptSegment(
                    footage_id=footage.id,
                    clip_id=clip.id,
                    idx=first_segment + offset,
                    start_ts=entry.start,
                    end_ts=entry.end,
                    text=entry.text,
                    speaker=speaker,
                )
            )
        else:
            session.add(
                Caption(
                    clip_id=clip.id,
                    footage_id=footage.id,
                    start_ts=entry.start,
                    end_ts=entry.end,
                    text=entry.text,
                    captioner="imported",
                    kind=entry.kind,
                )
            )


def _split_speaker(text: str) -> tuple[str, str]:
    match = SPEAKER_PREFIX.match(text)
    return (match.group(1).strip(), match.group(2)) if match else ("", text)


def _text_footage(session, content_hash: str, path: str, title: str, entries: list[Entry]) -> tuple[Footage, bool]:
    existing = session.scalar(select(Footage).where(Footage.content_hash == content_hash))
    if existing is not None:
        return existing, False
    start = min(e.start for e in entries)
    footage = Footage(
        content_hash=content_hash,
        path=path,
        kind=FootageKind.TEXT.value,
        title=title,
        start_ts=start,
        start_source="text",
        duration=max(e.end for e in entries) - start,
    )
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
        raise TextTrackError(path, f"no valid entries ({_summary(result.problems)})")
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
        raise TextTrackError(path, f"no subtitle cues found ({_summary(result.problems)})")
    footage: Footage | None
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
                raise TextTrackError(path, f"no footage with id {attach_to}")
            _attach_transcript(session, footage, cues)
            result.entries = len(cues)
        result.footage_ids.append(footage.id)
    return result


def _summary(problems: list[str]) -> str:
    if not problems:
        return "empty file"
    return f"{len(problems)} problem(s): {'; '.join(problems[:3])}" + ("; ..." if len(problems) > 3 else "")


def _attach_transcript(session, footage: Footage, cues: list[Entry]) -> None:
    """Replace a footage's transcript with the cues, as the ASR stage writes one (`write_transcript`): each
    with the clip it starts in; the person's corrections outlive a new subtitle file."""
    clips = session.scalars(select(Clip).where(Clip.footage_id == footage.id).order_by(Clip.idx)).all()
    lines = (
        {
            "start_ts": footage.start_ts + cue.start,
            "end_ts": footage.start_ts + cue.end,
            "text": cue.text,
            "speaker": _split_speaker(cue.text)[0],
        }
        for cue in cues
    )
    write_transcript(session, footage.id, clips, lines)
