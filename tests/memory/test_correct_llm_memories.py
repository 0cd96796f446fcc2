"""The LLM-built memories of a corrected moment, written again for that moment alone: a footage of six
15 s clips (caption and one transcript line each) built into interaction records and atomic statements,
one line corrected, and only that clip's records and statements rewritten (the memory entries replayed to
what a build of the corrected words makes), every other row and vector as it was; undo brings the heard
words back. The replies come from a scripted reader (a test double of the LLM's reply that quotes each
clip's speech); SQLite, the real MiniLM embedder, compression and the hnswlib indices are the real ones."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from sqlalchemy import select

from egodesk.core.settings import Settings
from egodesk.memory import atomic, corrections, record_compression
from egodesk.memory.atomic import build_atomic
from egodesk.memory.indices import IndexManager
from egodesk.memory.record_compression import ENTRY, RECORD, build_records
from egodesk.memory.record_tables import BuildProgress
from egodesk.memory.store import Store, TranscriptSegment, Unit, Vector
from egodesk.perception.llm import LLMError
from tests.memory.conftest import add_video

SETTINGS = Settings(wearer_name="I", records_batch_size=3, atomic_batch_size=2)
LABELS = [[["kitchen", 0.9]], [["table", 0.9]], [["door", 0.9]], [["kitchen", 0.9]], [["table", 0.9]], [["street", 0.9]]]
NUMBERED = re.compile(r"^(\d+)\. \(wearer: [^)]*\) (.*)$", re.M)
QUOTED = re.compile(r'"([^"]*)"')
CORRECTED = 2  # the clip whose line is corrected
NEW_WORDS = "feed the Zanzibar wombat"


class SpeechReader:
    """Stands in for the LLM: per numbered clip of a prompt, one record and one statement from its last
    speech line ("Alice say wombat" quoting the line, "Alice says <the line>"), or for a clip without
    speech from its caption ("I do glass", the caption itself). It keeps the prompts it was given."""

    model_id = "speech-reader"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def keep_prefix(self, messages):
        pass

    def chat(self, messages, max_tokens=256, temperature=0.0, schema=None):
        prompt = messages[-1]["content"]
        self.prompts.append(prompt)
        records, statements = [], []
        for number, entry in NUMBERED.findall(prompt):
            caption, _, speech = entry.partition("Speech: ")
            lines = QUOTED.findall(speech)
            speaker, _, words = lines[-1].rpartition(": ") if lines else ("", "", caption.strip())
            record = {"id": int(number), "action": "say" if lines else "do", "object": re.findall(r"\w+", words)[-1]}
            if lines:
                record.update(said=len(lines), persons=[speaker] if speaker else [])
            records.append(record)
            text = (f"{speaker} says {words}" if speaker else f"I hear: {words}") if lines else words
            statements.append({"view": "utterance" if lines else "action", "ids": [int(number)], "text": text})
        return json.dumps({"records": records} if "records" in schema["properties"] else {"statements": statements}), 50


class BrokenLLM(SpeechReader):
    def chat(self, messages, max_tokens=256, temperature=0.0, schema=None):
        raise LLMError("the model is gone")


def _library(folder, embedder, line: str | None = None) -> tuple[Store, IndexManager, int]:
    """The six-clip footage built into records and atomic statements; `line` in place of clip 2's words."""
    folder.mkdir()
    store = Store(folder / "library.db")
    footage = add_video(store, folder / "thumbs", LABELS, captions=[f"I am at the {labels[0][0]}." for labels in LABELS])
    if line is not None:
        with store.session() as s:
            s.scalars(select(TranscriptSegment).where(TranscriptSegment.idx == CORRECTED)).one().text = line
    indices = IndexManager(store, folder / "indices")
    reader = SpeechReader()
    build_records(store, indices, embedder, reader, footage, SETTINGS)
    build_atomic(store, indices, embedder, reader, footage, SETTINGS)
    return store, indices, footage


def _rows(store: Store) -> dict[int, tuple]:
    """Every record and statement: id -> (kind, clip, text, fields, {space: vector bytes})."""
    with store.session() as s:
        units = s.scalars(select(Unit).where(Unit.kind.in_((RECORD, atomic.KIND)))).all()
        vectors: dict[int, dict[str, bytes]] = {}
        for v in s.scalars(select(Vector).where(Vector.unit_id.in_([u.id for u in units]))):
            vectors.setdefault(v.unit_id, {})[v.space] = v.data
        fields = ("persons", "action", "object", "speech")
        return {
            u.id: (u.kind, u.clip_id, u.text, tuple(str((u.meta or {}).get(f)) for f in fields), vectors.get(u.id, {}))
            for u in units
        }


def _entries(store: Store) -> list[tuple]:
    """The compression without database ids: each record's decisions and each memory entry, in time order."""
    with store.session() as s:
        units = s.scalars(select(Unit).where(Unit.kind.in_((RECORD, ENTRY))).order_by(Unit.start_ts, Unit.kind, Unit.text)).all()
        return [
            (
                u.kind,
                u.text,
                u.start_ts,
                u.end_ts,
                sorted((k, str(v)) for k, v in (u.meta or {}).items() if k not in ("entry", "members")),
            )
            for u in units
        ]


def _rebuild(store, indices, embedder, llm, footage, line) -> tuple[dict, dict]:
    clips = corrections.clips_of(store, footage, line.start, line.end)
    return (
        record_compression.rebuild_clips(store, indices, embedder, llm, footage, clips, SETTINGS),
        atomic.rebuild_clips(store, indices, embedder, llm, footage, clips, SETTINGS),
    )


