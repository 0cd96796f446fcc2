"""Forgetting a time range of a footage with interaction records: the records in the range go, the
records outside it stay (even where both were consolidated into one memory entry), and the entries,
prototypes and carried-over history become exactly what a build that never saw the forgotten records
makes. The records come from a scripted extractor (a test double of the LLM's reply, one record per
narration); compression, SQLite and the indices are the real ones."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta

import numpy as np
import pytest
from sqlalchemy import select

from egodesk.core.settings import Settings
from egodesk.core.timeutil import to_ts
from egodesk.memory.forget import forget
from egodesk.memory.indices import IndexManager
from egodesk.memory.record_compression import ACTION_SPACE, ENTRY, OBJECT_SPACE, RECORD, build_records
from egodesk.memory.record_tables import BuildProgress, EventPrototype, MemoryEntryState, from_bytes
from egodesk.memory.store import Store, Unit, Vector
from tests.memory.conftest import narrated_day

T0 = datetime(2024, 5, 6, 8, 0)
# (minutes after T0, narration): a repeated routine, so records consolidate across the forgotten range
NARRATIONS = [
    (0, "I take plate"),
    (4, "I open fridge"),
    (9, "I take plate"),
    (15, "I wash cloth"),
    (22, "I take plate"),
    (30, "I open fridge"),
    (41, "I take plate"),
    (55, "I turn on tap"),
    (70, "I take plate"),
    (90, "I open fridge"),
    (95, "I take plate"),
    (130, "I wash cloth"),
]
FORGOTTEN = {4, 5, 6}  # positions in NARRATIONS: 08:22 to 08:41
SETTINGS = Settings(wearer_name="I", records_batch_size=5)
LINE = re.compile(r"^(\d+)\. .*?I (\w+) (.+?)\.?$", re.M)


class NarrationReader:
    """Stands in for the LLM: one record per narration, "I <verb> <object>" read off the prompt."""

    model_id = "narration-reader"

    def keep_prefix(self, messages):
        pass

    def chat(self, messages, max_tokens=256, temperature=0.0, schema=None):
        found = LINE.findall(messages[-1]["content"])
        return json.dumps({"records": [{"id": int(i), "action": verb, "object": obj} for i, verb, obj in found]}), 100


def build(tmp_path, name: str, embedder, skip: set[int]) -> tuple[Store, IndexManager, int]:
    narrations = [(T0 + timedelta(minutes=m), text + ".") for i, (m, text) in enumerate(NARRATIONS) if i not in skip]
    store, indices, footage = narrated_day(tmp_path / name, narrations)
    build_records(store, indices, embedder, NarrationReader(), footage, SETTINGS)
    return store, indices, footage


def memory_of(store: Store, footage: int) -> dict:
    """The footage's record memory without database ids: what two builds must agree on."""
    with store.session() as s:
        records = s.scalars(select(Unit).where(Unit.footage_id == footage, Unit.kind == RECORD).order_by(Unit.id)).all()
        entries = s.scalars(select(Unit).where(Unit.footage_id == footage, Unit.kind == ENTRY).order_by(Unit.start_ts)).all()
        starts = {u.id: u.start_ts for u in [*records, *entries]}
        protos = s.scalars(select(EventPrototype).where(EventPrototype.footage_id == footage).order_by(EventPrototype.seq)).all()
        states = {
            starts[row.unit_id]: row for row in s.scalars(select(MemoryEntryState).where(MemoryEntryState.footage_id == footage))
        }
        vectors = {
            (starts[v.unit_id], v.space): np.frombuffer(v.data, np.float32)
            for v in s.scalars(select(Vector).where(Vector.unit_id.in_(starts)))
        }
        history = from_bytes(s.get(BuildProgress, (footage, "imprint")).state)
        return {
            "records": [
                (u.text, u.start_ts, u.end_ts, {k: v for k, v in u.meta.items() if k != "entry"}, starts.get(u.parent_id))
                for u in records
            ],
            "entries": [
                (
                    u.text,
                    u.start_ts,
                    u.end_ts,
                    u.meta["count"],
                    u.meta["importance"],
                    [(m["start"], m["text"]) for m in u.meta["members"]],
                )
                for u in entries
            ],
            "prototypes": [(p.count, p.last_seen) for p in protos],
            "prototype_sums": np.array([from_bytes(p.context_sum) for p in protos]),
            "entry_sums": {
                t: [from_bytes(getattr(r, f)) for f in ("event_sum", "context_sum", "object_sum", "action_sum")] + [r.count]
                for t, r in states.items()
            },
            "vectors": vectors,
            "history": history,
            "ids": set(starts),
        }


