"""recording_start: container metadata, then a time in the file name, then the modification time."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from egodesk.core.timeutil import to_ts
from egodesk.core.types import FootageKind
from egodesk.media.probe import MediaInfo, probe
from egodesk.media.starttime import recording_start, start_from_name
from tests.conftest import ffmpeg

pytestmark = pytest.mark.skipif(not hasattr(time, "tzset"), reason="needs time.tzset to pin the time zone")
WRITTEN = datetime(2024, 3, 5, 23, 0)  # when a DAY<N>_ file was last written


@pytest.fixture(autouse=True)
def berlin(monkeypatch):
    """Central European time (a POSIX rule, so no tz database is needed): UTC+1 in February."""
    monkeypatch.setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize(
    "name, expected",
    [
        ("DAY1_11094208_composite.mp4", datetime(2024, 3, 5, 11, 9, 42, 80_000)),
        ("A1_JAKE_DAY3_20371500.mp4", datetime(2024, 3, 5, 20, 37, 15)),
        ("20240202-110250.mp4", datetime(2024, 2, 2, 11, 2, 50)),
        ("20240202_110250.mov", datetime(2024, 2, 2, 11, 2, 50)),
        ("VID_20240202_110250.mp4", datetime(2024, 2, 2, 11, 2, 50)),
        ("PXL_20240202_110250123.mp4", datetime(2024, 2, 2, 11, 2, 50, 123_000)),
        ("holiday VID_20231231_235959 (1).mp4", datetime(2023, 12, 31, 23, 59, 59)),
        ("GX010042.MP4", None),
        ("GOPR0042.MP4", None),
        ("DAY1_25094208.mp4", None),  # no 25 o'clock
        ("20241302_110250.mp4", None),  # no month 13
        ("19990101_120000.mp4", None),  # an unset clock, not a date
        ("PXL_20240202_1102501234.mp4", None),  # too many digits to be a time
        ("walk.mp4", None),
    ],
)
def test_names(name, expected):
    assert start_from_name(name, WRITTEN) == expected


def test_a_day_name_later_than_the_file_was_written_is_the_day_before():
    """Named 20:37 but written at 09:00: recorded yesterday evening, not in this evening's future."""
    assert start_from_name("A1_JAKE_DAY3_20371500.mp4", datetime(2024, 3, 5, 9, 0)) == datetime(2024, 3, 4, 20, 37, 15)


def info_for(path: Path, creation_time: datetime | None = None, duration: float = 10.5) -> MediaInfo:
    return MediaInfo(
        kind=FootageKind.VIDEO,
        path=path,
        duration=duration,
        fps=30.0,
        width=64,
        height=48,
        frame_count=315,
        has_video=True,
        has_audio=False,
        video_codec="h264",
        audio_codec=None,
        creation_time=creation_time,
        size_bytes=1,
    )


def touch(path: Path, local: datetime) -> Path:
    path.write_bytes(b"x")
    stamp = local.timestamp()  # naive = local time
    os.utime(path, (stamp, stamp))
    return path


def test_metadata_is_utc_converted_to_local(tmp_path):
    clip = tmp_path / "VID_20990101_000000.mp4"  # the name would say otherwise: metadata wins
    ffmpeg(
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=64x48:rate=5",
        "-t",
        "1",
        "-pix_fmt",
        "yuv420p",
        "-metadata",
        "creation_time=2024-02-02T11:02:50Z",
        str(clip),
    )
    info = probe(clip)
    assert info.creation_time == datetime(2024, 2, 2, 11, 2, 50, tzinfo=UTC)
    assert recording_start(clip, info) == (to_ts(datetime(2024, 2, 2, 12, 2, 50)), "metadata")


@pytest.mark.badinput
@pytest.mark.parametrize("year", [1904, 1970, 1999, 2091])
def test_unset_clock_metadata_falls_through_to_the_name(tmp_path, year):
    clip = touch(tmp_path / "VID_20240202_110250.mp4", datetime(2024, 2, 10, 8, 0))
    bogus = datetime(year, 1, 1, tzinfo=UTC)
    assert recording_start(clip, info_for(clip, bogus)) == (to_ts(datetime(2024, 2, 2, 11, 2, 50)), "filename")


def test_day_name_takes_its_date_from_mtime(tmp_path):
    clip = touch(tmp_path / "DAY2_09300000.mp4", datetime(2024, 2, 3, 10, 0))
    assert recording_start(clip, info_for(clip)) == (to_ts(datetime(2024, 2, 3, 9, 30)), "filename")


def test_gopro_name_falls_back_to_mtime_less_duration(tmp_path):
    clip = touch(tmp_path / "GX010042.MP4", datetime(2024, 2, 3, 10, 0))
    assert recording_start(clip, info_for(clip, duration=10.5)) == (to_ts(datetime(2024, 2, 3, 9, 59, 49, 500_000)), "mtime")


def test_composite_clip_is_dated_by_its_name(composite_clip):
    """The remux dropped the walk video's creation_time; DAY1_11094208 gives the time of day."""
    info = probe(composite_clip)
    assert info.creation_time is None
    written = datetime.fromtimestamp(composite_clip.stat().st_mtime)
    named = datetime(written.year, written.month, written.day, 11, 9, 42, 80_000)
    expected = to_ts(named if named <= written else named - timedelta(days=1))  # never after the file was written
    assert recording_start(composite_clip, info) == (expected, "filename")
