"""Re-embedding a library built with MiniLM into the default nomic embedder: detection, a stop part-way
and a continuation from another process, search during (old vectors, old embedder) and after (new),
and the interaction-record spaces (memory entries = their members' summed vectors)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sqlalchemy import select

import egodesk.memory.reembed as reembed_module
from egodesk.core.types import Progress
from egodesk.memory.indices import IndexManager
from egodesk.memory.parent_child import build_parent_child
from egodesk.memory.record_compression import ACTION_SPACE, ENTRY, OBJECT_SPACE
from egodesk.memory.record_tables import MemoryEntryState, from_bytes
from egodesk.memory.reembed import SHADOW, library_model, library_role, reembed, stale_spaces
from egodesk.memory.store import IndexInfo, Unit
from egodesk.memory.vectors import load_vectors, normalise
from egodesk.perception.embedder import make_embedder
from egodesk.pipeline.library import Library
from egodesk.pipeline.textimport import import_memory_jsonl
from egodesk.retrieval.base import Query
from egodesk.retrieval.registry import make_strategy
from tests.memory.test_forget_records import build as build_with_records

TEXTS = [
    ("caption", "I put the blue umbrella on the chair next to the front door."),
    ("narration", "I take the plate from the cupboard."),
    ("transcript", "Katrina: Let's have lunch in the courtyard today. The weather is lovely."),
    ("caption", "I fill the kettle with water and switch it on."),
    ("narration", "I open the laptop on the desk."),
    ("caption", "I water the tomato plants on the balcony."),
]
QUESTION = "where did I leave my umbrella?"


@pytest.fixture(scope="module")
def nomic():
    return make_embedder(threads=2)  # the default embedder


def _memory_jsonl(tmp_path):
    rows = [
        {"source": "day1", "start": f"2024-03-01T09:{i:02d}:00", "end": f"2024-03-01T09:{i:02d}:15", "kind": kind, "text": text}
        for i, (kind, text) in enumerate(TEXTS)
    ]
    path = tmp_path / "memory.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def minilm_library(store, lib_paths, tmp_path, embedder):
    [footage] = import_memory_jsonl(store, _memory_jsonl(tmp_path)).footage_ids
    indices = IndexManager(store, lib_paths.indices)
    build_parent_child(store, indices, embedder, footage)
    indices.add("visual-frame", [1], np.ones((1, 8)), "efficientnet-lite0")  # not a text space: left alone
    indices.save()
    return indices


def _umbrella_unit(store) -> int:
    with store.session() as s:
        return s.scalar(select(Unit.id).where(Unit.kind == "subchunk", Unit.text.like("%umbrella%")))


def test_a_library_built_with_another_embedder_is_detected(store, minilm_library, embedder, nomic):
    assert library_model(store) == embedder.model_id
    assert library_role(store, "embedder-nomic") == "embedder"  # questions keep using MiniLM for now
    assert stale_spaces(store, nomic.model_id) == ["caption", "subchunk", "transcript"]
    assert stale_spaces(store, embedder.model_id) == []


def test_reembed_stops_and_continues_and_search_works_during_and_after(
    store, lib_paths, minilm_library, embedder, nomic, monkeypatch
):
    monkeypatch.setattr(reembed_module, "BATCH", 2)
    umbrella = _umbrella_unit(store)
    assert minilm_library.search("subchunk", embedder.embed_queries([QUESTION]), 1)[0][0][0] == umbrella
    with store.session() as s:
        total = len(s.scalars(select(IndexInfo)).all())
    events: list[Progress] = []

    first = reembed(store, minilm_library, nomic, events.append, should_stop=lambda: len(events) >= 3)
    assert (
        not first.swapped and first.total == 12 and first.embedded == events[-1].done == 5
    )  # 3 captions in 2 batches, then 2 subchunks
    # Part-way: the library still searches its MiniLM vectors with MiniLM.
    assert library_role(store, "embedder-nomic") == "embedder" and minilm_library.model_id("subchunk") == embedder.model_id
    assert minilm_library.search("subchunk", embedder.embed_queries([QUESTION]), 1)[0][0][0] == umbrella

    fresh = IndexManager(store, lib_paths.indices)  # another process continues where the first stopped
    assert minilm_library.search("subchunk", embedder.embed_queries([QUESTION]), 1)[0][0][0] == umbrella
    second = reembed(store, fresh, nomic, events.append)
    assert second.swapped and second.embedded == 12 - 5  # only what the first run had not done
    assert [e.stage for e in events] == ["re-embed"] * len(events) and events[-1].done == events[-1].total == 12
    assert [e.done for e in events] == sorted(e.done for e in events)

    assert library_role(store, "embedder") == "embedder-nomic" and stale_spaces(store, nomic.model_id) == []
    for space in ("caption", "subchunk", "transcript"):
        assert fresh.model_id(space) == nomic.model_id and fresh.dim(space) == 768
    assert fresh.model_id("visual-frame") == "efficientnet-lite0" and fresh.dim("visual-frame") == 8
    assert fresh.search("subchunk", nomic.embed_queries([QUESTION]), 1)[0][0][0] == umbrella
    with store.session() as s:
        assert not s.scalars(select(IndexInfo.name).where(IndexInfo.name.like(f"{SHADOW}%"))).all()
        assert len(s.scalars(select(IndexInfo)).all()) == total
        text = s.get(Unit, umbrella).text
        _, stored = load_vectors(s, "subchunk", [umbrella])
    assert float(stored[0] @ nomic.embed_documents([text])[0]) > 0.9999  # f16: batch-mates move the last digits
    assert not list(lib_paths.indices.glob(f"{SHADOW}*"))
    assert reembed(store, fresh, nomic).spaces == []  # nothing left to do


def test_record_spaces_embed_their_fields_and_entries_sum_their_members(tmp_path, embedder, nomic):
    store, indices, _ = build_with_records(tmp_path, "records", embedder, skip=set())
    assert reembed(store, indices, nomic).swapped
    with store.session() as s:
        entries = s.scalars(select(Unit).where(Unit.kind == ENTRY)).all()
        record = s.scalar(select(Unit).where(Unit.kind == "record"))
        _, object_vector = load_vectors(s, OBJECT_SPACE, [record.id])
        assert float(object_vector[0] @ nomic.embed_documents([record.meta["object"]])[0]) > 0.9999
        assert entries
        for entry in entries:
            members = [m["record"] for m in entry.meta["members"]]
            for space in (OBJECT_SPACE, ACTION_SPACE):
                _, member_vectors = load_vectors(s, space, members)
                _, entry_vector = load_vectors(s, space, [entry.id])
                np.testing.assert_allclose(entry_vector[0], normalise(member_vectors.sum(axis=0))[0], atol=1e-5)
            state = s.get(MemoryEntryState, entry.id)
            _, objects = load_vectors(s, OBJECT_SPACE, members)
            np.testing.assert_allclose(from_bytes(state.object_sum), objects.sum(axis=0), atol=1e-5)
    assert indices.dim(OBJECT_SPACE) == 768


def test_the_worker_reembeds_after_its_stages_and_then_searches_with_the_new_embedder(tmp_path, monkeypatch, embedder, nomic):
    root = tmp_path / "library"
    library = Library(root)  # the suite's settings: MiniLM
    library.import_paths([_memory_jsonl(tmp_path)])
    assert library.engines.embedder.model_id == embedder.model_id
    library.close()

    monkeypatch.setenv("EGODESK_EMBEDDER_MODEL", "embedder-nomic")  # the user switches to nomic
    library = Library(root)
    assert library.engines.embedder.model_id == embedder.model_id  # until the library is re-embedded
    events: list[Progress] = []
    library.process(events.append)
    reembedding = [e for e in events if e.stage == "re-embed"]
    assert reembedding and reembedding[-1].done == reembedding[-1].total == 12
    # The worker's engines were its own: this library's (the app's asking side) follow before a question.
    library.follow_reembedding()
    assert library.engines.embedder.model_id == nomic.model_id
    [found] = make_strategy("flat", library.memory).retrieve(Query(QUESTION, k=1))
    assert "umbrella" in found.text
    events.clear()
    library.process(events.append)
    assert not [e for e in events if e.stage == "re-embed"]  # done once
    library.close()
