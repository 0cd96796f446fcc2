"""Photos on real pictures (a frame of the walk saved as JPEG, PNG and HEIC): what `photo_facts` says,
when it was taken, upright pixels for the tagger and OCR, and a clear refusal of a cut-short JPEG."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from PIL import ExifTags, Image

from egodesk.core.timeutil import to_ts
from egodesk.media.errors import MediaError
from egodesk.media.photo import photo_facts, read_photo
from egodesk.media.probe import probe
from egodesk.media.starttime import recording_start
from tests.conftest import JFK_AUDIO, WALK_VIDEO, ffmpeg


def exif(original: str | None = None, offset: str | None = None, orientation: int | None = None) -> Image.Exif:
    tags = Image.Exif()
    if original is not None:
        tags.get_ifd(ExifTags.IFD.Exif)[ExifTags.Base.DateTimeOriginal] = original
    if offset is not None:
        tags.get_ifd(ExifTags.IFD.Exif)[ExifTags.Base.OffsetTimeOriginal] = offset
    if orientation is not None:
        tags[ExifTags.Base.Orientation] = orientation
    return tags


@pytest.fixture(scope="module")
def frame(tmp_path_factory) -> Image.Image:
    """A 320x180 frame of the walk video."""
    png = tmp_path_factory.mktemp("frame") / "frame.png"
    ffmpeg("-ss", "3", "-i", str(WALK_VIDEO), "-frames:v", "1", "-vf", "scale=320:180", str(png))
    return Image.open(png).convert("RGB")


def test_a_jpeg_says_when_it_was_taken(tmp_path, frame):
    path = tmp_path / "IMG_0001.jpg"
    frame.save(path, exif=exif("2024:03:13 10:15:00"))
    facts = photo_facts(path)
    assert (facts.format, facts.width, facts.height) == ("JPEG", 320, 180)
    assert facts.taken.replace(tzinfo=None) == datetime(2024, 3, 13, 10, 15)  # a wall-clock time, as the camera said
    info = probe(path)
    assert recording_start(path, info) == (to_ts(datetime(2024, 3, 13, 10, 15)), "metadata")


def test_a_photo_taken_in_another_zone_is_placed_at_that_moment(tmp_path, frame):
    path = tmp_path / "abroad.jpg"
    frame.save(path, exif=exif("2024:03:13 10:15:00", "+09:00"))
    taken = photo_facts(path).taken
    assert taken == datetime(2024, 3, 13, 10, 15, tzinfo=timezone(timedelta(hours=9)))


def test_without_exif_the_file_time_is_the_moment(tmp_path, frame):
    path = tmp_path / "screenshot.png"
    frame.save(path)
    assert photo_facts(path).taken is None and photo_facts(path).format == "PNG"
    assert recording_start(path, probe(path))[1] == "mtime"
    named = tmp_path / "IMG_20240202_110250.jpg"
    frame.save(named, exif=exif("0000:00:00 00:00:00"))  # an unset clock says nothing
    assert recording_start(named, probe(named)) == (to_ts(datetime(2024, 2, 2, 11, 2, 50)), "filename")


def test_heic_is_read(tmp_path, frame):
    path = tmp_path / "IMG_0002.HEIC"
    frame.save(path, exif=exif("2024:03:13 10:16:00"))
    facts = photo_facts(path)
    assert (facts.format, facts.width, facts.height) == ("HEIF", 320, 180)
    assert facts.taken.replace(tzinfo=None) == datetime(2024, 3, 13, 10, 16)
    pixels = read_photo(path)
    assert pixels.shape == (180, 320, 3) and pixels.dtype == np.uint8


def test_pixels_are_upright_bgr_and_at_most_4k(tmp_path, frame):
    turned = tmp_path / "portrait.jpg"
    frame.save(turned, exif=exif(orientation=6))  # stored on its side: shown turned a quarter
    assert (photo_facts(turned).width, photo_facts(turned).height) == (180, 320)
    assert read_photo(turned).shape == (320, 180, 3)
    red = tmp_path / "red.png"
    Image.new("RGB", (5000, 100), (255, 0, 0)).save(red)
    pixels = read_photo(red)
    assert pixels.shape[1] == 3840 and tuple(pixels[50, 50]) == (0, 0, 255)  # BGR, as OpenCV frames are


def test_a_cut_short_jpeg_is_refused_with_its_reason(tmp_path, frame):
    whole = tmp_path / "whole.jpg"
    frame.save(whole)
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    with pytest.raises(MediaError) as caught:
        probe(cut)
    assert caught.value.reason.startswith("unreadable photo: truncated or corrupt")


def test_videos_sound_and_other_pictures_are_not_photos(tmp_path, frame):
    gif = tmp_path / "anim.gif"  # an image Pillow knows, but no camera's photo: ffprobe decides what it is
    frame.save(gif)
    assert photo_facts(WALK_VIDEO) is None and photo_facts(JFK_AUDIO) is None and photo_facts(gif) is None
