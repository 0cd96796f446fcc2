"""Parent-child memory (the parent-retrieval paper): parents are whole clip descriptions, children are
their sentence-level subchunks, matched finely and expanded back to the parent at question time.

Per footage:
- each Caption becomes a Unit kind="caption" (embedded whole into space "caption": the Flat
  strategy's index) with children kind="subchunk" (space "subchunk", parent_id = the caption unit);
- the transcript segments of each clip become one Unit kind="transcript" ("Speaker: words" lines,
  the segments' time span; space "transcript") with subchunk children too, so parent retrieval
  reaches speech as well as sight;
- each of the person's notes on a moment (`keep`) becomes a Unit kind="note" ("My note: ..." so the
  answerer reads whose words they are; space "note") with subchunk children, in the clip its moment
  starts in: a note is evidence of its moment like what was seen and said there.
Every child inherits its parent's time interval (the paper: a chunk keeps the interval of its clip).

The build is idempotent and incremental (`unitsync`): a rerun keeps unchanged parents, replaces
changed ones and removes vanished ones, all in one transaction per footage, and embeds each
distinct text once.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from egodesk.core.settings import Settings
from egodesk.memory.clipspans import clip_holding
from egodesk.memory.indices import IndexManager
from egodesk.memory.schema import Caption, Clip, Note, TranscriptSegment, Unit
from egodesk.memory.speech import segment_clip, transcript_line
from egodesk.memory.store import Store
from egodesk.memory.unitsync import sync_units
from egodesk.perception.embedder import TextEmbedder

BUILDER = "parent-child"
CAPTION, TRANSCRIPT, NOTE, SUBCHUNK = "caption", "transcript", "note", "subchunk"
NOTE_PREFIX = "My note: "
# A sentence shorter than this joins its neighbour: "Yes." or "Hi Mel!" alone matches everything.
MIN_SUBCHUNK_CHARS = 40

_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+(?=\S)")
_SOFT_BREAK = re.compile(r"[,;:]\s|\s[-–—]\s")


@dataclass
class BuildReport:
    footage_id: int
    parents_added: int = 0
    children_added: int = 0
    parents_kept: int = 0
    parents_removed: int = 0
    texts_embedded: int = 0
    seconds: float = 0.0

    @property
    def units(self) -> int:
        """Units added by this run (parents and children)."""
        return self.parents_added + self.children_added


@dataclass
class _Parent:
    key: str  # "caption:<caption id>", "transcript:<clip id or first segment id>" or "note:<note id>"
    kind: str
    clip_id: int | None
    start: float
    end: float
    text: str
    digest: str = ""


def split_subchunks(text: str, max_chars: int, min_chars: int = MIN_SUBCHUNK_CHARS) -> list[str]:
    """Sentence-level pieces of at most `max_chars`: lines and sentences first; an over-long sentence
    is cut at a comma/semicolon/dash, else at a space, else hard; short pieces merge with a
    neighbour while the merge fits the cap. Never empty for a non-blank text."""
    pieces: list[str] = []
    for line in text.splitlines():
        for sentence in _SENTENCE_END.split(line.strip()):
            if sentence.strip():
                pieces += _cap(sentence.strip(), max_chars)
    merged: list[str] = []
    for piece in pieces:
        if merged and (len(merged[-1]) < min_chars or len(piece) < min_chars) and len(merged[-1]) + 1 + len(piece) <= max_chars:
            merged[-1] = f"{merged[-1]} {piece}"
        else:
            merged.append(piece)
    return merged


def _cap(sentence: str, max_chars: int) -> list[str]:
    out = []
    while len(sentence) > max_chars:
        window = sentence[: max_chars + 1]
        cut = max((m.start() + 1 for m in _SOFT_BREAK.finditer(window) if m.start() + 1 >= max_chars // 3), default=-1)
        if cut < 0:
            cut = window.rfind(" ")
        if cut <= 0:
            cut = max_chars
        out.append(sentence[:cut].strip())
        sentence = sentence[cut:].strip()
    if sentence:
        out.append(sentence)
    return out


def _parents(session: Session, footage_id: int) -> list[_Parent]:
    """What the footage's memory should hold now, from its captions and transcript."""
    out = [
        _Parent(f"caption:{c.id}", CAPTION, c.clip_id, c.start_ts, c.end_ts, c.text.strip())
        for c in session.scalars(select(Caption).where(Caption.footage_id == footage_id).order_by(Caption.start_ts, Caption.id))
        if c.text.strip()
    ]
    segments = session.scalars(
        select(TranscriptSegment)
        .where(TranscriptSegment.footage_id == footage_id)
        .order_by(TranscriptSegment.start_ts, TranscriptSegment.idx)
    ).all()
    clips = session.execute(
        select(Clip.id, Clip.start_ts, Clip.end_ts).where(Clip.footage_id == footage_id).order_by(Clip.start_ts)
    ).all()
    groups: dict[str, list[TranscriptSegment]] = defaultdict(list)
    clip_of: dict[str, int | None] = {}
    for seg in segments:
        clip_id = segment_clip(seg, clips)
        key = f"transcript:clip{clip_id}" if clip_id is not None else f"transcript:seg{seg.id}"
        groups[key].append(seg)
        clip_of[key] = clip_id
    for key, group in groups.items():
        text = "\n".join(line for line in map(transcript_line, group) if line)
        if text:
            out.append(_Parent(key, TRANSCRIPT, clip_of[key], min(s.start_ts for s in group), max(s.end_ts for s in group), text))
    for note in session.scalars(select(Note).where(Note.footage_id == footage_id).order_by(Note.start_ts, Note.id)):
        clip = clip_holding(clips, note.start_ts)
        out.append(
            _Parent(f"note:{note.id}", NOTE, clip.id if clip else None, note.start_ts, note.end_ts, NOTE_PREFIX + note.text)
        )
    for parent in out:
        parent.digest = hashlib.sha1(f"{parent.start}|{parent.end}|{parent.text}".encode()).hexdigest()
    return out


