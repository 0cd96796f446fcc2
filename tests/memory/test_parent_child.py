"""Parent-child memory over text-imported footage: units, parent links, time intervals, vectors,
idempotent and incremental rebuilds."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from sqlalchemy import select

from egodesk.core.settings import Settings
from egodesk.memory.indices import IndexManager
from egodesk.memory.parent_child import build_parent_child, split_subchunks
from egodesk.memory.store import Caption, Unit, Vector
from egodesk.pipeline.textimport import import_memory_jsonl

SHARED = Path(os.environ.get("EGODESK_SHARED", Path(__file__).resolve().parents[3] / "shared"))
EPIC_MEMORY = SHARED / "benchmarks" / "epic-dev" / "memory.jsonl"

LONG = (
    "I walk into the kitchen and put the blue umbrella on the chair next to the door. "
    "Then I open the fridge. I take out the milk, the butter and a box of eggs, and I place all of them on the "
    "counter beside the stove, where the frying pan is already warming up over a low flame. Ok."
)


def write_jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def footage(store, tmp_path):
    rows = [
        {"source": "day1", "start": "2024-03-01T09:00:00", "end": "2024-03-01T09:00:15", "kind": "caption", "text": LONG},
        {
            "source": "day1",
            "start": "2024-03-01T09:00:15",
            "end": "2024-03-01T09:00:30",
            "kind": "narration",
            "text": "I take plate.",
        },
        {
            "source": "day1",
            "start": "2024-03-01T09:00:30",
            "end": "2024-03-01T09:00:40",
            "kind": "transcript",
            "text": "Katrina: Let's have lunch in the courtyard today. The weather is lovely.",
        },
    ]
    result = import_memory_jsonl(store, write_jsonl(tmp_path / "memory.jsonl", rows))
    return result.footage_ids[0]


def test_split_subchunks_caps_and_merges():
    pieces = split_subchunks(LONG, 120)
    assert all(len(p) <= 120 for p in pieces)
    assert " ".join(pieces).split() == LONG.split()  # nothing lost or reordered
    assert pieces[-1].endswith("Ok.") and len(pieces[-1]) > len("Ok.")  # the short tail merged
    assert split_subchunks("I take plate.", 240) == ["I take plate."]
    assert split_subchunks("A: Hi!\nB: Hello there, how are you doing today my friend?", 240) == [
        "A: Hi! B: Hello there, how are you doing today my friend?"
    ]
    assert all(len(p) <= 40 for p in split_subchunks("x" * 100 + " " + "y" * 30, 40))


def test_build_units_links_and_vectors(store, lib_paths, embedder, footage):
    indices = IndexManager(store, lib_paths.indices)
    report = build_parent_child(store, indices, embedder, footage, Settings(subchunk_max_chars=120))
    assert (report.parents_added, report.parents_kept) == (3, 0)
    with store.session() as s:
        units = s.scalars(select(Unit).where(Unit.footage_id == footage)).all()
        by_kind = {k: [u for u in units if u.kind == k] for k in ("caption", "transcript", "subchunk")}
        captions = s.scalars(select(Caption).where(Caption.footage_id == footage)).all()
        spaces = {(v.unit_id, v.space) for v in s.scalars(select(Vector))}
    assert len(by_kind["caption"]) == 2 and len(by_kind["transcript"]) == 1
    assert sorted((u.start_ts, u.end_ts, u.text) for u in by_kind["caption"]) == sorted(
        (c.start_ts, c.end_ts, c.text) for c in captions
    )
    transcript = by_kind["transcript"][0]
    assert transcript.text == "Katrina: Let's have lunch in the courtyard today. The weather is lovely."
    parents = {u.id: u for u in by_kind["caption"] + by_kind["transcript"]}
    for child in by_kind["subchunk"]:
        parent = parents[child.parent_id]
        assert (child.start_ts, child.end_ts, child.clip_id) == (parent.start_ts, parent.end_ts, parent.clip_id)
        assert child.text in parent.text.replace("\n", " ")
    long_parent = next(u for u in by_kind["caption"] if u.text == LONG)
    assert sum(c.parent_id == long_parent.id for c in by_kind["subchunk"]) >= 3
    assert report.children_added == len(by_kind["subchunk"]) and report.units == len(units)
    for u in units:
        space = "subchunk" if u.kind == "subchunk" else u.kind
        assert (u.id, space) in spaces
    assert (
        indices.count("caption") == 2
        and indices.count("transcript") == 1
        and indices.count("subchunk") == len(by_kind["subchunk"])
    )
    assert indices.model_id("subchunk") == embedder.model_id

    query = embedder.embed_queries(["where did I put the umbrella?"])
    top = indices.search("subchunk", query, 1)[0][0][0]
    with store.session() as s:
        hit = s.get(Unit, top)
        assert "umbrella" in hit.text and hit.parent_id == long_parent.id
    query = embedder.embed_queries(["what did Katrina suggest for lunch?"])
    assert indices.search("transcript", query, 1)[0][0][0] == transcript.id


def test_rebuild_is_idempotent_and_incremental(store, lib_paths, embedder, footage):
    indices = IndexManager(store, lib_paths.indices)
    build_parent_child(store, indices, embedder, footage)
    with store.session() as s:
        before = sorted(s.scalars(select(Unit.id)).all())
    again = build_parent_child(store, indices, embedder, footage)
    assert (again.parents_added, again.children_added, again.parents_kept, again.texts_embedded) == (0, 0, 3, 0)
    with store.session() as s:
        assert sorted(s.scalars(select(Unit.id)).all()) == before
        caption = s.scalar(select(Caption).where(Caption.text == "I take plate."))
        caption.text = "I take the red plate from the drying rack."
    changed = build_parent_child(store, indices, embedder, footage)
    assert (changed.parents_added, changed.parents_removed, changed.parents_kept) == (1, 1, 2)
    with store.session() as s:
        texts = s.scalars(select(Unit.text).where(Unit.kind == "caption")).all()
        n_children = len(s.scalars(select(Unit.id).where(Unit.kind == "subchunk")).all())
    assert "I take plate." not in texts and "I take the red plate from the drying rack." in texts
    assert indices.count("caption") == 2 and indices.count("subchunk") == n_children
    fresh = IndexManager(store, lib_paths.indices)  # the saved files agree with SQLite: no rebuild
    assert fresh.count("subchunk") == n_children


@pytest.mark.skipif(not EPIC_MEMORY.exists(), reason="benchmarks not present")
def test_epic_source(store, lib_paths, embedder, tmp_path):
    lines = EPIC_MEMORY.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])["source"]
    mine = [json.loads(line) for line in lines if json.loads(line)["source"] == first]
    footage = import_memory_jsonl(store, write_jsonl(tmp_path / "epic.jsonl", mine)).footage_ids[0]
    indices = IndexManager(store, lib_paths.indices)
    report = build_parent_child(store, indices, embedder, footage)
    assert report.parents_added == len(mine) and report.children_added == len(mine)  # one sentence each
    assert report.texts_embedded < len(mine)  # repeated narrations are embedded once
    with store.session() as s:
        pairs = s.execute(select(Unit.text, Unit.start_ts, Unit.end_ts).where(Unit.kind == "subchunk")).all()
        parents = s.execute(select(Unit.text, Unit.start_ts, Unit.end_ts).where(Unit.kind == "caption")).all()
    assert sorted(pairs) == sorted(parents)
