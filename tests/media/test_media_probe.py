"""probe, find_media and MediaError on real footage and on the odd files people really import."""

from __future__ import annotations

import os
import pickle
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from egodesk.core.types import ClipSpan, FootageKind
from egodesk.media import probe as probe_module
from egodesk.media.audio import extract_audio
from egodesk.media.errors import MediaError
from egodesk.media.frames import read_frame_at, sample_frames
from egodesk.media.hashing import content_hash
from egodesk.media.keyframes import write_thumbnail
from egodesk.media.probe import AUDIO_EXTENSIONS, SUPPORTED_EXTENSIONS, VIDEO_EXTENSIONS, find_media, probe
from tests.conftest import JFK_AUDIO, WALK_VIDEO, ffmpeg


def test_walk_video_facts():
    info = probe(WALK_VIDEO)
    assert info.duration == pytest.approx(10.5, abs=0.1)
    assert (info.width, info.height) == (848, 480)
    assert info.fps == pytest.approx(29.97, abs=0.01)
    assert info.frame_count == 315
    assert info.has_video and info.has_audio
    assert (info.video_codec, info.audio_codec) == ("h264", "aac")
    assert info.creation_time == datetime(2019, 11, 18, 15, 45, 32, tzinfo=UTC)
    assert info.size_bytes == WALK_VIDEO.stat().st_size
    assert info.path == WALK_VIDEO


def test_composite_and_silent_clips(composite_clip, silent_clip):
    composite = probe(composite_clip)
    assert composite.has_audio and composite.audio_codec == "aac"
    assert composite.duration == pytest.approx(10.5, abs=0.2)
    silent = probe(silent_clip)
    assert not silent.has_audio and silent.audio_codec is None
    assert (silent.width, silent.height) == (848, 480)


@pytest.fixture(scope="module")
def odd(tmp_path_factory) -> Path:
    """One clip in each of the other supported containers."""
    folder = tmp_path_factory.mktemp("odd")
    src = ["-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-t", "1"]
    for ext, codec in [("mkv", "libx264"), ("webm", "libvpx-vp9"), ("avi", "mpeg4"), ("mov", "libx264"), ("m4v", "libx264")]:
        ffmpeg(*src, "-c:v", codec, "-pix_fmt", "yuv420p", str(folder / f"clip.{ext}"))
    return folder


@pytest.mark.parametrize("name", ["clip.mkv", "clip.webm", "clip.avi", "clip.mov", "clip.m4v"])
def test_other_containers_probe(odd, name):
    info = probe(odd / name)
    assert (info.width, info.height) == (160, 120)
    assert info.fps == pytest.approx(25.0)
    assert info.duration == pytest.approx(1.0, abs=0.05)
    assert not info.has_audio


def test_mpegts_without_seek_points(long_gop_ts):
    """Decoders cannot seek into it; the end-of-data check must still accept it."""
    info = probe(long_gop_ts)
    assert info.duration == pytest.approx(3.0, abs=0.05) and info.frame_count == 75


@pytest.mark.badinput
def test_huge_resolution(huge_clip):
    info = probe(huge_clip)
    assert (info.width, info.height) == (4096, 2160)
    assert info.duration == pytest.approx(1.0, abs=0.05)


@pytest.mark.badinput
def test_variable_frame_rate(vfr_clip):
    info = probe(vfr_clip)
    assert info.duration == pytest.approx(3.0, abs=0.1)
    # The average rate over the hole, not the nominal 25 fps: 63 frames in 3 s.
    assert info.frame_count == 63
    assert info.fps == pytest.approx(21.0, abs=0.1)


