"""Kept moments on a real library: the composite clip (walk video + JFK's speech) imported through the real
stages, then starred, noted (searchable, found by retrieval as evidence of its moment) and exported with
real ffmpeg (stream copy on a keyframe, re-encoded elsewhere, the transcript as subtitles)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from egodesk.media.errors import MediaError
from egodesk.memory.keep import KeepError
from egodesk.memory.migrations import MIGRATIONS, migrate
from egodesk.memory.schema import Footage, Unit
from egodesk.pipeline.library import Library
from egodesk.retrieval.base import Query
from egodesk.retrieval.registry import make_strategy


def _streams(path) -> dict[str, dict]:
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "stream=codec_type,codec_name,duration", "-of", "json", str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {s["codec_type"]: s for s in json.loads(out)["streams"]}


def _subtitles(path) -> str:
    return subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(path), "-map", "0:s:0", "-f", "srt", "-"], capture_output=True, text=True, check=True
    ).stdout


def test_a_star_is_kept_once_listed_and_removed(composite_library):
    library, footage = composite_library
    first = library.star(footage.id, footage.start + 1, footage.start + 4)
    assert library.star(footage.id, footage.start + 1, footage.start + 4) == first  # starred again: the same star
    [kept] = library.kept(("star",))
    assert (kept.id, kept.footage_id, kept.offset, kept.end - kept.start) == (first, footage.id, 1.0, 3.0)
    library.unstar(first)
    assert library.kept(("star",)) == []


@pytest.mark.parametrize(
    ("start", "end", "reason"),
    [(-1, 3, "not within"), (5, 30, "not within"), (4, 2, "must end after"), (3, 3, "must end after")],
)
def test_a_moment_outside_its_footage_is_refused_and_nothing_changes(composite_library, start, end, reason):
    library, footage = composite_library
    before = library.kept()
    with pytest.raises(KeepError, match=reason):
        library.star(footage.id, footage.start + start, footage.start + end)
    with pytest.raises(KeepError, match=reason):
        library.add_note(footage.id, footage.start + start, footage.start + end, "a note")
    assert library.kept() == before


def test_a_note_is_searchable_and_evidence_of_its_moment(composite_library):
    library, footage = composite_library
    note = library.add_note(footage.id, footage.start + 2, footage.start + 5, "  The blue umbrella is behind the bench ")
    try:
        [hit] = library.search("umbrella").hits
        assert (hit.kind, hit.text, hit.offset) == ("note", "The blue umbrella is behind the bench", 2.0)
        found = make_strategy("auto", library.memory).retrieve(Query("where did I leave the blue umbrella?", k=5))
        assert found[0].kind == "note" and "blue umbrella" in found[0].text and found[0].footage_id == footage.id

        library.edit_note(note, "the red kite is in the car")
        assert library.search("umbrella").hits == []
        assert [h.kind for h in library.search("kite").hits] == ["note"]
        with library.store.session() as s:
            units = s.scalars(text("SELECT text FROM unit WHERE kind = 'note'")).all()
        assert units == ["My note: the red kite is in the car"]  # the old note's unit went with its text
    finally:
        library.delete_note(note)
    assert library.search("kite").hits == [] and library.kept(("note",)) == []
    with library.store.session() as s:
        assert s.query(Unit).filter(Unit.kind == "note").count() == 0


@pytest.mark.parametrize("text_", ["", "   \n\t"])
def test_an_empty_note_is_refused(composite_library, text_):
    library, footage = composite_library
    with pytest.raises(KeepError, match="needs some text"):
        library.add_note(footage.id, footage.start, footage.start + 1, text_)
    assert library.kept(("note",)) == []


def test_unknown_ids_are_refused(composite_library):
    library, _ = composite_library
    for call in (lambda: library.unstar(999), lambda: library.edit_note(999, "x"), lambda: library.delete_note(999)):
        with pytest.raises(KeepError, match="there is no"):
            call()
    with pytest.raises(KeepError, match="no footage 999"):
        library.star(999, 0, 1)


def test_export_on_a_keyframe_is_a_stream_copy_with_the_speech_as_subtitles(composite_library, tmp_path):
    library, footage = composite_library
    out = tmp_path / "moment.mp4"
    report = library.export(footage.id, footage.start + 1.001, footage.start + 6, out)  # 1.001 s: a keyframe
    assert report.copied and report.subtitles >= 1 and out.is_file()
    streams = _streams(out)
    assert streams["subtitle"]["codec_name"] == "mov_text" and streams["video"]["codec_name"] == "h264"
    assert abs(float(streams["video"]["duration"]) - 5.0) < 0.2
    subtitles = _subtitles(out)
    assert subtitles.startswith("1\n00:00:00,000 --> ") and "country" in subtitles.lower()  # relative to the cut
    assert [p.name for p in tmp_path.iterdir()] == ["moment.mp4"]  # nothing left beside it


def test_export_off_a_keyframe_is_re_encoded_to_start_where_asked(composite_library, tmp_path):
    library, footage = composite_library
    report = library.export(footage.id, footage.start + 1.5, footage.start + 4, tmp_path / "cut.mp4")
    assert not report.copied and "keyframe" in report.why
    assert abs(float(_streams(report.path)["video"]["duration"]) - 2.5) < 0.1


def test_bad_exports_say_why_and_write_nothing(composite_library, tmp_path):
    library, footage = composite_library
    existing = tmp_path / "kept.mp4"
    existing.write_bytes(b"mine")
    with pytest.raises(MediaError, match="exists already"):
        library.export(footage.id, footage.start, footage.start + 2, existing)
    assert existing.read_bytes() == b"mine"
    with pytest.raises(MediaError, match="does not exist"):
        library.export(footage.id, footage.start, footage.start + 2, tmp_path / "no" / "such.mp4")
    with pytest.raises(MediaError, match=r"\.mp4"):
        library.export(footage.id, footage.start, footage.start + 2, tmp_path / "moment.mkv")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    # root may write anywhere the permissions forbid; no one may write in /sys
    unwritable = locked if os.geteuid() else Path("/sys")
    with pytest.raises(MediaError, match="not writable|cannot be written"):
        library.export(footage.id, footage.start, footage.start + 2, unwritable / "moment.mp4")
    with pytest.raises(KeepError, match="not within"):
        library.export(footage.id, footage.start + 5, footage.start + 60, tmp_path / "long.mp4")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.mp4", "locked"]


def test_export_of_a_missing_video_file_names_it(tmp_path, composite_clip):
    moved = tmp_path / composite_clip.name
    moved.write_bytes(composite_clip.read_bytes())
    library = Library(tmp_path / "lib")
    try:
        [footage_id] = library.add([moved]).added
        moved.unlink()
        [footage] = library.footage()
        with pytest.raises(MediaError, match="video file is missing") as caught:
            library.export(footage_id, footage.start, footage.start + 2, tmp_path / "out.mp4")
        assert str(moved) in str(caught.value)
    finally:
        library.close()
    assert not (tmp_path / "out.mp4").exists()


def test_forgetting_a_footage_forgets_its_stars_and_notes(tmp_path, composite_clip):
    library = Library(tmp_path / "lib")
    try:
        [footage_id] = library.add([composite_clip]).added
        [footage] = library.footage()
        library.star(footage_id, footage.start, footage.start + 2)
        library.add_note(footage_id, footage.start, footage.start + 2, "umbrella")  # not indexed yet: no units to build
        assert len(library.kept()) == 2 and library.search("umbrella").hits
        library.forget(footage_id)
        assert library.kept() == [] and library.search("umbrella").hits == []
    finally:
        library.close()


def test_migration_4_adds_the_tables_to_a_library_of_version_3_and_indexes_its_notes(tmp_path):
    engine = create_engine(f"sqlite:///{tmp_path / 'old.db'}")
    with engine.begin() as conn:
        for number, step in enumerate(MIGRATIONS[:3], start=1):
            step(conn)
            conn.execute(text(f"PRAGMA user_version={number}"))
    with engine.begin() as conn:  # a version 1 library already had the tables; drop them to be one made before
        conn.execute(text("DROP TABLE note"))
        conn.execute(text("DROP TABLE star"))
    with Session(engine) as s, s.begin():
        s.add(Footage(id=1, content_hash="h", path="/x.mp4", title="x", duration=60.0))
    assert migrate(engine) == len(MIGRATIONS)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO note (footage_id, start_ts, end_ts, text, created_at, updated_at) "
                "VALUES (1, 5, 9, 'parcel by the door', 0, 0)"
            )
        )
        assert conn.execute(text("SELECT kind, text FROM text_search WHERE text_search MATCH 'parcel'")).all() == [
            ("note", "parcel by the door")
        ]
        assert conn.execute(text("SELECT count(*) FROM footage")).scalar_one() == 1
    engine.dispose()