def build_parent_child(
    store: Store, index_manager: IndexManager, embedder: TextEmbedder, footage_id: int, settings: Settings | None = None
) -> BuildReport:
    """Build (or bring up to date) one footage's parent-child memory in one transaction; saves the
    indices afterwards. Running it again with nothing changed adds nothing."""
    settings = settings or Settings()
    started = time.perf_counter()
    report = BuildReport(footage_id)
    with store.session() as s:
        wanted = _parents(s, footage_id)
        keep, report.parents_removed = sync_units(s, index_manager, footage_id, BUILDER, {p.key: p.digest for p in wanted})
        report.parents_kept = len(keep)
        todo = [p for p in wanted if p.key not in keep]
        if todo:
            _add(s, index_manager, embedder, footage_id, todo, settings.subchunk_max_chars, report)
    index_manager.save()
    report.seconds = time.perf_counter() - started
    return report


def _add(
    s: Session,
    index_manager: IndexManager,
    embedder: TextEmbedder,
    footage_id: int,
    todo: list[_Parent],
    max_chars: int,
    report: BuildReport,
) -> None:
    parents = [
        Unit(
            footage_id=footage_id,
            clip_id=p.clip_id,
            kind=p.kind,
            start_ts=p.start,
            end_ts=p.end,
            text=p.text,
            builder=BUILDER,
            meta={"key": p.key, "digest": p.digest},
        )
        for p in todo
    ]
    s.add_all(parents)
    s.flush()
    children = [
        Unit(
            footage_id=footage_id,
            clip_id=p.clip_id,
            parent_id=unit.id,
            kind=SUBCHUNK,
            start_ts=p.start,
            end_ts=p.end,
            text=piece,
            builder=BUILDER,
            meta={"index": j},
        )
        for p, unit in zip(todo, parents)
        for j, piece in enumerate(split_subchunks(p.text, max_chars))
    ]
    s.add_all(children)
    s.flush()
    # Embed each distinct text once (narrations repeat; a one-sentence caption is its own subchunk).
    texts = sorted({u.text for u in parents} | {u.text for u in children})
    matrix = embedder.embed_documents(texts)
    row = {text: i for i, text in enumerate(texts)}
    for space in (CAPTION, TRANSCRIPT, NOTE):
        units = [u for u in parents if u.kind == space]
        if units:
            index_manager.add(space, [u.id for u in units], matrix[[row[u.text] for u in units]], embedder.model_id, session=s)
    if children:
        index_manager.add(
            SUBCHUNK, [u.id for u in children], matrix[[row[u.text] for u in children]], embedder.model_id, session=s
        )
    report.parents_added, report.children_added, report.texts_embedded = len(parents), len(children), len(texts)