def assert_same_memory(got: dict, want: dict) -> None:
    assert got["records"] == want["records"] and got["entries"] == want["entries"]
    assert got["prototypes"] == want["prototypes"]
    np.testing.assert_allclose(got["prototype_sums"], want["prototype_sums"], atol=1e-9)
    assert got["entry_sums"].keys() == want["entry_sums"].keys()
    for start, sums in want["entry_sums"].items():
        for a, b in zip(got["entry_sums"][start], sums):
            np.testing.assert_allclose(a, b, atol=1e-9)
    assert got["vectors"].keys() == want["vectors"].keys()
    for key, vector in want["vectors"].items():
        np.testing.assert_allclose(got["vectors"][key], vector, atol=1e-6)
    np.testing.assert_allclose(got["history"], want["history"], atol=1e-12)


def test_range_forget_recompresses_as_if_the_records_had_never_been(tmp_path, lib_paths, embedder):
    store, indices, footage = build(tmp_path, "forgotten", embedder, skip=set())
    before = memory_of(store, footage)
    lo = to_ts(T0 + timedelta(minutes=NARRATIONS[min(FORGOTTEN)][0]))
    hi = to_ts(T0 + timedelta(minutes=NARRATIONS[max(FORGOTTEN)][0], seconds=20))
    in_range = [r for r in before["records"] if lo <= r[1] < hi]
    mixed = [e for e in before["entries"] if any(lo <= t < hi for t, _ in e[5]) and not all(lo <= t < hi for t, _ in e[5])]
    assert len(in_range) == len(FORGOTTEN) and mixed  # an entry holds records from inside and outside the range

    report = forget(store, indices, lib_paths, footage, lo, hi, embedder=embedder, settings=SETTINGS)

    after = memory_of(store, footage)
    assert report.clips == len(FORGOTTEN) and report.units >= len(FORGOTTEN)
    assert [r[:3] for r in after["records"]] == [r[:3] for r in before["records"] if not lo <= r[1] < hi]
    assert not any(lo <= t < hi for e in after["entries"] for t, _ in e[5])
    fresh_store, _, fresh_footage = build(tmp_path, "never-seen", embedder, skip=FORGOTTEN)
    assert_same_memory(after, memory_of(fresh_store, fresh_footage))
    # the indices answer with the units SQLite holds, and nothing of the old entries or forgotten records
    gone = before["ids"] - after["ids"]
    for manager in (indices, IndexManager(store, tmp_path / "forgotten" / "indices")):
        for space in (OBJECT_SPACE, ACTION_SPACE):
            found = {u for u, _ in manager.search(space, embedder.embed_queries(["plate"]), 1000)[0]}
            assert found == after["ids"] and not found & gone
    store.close()
    fresh_store.close()


def test_range_forget_of_a_footage_with_records_needs_the_embedder(tmp_path, lib_paths, embedder):
    store, indices, footage = build(tmp_path, "library", embedder, skip=set())
    with pytest.raises(ValueError, match="needs the embedder"):
        forget(store, indices, lib_paths, footage, to_ts(T0), to_ts(T0 + timedelta(minutes=5)))
    assert len(memory_of(store, footage)["records"]) == len(NARRATIONS)  # the failed forget changed nothing
    store.close()
