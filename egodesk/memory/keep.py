"""Kept moments: the spans of footage a person starred, and the notes they wrote on moments.

Both are the person's own data, unlike everything else in a library, which ingest derives from the footage
and can derive again. So the rules are stricter:
- A span is checked before anything is written: it must lie within its footage (a little slack at the end,
  `END_SLACK_S`, for a player that reports the last frame's end) and be longer than nothing; a refused
  span, an empty note or an unknown id raises `KeepError` and changes nothing.
- Each change is one transaction (the note's row and its search-index row, written by the triggers of
  `textsearch`, commit together).
- Starring a span already starred returns that star (unique per footage and span): a double click
  cannot make two.
- Forgetting a footage deletes its stars and notes with it (foreign-key cascade): "forget" means gone.

A note is also evidence for questions: the parent-child builder reads the notes with the captions and
transcript (`parent_child._parents`), so after a change the caller brings that memory up to date
(`pipeline.library.Library`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import cast

from sqlalchemy import select

from egodesk.core.timeutil import clock
from egodesk.memory.schema import Footage, Note, Star
from egodesk.memory.store import Store

END_SLACK_S = 0.5  # a span may end this far past its footage's end (the last frame's length, rounding)
NOTE_MAX_CHARS = 10_000  # a note longer than this is a paste gone wrong, not a note


class KeepError(ValueError):
    """A star or note that cannot be kept as asked, with the reason a person can act on."""


@dataclass
class KeptMoment:
    """One star or note, with where it is: wall-clock start and end, and seconds into its footage file."""

    id: int
    kind: str  # star | note
    footage_id: int
    title: str
    start: float
    end: float
    offset: float
    text: str = ""  # a note's text


def check_span(footage: Footage, start: float, end: float) -> None:
    """Refuse a span (wall-clock seconds) that is empty, reversed or not within the footage."""
    if not (math.isfinite(start) and math.isfinite(end)):
        raise KeepError("the moment's start and end must be numbers")
    if end <= start:
        raise KeepError(
            f"the moment must end after it starts ({clock(start - footage.start_ts)} to {clock(end - footage.start_ts)})"
        )
    if start < footage.start_ts or end > footage.end_ts + END_SLACK_S:
        raise KeepError(
            f"the moment {clock(start - footage.start_ts)}–{clock(end - footage.start_ts)} is not within "
            f"“{footage.title}”, which runs 0:00:00–{clock(footage.duration)}"
        )


def _footage(s, footage_id: int) -> Footage:
    footage = s.get(Footage, footage_id)
    if footage is None:
        raise KeepError(f"there is no footage {footage_id} in this library")
    return footage


def _note_text(text: str) -> str:
    cleaned = text.strip()
    if not cleaned:
        raise KeepError("a note needs some text")
    if len(cleaned) > NOTE_MAX_CHARS:
        raise KeepError(f"a note can hold at most {NOTE_MAX_CHARS} characters (this one has {len(cleaned)})")
    return cleaned


def star(store: Store, footage_id: int, start: float, end: float) -> int:
    """Star a span of a footage; the id of its star (the one it had, when already starred)."""
    with store.session() as s:
        check_span(_footage(s, footage_id), start, end)
        found = s.scalar(select(Star.id).where(Star.footage_id == footage_id, Star.start_ts == start, Star.end_ts == end))
        if found is not None:
            return found
        row = Star(footage_id=footage_id, start_ts=start, end_ts=end)
        s.add(row)
        s.flush()
        return row.id


def unstar(store: Store, star_id: int) -> int:
    """Remove a star; its footage id."""
    return _delete(store, Star, star_id, "star")


def add_note(store: Store, footage_id: int, start: float, end: float, text: str) -> int:
    """Write a note on a span of a footage; its id."""
    cleaned = _note_text(text)
    with store.session() as s:
        check_span(_footage(s, footage_id), start, end)
        row = Note(footage_id=footage_id, start_ts=start, end_ts=end, text=cleaned)
        s.add(row)
        s.flush()
        return row.id


def edit_note(store: Store, note_id: int, text: str) -> int:
    """Replace a note's text; its footage id."""
    cleaned = _note_text(text)
    with store.session() as s:
        row = s.get(Note, note_id)
        if row is None:
            raise KeepError(f"there is no note {note_id} in this library")
        row.text, row.updated_at = cleaned, time.time()
        return row.footage_id


def delete_note(store: Store, note_id: int) -> int:
    """Delete a note; its footage id."""
    return _delete(store, Note, note_id, "note")


def _delete(store: Store, model: type[Star] | type[Note], row_id: int, name: str) -> int:
    """Delete a star or a note; its footage id. An unknown id is refused."""
    with store.session() as s:
        row = cast("Star | Note | None", s.get(model, row_id))
        if row is None:
            raise KeepError(f"there is no {name} {row_id} in this library")
        s.delete(row)
        return row.footage_id


def kept(store: Store, kinds: tuple[str, ...] = ("star", "note"), footage_id: int | None = None) -> list[KeptMoment]:
    """The stars and notes (of one footage, or all), in time order."""
    with store.session() as s:
        footage = {fid: (title, start) for fid, title, start in s.execute(select(Footage.id, Footage.title, Footage.start_ts))}
        rows: list[tuple[str, int, int, float, float, str]] = []
        if "star" in kinds:
            query = select(Star) if footage_id is None else select(Star).where(Star.footage_id == footage_id)
            rows += [("star", r.id, r.footage_id, r.start_ts, r.end_ts, "") for r in s.scalars(query)]
        if "note" in kinds:
            notes = select(Note) if footage_id is None else select(Note).where(Note.footage_id == footage_id)
            rows += [("note", r.id, r.footage_id, r.start_ts, r.end_ts, r.text) for r in s.scalars(notes)]
    out = [
        KeptMoment(row_id, kind, fid, footage[fid][0], start, end, start - footage[fid][1], text)
        for kind, row_id, fid, start, end, text in rows
    ]
    return sorted(out, key=lambda k: (k.start, k.footage_id, k.kind != "star", k.id))
