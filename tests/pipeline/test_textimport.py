"""Text tracks: benchmark memory.jsonl, SRT and VTT become text-only footage through the real store."""

import json

import pytest
from sqlalchemy import func, select

from egodesk.core.timeutil import parse_iso
from egodesk.memory.store import Caption, Clip, Footage, Store, TranscriptSegment
from egodesk.pipeline.textimport import TextTrackError, import_memory_jsonl, import_subtitles
from tests.conftest import BENCHMARKS


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "library.sqlite")
    yield s
    s.close()


def count(store, model):
    with store.session() as session:
        return session.scalar(select(func.count()).select_from(model))


def test_locomo_memory_gives_ten_text_footages_with_all_entries(store):
    result = import_memory_jsonl(store, BENCHMARKS / "locomo" / "memory.jsonl")
    assert len(result.footage_ids) == 10 and len(result.new_ids) == 10 and result.entries == 5882
    assert count(store, Footage) == 10 and count(store, Clip) == 5882
    assert count(store, TranscriptSegment) == 5882 and count(store, Caption) == 0
    with store.session() as session:
        first = session.scalar(select(TranscriptSegment).order_by(TranscriptSegment.start_ts))
        assert first.speaker and not first.text.startswith(" ")
    again = import_memory_jsonl(store, BENCHMARKS / "locomo" / "memory.jsonl")
    assert again.new_ids == [] and count(store, Clip) == 5882  # same file twice adds nothing


@pytest.mark.badinput
def test_broken_lines_are_reported_and_the_rest_imports(store, tmp_path):
    path = tmp_path / "memory.jsonl"
    good = {
        "id": "a",
        "source": "day1",
        "start": "2024-02-02T10:00:00",
        "end": "2024-02-02T10:00:05",
        "kind": "caption",
        "text": "I open the door.",
    }
    lines = [
        json.dumps(good),
        "{broken json",
        json.dumps({**good, "start": "yesterday"}),
        json.dumps(
            {
                **good,
                "id": "b",
                "start": "2024-02-02T10:00:05",
                "end": "2024-02-02T10:00:09",
                "kind": "narration",
                "text": "I take keys.",
            }
        ),
        json.dumps({**good, "kind": "smell"}),
    ]
    path.write_text("\n".join(lines) + "\n")
    result = import_memory_jsonl(store, path)
    assert result.entries == 2 and len(result.problems) == 3
    assert any(":2:" in p for p in result.problems) and any(":3:" in p for p in result.problems)
    with store.session() as session:
        footage = session.scalar(select(Footage))
        assert footage.kind == "text" and footage.start_ts == parse_iso("2024-02-02T10:00:00")
        assert [c.kind for c in session.scalars(select(Caption).order_by(Caption.start_ts))] == ["caption", "narration"]


@pytest.mark.badinput
def test_a_file_with_no_valid_entry_is_an_error_and_adds_nothing(store, tmp_path):
    path = tmp_path / "memory.jsonl"
    path.write_text("not json\n\n")
    with pytest.raises(TextTrackError, match="no valid entries"):
        import_memory_jsonl(store, path)
    assert count(store, Footage) == 0


SRT = """1
00:00:01,000 --> 00:00:03,500
Hello there.

2
00:00:04,000 --> 00:00:06,000
Ana: We should <i>leave</i> soon.

broken block without timing
"""

VTT = """WEBVTT

00:01.000 --> 00:03.000
First line.

00:00:04.000 --> 00:00:05.000
Second line.
"""


def test_srt_and_vtt_become_text_footage(store, tmp_path):
    srt = tmp_path / "talk.srt"
    srt.write_text(SRT)
    vtt = tmp_path / "talk.vtt"
    vtt.write_text(VTT)
    start = parse_iso("2024-05-01T09:00:00")
    result = import_subtitles(store, srt, start)
    assert result.entries == 2 and len(result.problems) == 1
    import_subtitles(store, vtt, start)
    with store.session() as session:
        segments = session.scalars(select(TranscriptSegment).order_by(TranscriptSegment.footage_id, TranscriptSegment.idx)).all()
    assert [s.text for s in segments] == ["Hello there.", "Ana: We should leave soon.", "First line.", "Second line."]
    assert segments[1].speaker == "Ana" and segments[0].start_ts == start + 1.0 and segments[1].end_ts == start + 6.0


@pytest.mark.badinput
def test_empty_subtitles_are_an_error(store, tmp_path):
    path = tmp_path / "empty.srt"
    path.write_text("")
    with pytest.raises(TextTrackError, match="no subtitle cues"):
        import_subtitles(store, path, 0.0)
