"""Ingest end to end on real media with the default models: the composite clip (walk video + JFK)."""

import shutil

import pytest

from egodesk.pipeline.library import Library
from tests.conftest import WALK_VIDEO

PHRASE = "ask not what your country can do for you"


@pytest.fixture(scope="module")
def ingested(tmp_path_factory, composite_clip):
    library = Library(tmp_path_factory.mktemp("lib"))
    report = library.add([composite_clip])
    assert report.errors == [] and len(report.added) == 1
    events = []
    outcome = library.process(progress=events.append)
    yield library, report.added[0], events, outcome
    library.close()


def test_composite_clip_is_fully_indexed(ingested):
    library, footage_id, events, outcome = ingested
    assert outcome["failed"] == 0, library.job_rows()
    [footage] = library.footage()
    assert footage.state == "indexed" and footage.has_audio and footage.start_source == "filename"
    assert 10 < footage.duration < 11.5
    [clip] = library.clips(footage_id)
    assert clip.thumbnails and all(p.exists() for p in clip.thumbnails)
    assert clip.tags and all(0 < score <= 1 for _, score in clip.tags)
    assert clip.caption
    text = " ".join(t for _, _, _, t in clip.transcript).lower()
    assert PHRASE in text.replace(",", "")


def test_word_timestamps_are_absolute_and_accurate(ingested):
    library, footage_id, _, _ = ingested
    with library.store.session() as session:
        from sqlalchemy import select

        from egodesk.memory.store import Footage, TranscriptSegment

        start = session.get(Footage, footage_id).start_ts
        words = [w for s in session.scalars(select(TranscriptSegment)) for w in s.words]
    americans = [w for w in words if "americans" in w[0].lower()]
    assert americans, words
    assert abs((americans[0][1] - start) - 1.8) <= 0.5


def test_progress_events_cover_every_stage(ingested):
    _, footage_id, events, _ = ingested
    stages = {e.stage for e in events if e.footage_id == footage_id}
    assert {"audio", "asr", "keyframes", "ocr", "captions", "memory-parent"} <= stages


def test_importing_the_same_file_again_adds_nothing(ingested, composite_clip, tmp_path):
    library, footage_id, _, _ = ingested
    copy = tmp_path / "renamed copy.mp4"
    shutil.copyfile(composite_clip, copy)
    report = library.add([copy])
    assert report.added == [] and report.existing == [footage_id]


def test_bad_files_get_clear_errors_and_leave_the_library_intact(ingested, tmp_path, silent_clip):
    library, footage_id, _, _ = ingested
    before = library.footage()
    zero = tmp_path / "zero.mp4"
    zero.write_bytes(b"")
    text = tmp_path / "notes.mp4"
    text.write_text("this is not a video\n" * 50)
    truncated = tmp_path / "truncated.mp4"
    truncated.write_bytes(WALK_VIDEO.read_bytes()[: WALK_VIDEO.stat().st_size * 2 // 5])
    missing = tmp_path / "missing.mp4"
    report = library.add([zero, text, truncated, missing])
    reasons = dict(report.errors)
    assert set(reasons) == {str(zero), str(text), str(truncated), str(missing)}
    assert all(reason and "Traceback" not in reason for reason in reasons.values())
    assert "empty" in reasons[str(zero)].lower() or "zero" in reasons[str(zero)].lower()
    assert [f.id for f in library.footage()] == [f.id for f in before]
    assert library.clips(footage_id)  # nothing stored was lost

    report = library.add([silent_clip])
    assert report.errors == [] and len(report.added) == 1
    library.process()
    silent = next(f for f in library.footage() if f.id == report.added[0])
    assert silent.state == "indexed" and not silent.has_audio
    assert all(c.transcript == [] for c in library.clips(silent.id))


@pytest.mark.slow
def test_llm_memory_stages_run_after_ingest(tmp_path, composite_clip, monkeypatch):
    """With records and atomic statements switched on (the app's default), ingest ends with them."""
    monkeypatch.setenv("EGODESK_MEMORY_RECORDS", "true")
    monkeypatch.setenv("EGODESK_MEMORY_ATOMIC", "true")
    library = Library(tmp_path / "lib")
    library.add([composite_clip])
    assert library.process()["failed"] == 0, library.job_rows()
    states = {r["stage"]: r["state"] for r in library.job_rows()}
    assert states["memory-records"] == "done" and states["memory-atomic"] == "done"
    kinds = {row["kind"] for row in library.memory_stats()}
    assert {"caption", "subchunk", "transcript"} <= kinds
    library.close()