@pytest.fixture
def built(tmp_path, embedder):
    store, indices, footage = _library(tmp_path / "lib", embedder)
    with store.session() as s:
        segment = s.scalars(select(TranscriptSegment).where(TranscriptSegment.idx == CORRECTED)).one()
        at, clip_id = (segment.start_ts + segment.end_ts) / 2, segment.clip_id
    yield store, indices, footage, at, clip_id
    store.close()


def test_only_the_corrected_clip_is_written_again_and_undo_brings_it_back(built, embedder, tmp_path):
    store, indices, footage, at, clip_id = built
    before = _rows(store)
    reader = SpeechReader()

    line = corrections.correct(store, footage, at, NEW_WORDS)
    assert corrections.clips_of(store, footage, line.start, line.end) == [clip_id]
    records, statements = _rebuild(store, indices, embedder, reader, footage, line)
    assert len(reader.prompts) == 2 and all(NEW_WORDS in p and "words number 2" not in p for p in reader.prompts)
    assert (records["changed"], records["records"], statements["changed"], statements["statements"]) == (True, 1, True, 1)

    after = _rows(store)
    others = {uid: row for uid, row in before.items() if row[1] != clip_id}
    assert {uid: after[uid] for uid in others} == others  # every other clip's rows and vectors as they were
    new = {uid: row for uid, row in after.items() if uid not in before}
    assert sorted((kind, clip, text) for kind, clip, text, _, _ in new.values()) == [
        ("atomic", clip_id, f"Alice says {NEW_WORDS}"),
        (RECORD, clip_id, f'Alice say wombat: "Alice: {NEW_WORDS}"'),
    ]
    assert not any(row[1] == clip_id for uid, row in after.items() if uid in before)  # the old ones are gone

    # the entries are what a build that heard the corrected words makes; the indices hold the new units only
    fresh_store, _, _ = _library(tmp_path / "fresh", embedder, NEW_WORDS)
    assert _entries(store) == _entries(fresh_store)
    fresh_store.close()
    old_ids = {uid for uid, row in before.items() if row[1] == clip_id}
    for space in (record_compression.OBJECT_SPACE, atomic.space("utterance")):
        for uid in new:
            if space in new[uid][4]:
                vector = np.frombuffer(new[uid][4][space], np.float32)
                assert uid in {hit for hit, _ in indices.search(space, vector, 3)[0]}  # (its entry has its vector too)
        indices.rebuild(space)  # from SQLite: the same units
        assert not old_ids & {uid for uid, _ in indices.search(space, np.ones(embedder.dim, np.float32), 50)[0]}

    line = corrections.undo(store, footage, at)
    records, statements = _rebuild(store, indices, embedder, reader, footage, line)
    assert records["changed"] and statements["changed"]
    undone = _rows(store)
    assert {uid: undone[uid] for uid in others} == others
    assert sorted(row[2] for row in undone.values() if row[1] == clip_id) == sorted(
        row[2] for row in before.values() if row[1] == clip_id
    )


def test_words_that_come_out_the_same_change_nothing(built, embedder):
    store, indices, footage, at, clip_id = built
    before, entries = _rows(store), _entries(store)
    line = corrections.correct(store, footage, at, "words number 2")  # the text in force: no new row
    records, statements = _rebuild(store, indices, embedder, SpeechReader(), footage, line)
    assert not records["changed"] and not statements["changed"]
    assert _rows(store) == before and _entries(store) == entries


def test_a_failing_llm_keeps_the_old_memories(built, embedder, caplog):
    store, indices, footage, at, _clip_id = built
    before, entries = _rows(store), _entries(store)
    line = corrections.correct(store, footage, at, NEW_WORDS)
    clips = corrections.clips_of(store, footage, line.start, line.end)
    for rebuild in (record_compression.rebuild_clips, atomic.rebuild_clips):
        with pytest.raises(LLMError, match="the model is gone"):
            rebuild(store, indices, embedder, BrokenLLM(), footage, clips, SETTINGS)
    assert _rows(store) == before and _entries(store) == entries
    assert all("the model is gone" in r.getMessage() for r in caplog.records)
    caplog.clear()


def test_a_clip_the_build_has_not_read_is_left_to_it(built, embedder):
    store, indices, footage, at, _clip_id = built
    with store.session() as s:
        for mark in s.scalars(select(BuildProgress)):
            mark.last_idx = CORRECTED - 1  # as if killed before the corrected clip: it reads the new words itself
    before = _rows(store)
    reader = SpeechReader()
    line = corrections.correct(store, footage, at, NEW_WORDS)
    records, statements = _rebuild(store, indices, embedder, reader, footage, line)
    assert (records["clips"], statements["clips"], reader.prompts) == (0, 0, [])
    assert _rows(store) == before


def test_the_clips_of_a_line_are_those_it_overlaps_or_for_screen_text_the_one_holding_it(built):
    store, _indices, footage, _at, clip_id = built
    with store.session() as s:
        segment = s.scalars(select(TranscriptSegment).where(TranscriptSegment.idx == CORRECTED)).one()
        clip_start = segment.start_ts - 1  # add_video: a clip's line starts 1 s into it, clips 15 s long
    assert corrections.clips_of(store, footage, clip_start + 14, clip_start + 17) == [clip_id, clip_id + 1]
    assert corrections.clips_of(store, footage, clip_start, clip_start + 15) == [clip_id]  # edges touched only
    assert corrections.clips_of(store, footage, clip_start + 15, clip_start + 15) == [clip_id + 1]  # a keyframe's moment
    assert corrections.clips_of(store, footage, clip_start + 1_000, clip_start + 1_000) == [clip_id + 3]  # past the end: the last
