"""Photos and voice notes through the real import and indexing path, beside a video: a photo becomes a
moment at the time it was taken, with its tags and on-screen text and no speech; a voice note becomes
footage with speech only; all three are on one timeline and found by search."""

from __future__ import annotations

import cv2
import pytest
from PIL import ExifTags, Image

from egodesk.core.timeutil import parse_iso
from egodesk.pipeline.library import Library
from tests.conftest import JFK_AUDIO, WALK_VIDEO, ffmpeg


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    d = tmp_path_factory.mktemp("phone")
    png = tmp_path_factory.mktemp("work") / "frame.png"
    ffmpeg("-ss", "3", "-i", str(WALK_VIDEO), "-frames:v", "1", "-vf", "scale=640:360", str(png))
    picture = cv2.imread(str(png))
    cv2.rectangle(picture, (120, 120), (520, 240), (255, 255, 255), -1)
    cv2.putText(picture, "BAKERY", (150, 205), cv2.FONT_HERSHEY_SIMPLEX, 2.2, (0, 0, 0), 5)  # a shop sign
    photo = d / "IMG_0042.jpg"
    tags = Image.Exif()
    tags.get_ifd(ExifTags.IFD.Exif)[ExifTags.Base.DateTimeOriginal] = "2024:03:13 10:15:00"
    Image.fromarray(cv2.cvtColor(picture, cv2.COLOR_BGR2RGB)).save(photo, exif=tags)
    note = d / "Voice 001.m4a"
    ffmpeg("-i", str(JFK_AUDIO), "-t", "4", "-c:a", "aac", "-metadata", "creation_time=2024-03-13T10:20:00Z", str(note))
    video = d / "walk.mp4"
    ffmpeg("-i", str(WALK_VIDEO), "-t", "2", "-an", "-vf", "scale=320:180", "-c:v", "libx264", "-preset", "ultrafast", str(video))
    library = Library(tmp_path_factory.mktemp("lib"))
    library.save_settings(library.settings.model_copy(update={"asr_model": "asr-lite", "threads": 1}))
    report = library.add([d])  # a folder: its photo and voice note come with the video
    assert report.errors == [] and len(report.added) == 3
    outcome = library.process()
    yield library, {f.kind: f for f in library.footage()}, outcome
    library.close()


def test_all_three_are_indexed_on_one_timeline(imported):
    library, by_kind, outcome = imported
    assert outcome["failed"] == 0, library.job_rows()
    assert set(by_kind) == {"video", "photo", "audio"}
    assert all(f.state == "indexed" and f.searchable for f in by_kind.values())


def test_a_photo_is_a_moment_with_its_tags_and_text(imported):
    library, by_kind, _ = imported
    photo = by_kind["photo"]
    assert (photo.start, photo.start_source, photo.duration) == (parse_iso("2024-03-13T10:15:00"), "metadata", 1.0)
    assert set(photo.stages) == {"probe", "keyframes", "faces", "ocr", "captions", "memory-parent", "memory-visual"} | {
        "memory-records",
        "memory-atomic",
    }  # no sound stages
    [clip] = library.clips(photo.id)
    assert clip.tags and clip.thumbnails and clip.transcript == []
    assert "BAKERY" in clip.ocr.upper() and "BAKERY" in clip.caption.upper()
    assert photo.thumbnail is not None and photo.thumbnail.exists()


def test_a_voice_note_is_speech_only(imported):
    library, by_kind, _ = imported
    note = by_kind["audio"]
    assert note.start == parse_iso("2024-03-13T10:20:00+00:00") and note.duration == pytest.approx(4.0, abs=0.1)
    assert not {"keyframes", "faces", "ocr", "memory-visual"} & set(note.stages)
    [clip] = library.clips(note.id)
    assert clip.tags == [] and clip.thumbnails == []
    heard = " ".join(text for *_, text in clip.transcript).lower()
    assert "fellow americans" in heard
    assert clip.caption.startswith("I hear") and "in view" not in clip.caption


def test_search_finds_what_was_said_and_what_was_written(imported):
    library, by_kind, _ = imported
    said = library.search("americans")
    assert by_kind["audio"].id in {hit.footage_id for hit in said.hits}
    written = library.search("bakery")
    assert by_kind["photo"].id in {hit.footage_id for hit in written.hits}
