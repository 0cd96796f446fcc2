"""The library's reads for people (`memory.queries`): footage, its clips, the memories under the
playhead and where evidence sits in its file, over a text track imported into a real store."""

import json

import pytest

from egodesk.core.timeutil import parse_iso
from egodesk.core.types import Evidence
from egodesk.memory import queries
from egodesk.memory.store import Store
from egodesk.pipeline.textimport import import_memory_jsonl

START = parse_iso("2024-03-13T09:00:00")


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "day.jsonl"
    lines = [
        ("2024-03-13T09:00:00", "2024-03-13T09:00:20", "I put the keys in the blue bowl."),
        ("2024-03-13T09:01:00", "2024-03-13T09:01:20", "I water the plants."),
    ]
    path.write_text(
        "".join(json.dumps({"source": "day", "start": a, "end": b, "kind": "narration", "text": t}) + "\n" for a, b, t in lines),
        encoding="utf-8",
    )
    s = Store(tmp_path / "library.sqlite")
    import_memory_jsonl(s, path)
    yield s
    s.close()


def test_footage_clips_and_the_memory_under_the_playhead(store):
    [footage] = queries.footage(store)
    assert footage.start == START and footage.kind == "text" and not footage.missing
    clips = queries.clips(store, footage.id)
    assert [c.idx for c in clips] == [0, 1] and clips[0].start == START
    assert [c.id for c in queries.clips(store, footage.id, clips[1].id)] == [clips[1].id]
    view = queries.memory_at(store, footage.id, clips[1].start - START + 1)
    assert view is not None and view.clip_id == clips[1].id and (view.start, view.end) == (clips[1].start, clips[1].end)
    assert queries.memory_at(store, footage.id, 3600) is None and queries.memory_at(store, footage.id + 1, 0) is None


def test_evidence_is_placed_at_its_offset_into_its_footage(store):
    [footage] = queries.footage(store)
    starts = queries.footage_starts(store)
    assert starts == {footage.id: START}
    ev = Evidence(1, footage.id, "day", START + 61, START + 70, "I water the plants.", 1.0)
    queries.place(store, [ev], starts)
    assert ev.offset == 61 and not ev.keyframe  # text has no keyframes


def test_overall_state_of_a_footage_from_its_stages():
    assert queries.overall_state({}) == "indexed" and queries.overall_state({"asr": "done"}) == "indexed"
    assert queries.overall_state({"asr": "failed", "ocr": "running"}) == "failed"
    assert queries.overall_state({"asr": "running", "ocr": "pending"}) == "indexing"
    assert queries.overall_state({"asr": "cancelled"}) == "cancelled" and queries.overall_state({"asr": "pending"}) == "pending"
