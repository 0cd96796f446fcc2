"""Search as you type (`retrieval.search` over `memory.textsearch`) on a real SQLite library: the query
rules, the alike words, the index kept in step by triggers (inserts, updates, deletes, cascades), the
migration that fills an existing library, and `Library.search` / `egodesk search` over imported text."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta

import pytest
from sqlalchemy import delete, text

from egodesk.cli import main as cli_main
from egodesk.memory.schema import Caption, Clip, Footage, Keyframe, TranscriptSegment, Unit
from egodesk.memory.store import Store
from egodesk.pipeline.library import Library
from egodesk.retrieval.search import TextSearch, Vocabulary, parse

DAY = 1_710_320_400.0  # 2024-03-13 09:00 UTC
ENTRIES = [
    ("kitchen", "2024-03-13T09:00:00", "transcript", "Ana: Did you book the dentist pointment for Thursday?"),
    ("kitchen", "2024-03-13T09:00:30", "transcript", "Ben: I took the red umbrella to the car."),
    ("kitchen", "2024-03-13T09:01:00", "caption", "I put the blue mug on the kitchen table."),
    ("garden", "2024-03-14T10:00:00", "caption", "I water the tomatoes next to the red shed."),
    ("garden", "2024-03-14T10:00:30", "transcript", "Cara: The appointment moved to Friday, the dentist called."),
]


def write_memory(path, entries=ENTRIES):
    rows = []
    for n, (source, start, kind, line) in enumerate(entries):
        end = (datetime.fromisoformat(start) + timedelta(seconds=20)).isoformat()
        rows.append({"id": f"{source}-{n}", "source": source, "start": start, "end": end, "kind": kind, "text": line})
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def text_library(tmp_path):
    library = Library(tmp_path / "library")
    report = library.add([write_memory(tmp_path / "memory.jsonl")])
    assert not report.errors
    yield library
    library.close()


def test_quoted_phrases_loose_words_and_the_word_being_typed():
    terms = parse('red "blue mug" umbr')
    assert terms.phrases == [["blue", "mug"]] and terms.words == ["red", "umbr"] and terms.typing == "umbr"
    assert parse("red umbrella ").typing == ""  # a space ends the word
    assert parse("the red").words == ["red"]  # common words dropped when something else remains
    assert parse("the").words == ["the"]
    open_phrase = parse('"blue mu')
    assert open_phrase.phrases == [["blue", "mu"]] and open_phrase.open_phrase and not open_phrase.words
    assert parse("Café CRÈME").words == ["cafe", "creme"]


def test_alike_words_share_a_lemma_a_sound_or_a_spelling():
    vocabulary = Vocabulary({"appointment": 3, "take": 9, "taking": 2, "umbrella": 4, "brella": 1, "house": 5})
    assert vocabulary.alike("pointment") == ["appointment"]
    assert set(vocabulary.alike("took")) == {"take", "taking"}
    assert vocabulary.alike("umbrela") == ["umbrella"]
    assert vocabulary.alike("horse") == []  # five letters: spelled alike needs six, "house" is another word


def test_library_search_finds_heard_alike_words_grouped_by_footage_and_time(text_library):
    result = text_library.search("appointment dentist")
    assert [h.text for h in result.hits] == [
        "Ana: Did you book the dentist pointment for Thursday?",
        "Cara: The appointment moved to Friday, the dentist called.",
    ]
    assert result.alike == {"appointment": ["pointment"]}
    first, second = result.hits
    assert first.title == "kitchen" and first.kind == "speech" and first.offset == 0.0
    assert first.words == ["dentist", "pointment"] and second.words == ["appointment", "dentist"]
    # a quoted phrase is exact: the misheard word does not match it
    assert [h.title for h in text_library.search('"dentist appointment"').hits] == []
    assert [h.words for h in text_library.search('"the dentist called"').hits] == [["the dentist called"]]


def test_hits_are_ordered_by_footage_then_time_and_marked(text_library):
    result = text_library.search("red")
    assert [(h.title, h.offset, h.kind) for h in result.hits] == [("kitchen", 30.0, "speech"), ("garden", 0.0, "caption")]
    assert all(h.text[a:b].lower() == "red" for h in result.hits for a, b in h.marks)
    assert [h.words for h in text_library.search("umbr").hits] == [["umbrella"]]  # typed: the start of a word
    assert text_library.search("umbr ").hits == []  # finished: the word itself


def test_limit_says_more_matched(text_library):
    result = text_library.search("the", limit=2)
    assert len(result.hits) == 2 and result.more


def test_index_follows_inserts_updates_and_deletes_of_every_kind(tmp_path):
    store = Store(tmp_path / "library.sqlite")
    search = TextSearch(store)
    with store.session() as s:
        footage = Footage(content_hash="h", path="/v.mp4", title="walk", start_ts=DAY, duration=60)
        s.add(footage)
        s.flush()
        clip = Clip(footage_id=footage.id, idx=0, offset=0.0, start_ts=DAY, end_ts=DAY + 15)
        s.add(clip)
        s.flush()
        s.add(Keyframe(clip_id=clip.id, idx=0, offset=3.0, ts=DAY + 3, labels=[["espresso maker", 0.8], ["mug", 0.1]]))
        s.add(Keyframe(clip_id=clip.id, idx=1, offset=9.0, ts=DAY + 9, labels=[["espresso maker", 0.7]]))
        s.add(
            Caption(clip_id=clip.id, footage_id=footage.id, start_ts=DAY, end_ts=DAY + 15, text="I walk.", captioner="describe")
        )
        s.add(TranscriptSegment(footage_id=footage.id, clip_id=clip.id, idx=0, start_ts=DAY + 1, end_ts=DAY + 4, text="hello"))
        s.add(
            Unit(
                footage_id=footage.id,
                clip_id=clip.id,
                kind="atomic",
                view="action",
                start_ts=DAY,
                end_ts=DAY + 5,
                text="I greet Ana",
            )
        )
        s.add(Unit(footage_id=footage.id, clip_id=clip.id, kind="subchunk", start_ts=DAY, end_ts=DAY + 5, text="I greet Ana"))
    hits = search.search("espresso").hits
    assert [(h.kind, h.offset, h.text) for h in hits] == [("tags", 3.0, "espresso maker, mug")]  # one per clip
    assert [h.kind for h in search.search("greet").hits] == ["memory"]  # subchunks are not memories
    with store.session() as s:
        s.execute(text("UPDATE keyframe SET ocr_text = 'EXIT 12' WHERE idx = 1"))
        s.execute(text("UPDATE caption SET text = 'I walk to the exit.'"))
    assert sorted(h.kind for h in search.search("exit").hits) == ["caption", "screen"]
    with store.session() as s:
        s.execute(delete(TranscriptSegment))
    assert search.search("hello").hits == []
    with store.session() as s:
        s.execute(delete(Footage))  # cascades to clips, keyframes, captions and units
    assert search.search("exit espresso greet").hits == []
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM text_search")).scalar_one() == 0
    store.close()


def test_migration_fills_the_index_of_an_existing_library(text_library):
    path = text_library.paths.database
    text_library.close()
    raw = sqlite3.connect(path)
    triggers = [n for (n,) in raw.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'text_search%'")]
    assert len(triggers) == 18  # insert, delete and update triggers of six kinds
    for name in [*triggers, "text_search_vocab", "text_search"]:
        raw.execute(f"DROP {'TRIGGER' if name in triggers else 'TABLE'} {name}")
    raw.execute("PRAGMA user_version = 2")  # as a library made before version 3
    raw.commit()
    raw.close()
    reopened = Library(path.parent)
    assert len(reopened.search("dentist").hits) == 2
    reopened.close()


def test_egodesk_search_prints_hits_by_footage_with_words_marked(text_library, capsys):
    root = str(text_library.paths.root)
    assert cli_main(["search", "umbrella", "--library", root]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("kitchen  (")
    assert out[1].split() == ["0:00:30", "speech", "Ben:", "I", "took", "the", "red", "[umbrella]", "to", "the", "car."]
    assert cli_main(["--library", root, "search", '"the dentist called"', "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(h["title"], h["kind"], h["words"]) for h in data["hits"]] == [("garden", "speech", ["the dentist called"])]
    assert cli_main(["search", "zeppelin", "--library", root]) == 1  # nothing found
    assert "0 hits" in capsys.readouterr().err