@pytest.fixture(scope="module")
def broken(tmp_path_factory) -> Path:
    """Files that must be refused, each for its own reason."""
    folder = tmp_path_factory.mktemp("broken")
    data = WALK_VIDEO.read_bytes()
    (folder / "empty.mp4").write_bytes(b"")
    (folder / "notes.mp4").write_text("Shopping list: umbrella, milk\n", encoding="utf-8")
    (folder / "noise.bin.mp4").write_bytes(bytes(range(256)) * 64)
    (folder / "cut.mp4").write_bytes(data[: len(data) * 4 // 10])  # the index (moov) is at the end
    # Valid container, garbage where the pictures should be: mdat payload overwritten.
    mdat_end = data.index(b"moov") - 4
    garbage = bytearray(data)
    garbage[64:mdat_end] = (bytes(range(251)) * (mdat_end // 251 + 1))[: mdat_end - 64]
    (folder / "garbage.mp4").write_bytes(bytes(garbage))
    ffmpeg("-i", str(JFK_AUDIO), "-t", "2", "-c:a", "aac", str(folder / "voice.m4a"))
    ffmpeg("-f", "lavfi", "-i", "testsrc=size=64x48", "-frames:v", "1", str(folder / "photo.jpg"))
    ffmpeg("-f", "lavfi", "-i", "testsrc=size=64x48", "-frames:v", "1", str(folder / "photo.bmp"))
    ffmpeg(
        "-f", "lavfi", "-i", "testsrc=size=64x48:rate=25", "-t", "1", "-c:v", "libx264", "-f", "h264", str(folder / "raw.h264")
    )  # a bare stream: no container, no duration
    (folder / "talk.srt").write_text("1\n00:00:01,000 --> 00:00:02,000\nhello\n", encoding="utf-8")
    return folder


@pytest.mark.badinput
@pytest.mark.parametrize(
    "name, reason",
    [
        ("missing.mp4", "file not found"),
        ("empty.mp4", "empty file (0 bytes)"),
        ("notes.mp4", "not a media file (it contains text)"),
        ("noise.bin.mp4", "unknown or unsupported format"),
        ("cut.mp4", "truncated or corrupt: the MP4/MOV index (moov atom) is missing"),
        ("garbage.mp4", "no decodable video frames"),
        ("photo.bmp", "an image egodesk does not read as a photo"),
        ("talk.srt", "not a media file: no audio or video streams"),
        ("raw.h264", "duration unknown"),
        (".", "is a folder, not a file"),
    ],
)
def test_bad_files_are_refused_with_a_reason(broken, name, reason):
    path = broken / name
    with pytest.raises(MediaError) as caught:
        probe(path)
    assert caught.value.reason.startswith(reason)
    assert str(caught.value) == f"{path}: {caught.value.reason}"
    assert caught.value.path == path


@pytest.mark.badinput
def test_index_intact_data_cut(cut_faststart_clip):
    with pytest.raises(MediaError, match="truncated or corrupt: its video data stops before the end"):
        probe(cut_faststart_clip)


def test_sound_recordings_and_photos_are_footage_of_their_kind(broken):
    """Told apart by content: a voice note is sound footage, a JPEG named .mp4 is still a photo."""
    sound = probe(JFK_AUDIO)
    assert sound.kind == FootageKind.AUDIO and sound.has_audio and sound.duration == pytest.approx(11.0, abs=0.1)
    assert (sound.width, sound.height, sound.fps) == (0, 0, 0.0)
    assert probe(broken / "voice.m4a").kind == FootageKind.AUDIO
    shutil.copy(broken / "photo.jpg", broken / "photo.mp4")
    photo = probe(broken / "photo.mp4")
    assert (photo.kind, photo.duration, photo.width, photo.height) == (FootageKind.PHOTO, 0.0, 64, 48)
    assert probe(WALK_VIDEO).kind == FootageKind.VIDEO


@pytest.mark.badinput
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file(tmp_path):
    path = tmp_path / "locked.mp4"
    path.write_bytes(b"\x00" * 16)
    path.chmod(0)
    with pytest.raises(MediaError, match="permission denied"):
        probe(path)


@pytest.mark.badinput
def test_permission_error_is_reported(tmp_path, monkeypatch):
    """The same check where the tests run as root (which reads any file): open() refuses."""
    path = tmp_path / "locked.mp4"
    path.write_bytes(b"\x00" * 16)

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(probe_module, "open", refuse, raising=False)
    with pytest.raises(MediaError, match="permission denied: cannot read the file"):
        probe(path)


def test_missing_ffmpeg_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(MediaError, match="ffprobe is not installed or not on PATH"):
        probe(WALK_VIDEO)


def test_media_error_survives_pickling():
    """Ingest workers send errors across processes."""
    error = pickle.loads(pickle.dumps(MediaError("/x/a.mp4", "no video stream")))
    assert isinstance(error, ValueError)
    assert (error.path, error.reason, str(error)) == (Path("/x/a.mp4"), "no video stream", "/x/a.mp4: no video stream")


@pytest.mark.badinput
def test_awkward_names(small_av_clip, tmp_path):
    """Unicode, spaces, a leading dash, a colon and a name near the 255-byte limit, through every step."""
    folder = tmp_path / "Reise nach Kyōto 旅行"
    folder.mkdir()
    long_stem = "-Sommer: Spaziergang am Fluss – 夏の散歩 " + "x" * 150
    names = [" Café walk 🎥.mp4", "-starts with dash.mp4", "clip 11:02.mp4", long_stem + ".mp4"]
    assert len(names[-1].encode()) <= 255
    for name in names:
        shutil.copyfile(small_av_clip, folder / name)
        info = probe(folder / name)
        assert info.has_audio and (info.width, info.height) == (160, 120)
    path = folder / names[-1]
    [sample] = sample_frames(path, [ClipSpan(0, 0.0, 1.0)], 1)
    assert read_frame_at(path, sample.offset).shape == (120, 160, 3)
    assert content_hash(path) == content_hash(small_av_clip)
    assert extract_audio(path, folder / (long_stem + ".wav"))
    assert write_thumbnail(sample.frame, folder / (long_stem + ".jpg")).stat().st_size > 0


def test_find_media(tmp_path):
    (tmp_path / "b" / "deep").mkdir(parents=True)
    (tmp_path / ".hidden").mkdir()
    names = ["b/deep/z.MP4", "b/a.mkv", "a.mov", "notes.txt", ".secret.mp4", ".hidden/x.mp4", "b/clip.MTS"]
    names += ["b/IMG_1.HEIC", "b/photo.jpg", "voice.m4a", "b/deep/z.LRV", "b/deep/z.THM", "b/deep/z.srt"]
    for name in names:
        (tmp_path / name).write_bytes(b"x")
    explicit = tmp_path / "notes.txt"
    found = find_media([tmp_path, explicit, tmp_path / "a.mov", tmp_path / "gone.mp4"])
    assert found == [
        tmp_path / "a.mov",
        tmp_path / "b" / "IMG_1.HEIC",
        tmp_path / "b" / "a.mkv",
        tmp_path / "b" / "clip.MTS",
        tmp_path / "b" / "deep" / "z.MP4",
        tmp_path / "b" / "photo.jpg",
        tmp_path / "voice.m4a",
        explicit,
        tmp_path / "gone.mp4",
    ]  # a camera's sidecars (.LRV, .THM, telemetry .srt) are not footage
    assert {".mp4", ".mov", ".mkv", ".avi", ".m4v", ".webm", ".mts"} == VIDEO_EXTENSIONS
    assert {".m4a", ".mp3", ".wav", ".opus"} <= AUDIO_EXTENSIONS and {".jpg", ".heic"} <= SUPPORTED_EXTENSIONS
