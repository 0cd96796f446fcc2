"""Bad and odd media through the real import path (`Library.add`, `Library.process`, `egodesk import`):
each refused file gets its own clear reason and changes nothing; each odd but usable file is indexed
without disturbing what the library already held. Clips are made from ../shared/media, 1-3 s each."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from benchmarks.clips import FAST, H264
from egodesk.memory.store import Footage
from egodesk.pipeline.library import Library
from tests.badinput.support import assert_nothing_lost, egodesk, snapshot
from tests.conftest import JFK_AUDIO, WALK_VIDEO, ffmpeg, speaking_walk

pytestmark = pytest.mark.badinput

SMALL = ["-vf", "scale=320:180", *H264, *FAST]
PATH_MAX = 4096


@pytest.fixture(scope="module")
def media(tmp_path_factory) -> dict[str, Path]:
    """The usable odd files and the broken ones, by case name."""
    d = tmp_path_factory.mktemp("media")
    talk = d / "talk.mp4"  # 2 s of the walk with the JFK speech
    speaking_walk(talk, "-t", "2", *SMALL, "-c:a", "aac", "-movflags", "+faststart")
    out = {"talk": talk}
    out["video-only"] = d / "no sound.mp4"
    ffmpeg("-i", str(WALK_VIDEO), "-t", "2", "-an", *SMALL, str(out["video-only"]))
    out["8k"] = d / "eight_k.mp4"  # 7680x4320, two frames: decoding 8K is what is tested, not encoding it
    ffmpeg("-i", str(WALK_VIDEO), "-t", "1", "-an", "-vf", "scale=7680:4320,fps=2", *H264, *FAST, str(out["8k"]))
    out["vfr"] = d / "vfr.mp4"  # 30 fps with a half-second hole after the first second
    hole = "scale=320:180,setpts='N/(30*TB)+if(gte(N,30),0.5/TB,0)'"
    ffmpeg("-i", str(WALK_VIDEO), "-t", "3", "-an", "-vf", hole, "-fps_mode", "vfr", *H264, *FAST, str(out["vfr"]))
    out["voice note (m4a)"] = d / "Sprachnotiz 01.m4a"  # sound only: footage with speech and no pictures
    ffmpeg("-i", str(JFK_AUDIO), "-t", "1", "-c:a", "aac", str(out["voice note (m4a)"]))
    out["photo named .png"] = d / "IMG_0001.png"  # a JPEG, whatever its name says
    ffmpeg(
        "-ss", "1", "-i", str(WALK_VIDEO), "-frames:v", "1", "-vf", "scale=320:180", "-f", "mjpeg", str(out["photo named .png"])
    )
    data = talk.read_bytes()
    silent = out["video-only"].read_bytes()  # speech recognition is the slow stage: only two files have sound
    # Misnamed but real videos: the importer goes by content. A trailing byte makes each copy distinct.
    out["mp4 named .txt"] = d / "holiday.txt"
    out["mp4 named .txt"].write_bytes(silent + b"\x01")
    out["mp4 named .mov"] = d / "holiday.mov"
    out["mp4 named .mov"].write_bytes(silent + b"\x02")
    damaged = bytearray(silent)  # the middle third overwritten: the start decodes, the rest is noise
    third = len(silent) // 3
    damaged[third : 2 * third] = random.Random(7).randbytes(third)
    out["damaged middle"] = d / "damaged.mp4"
    out["damaged middle"].write_bytes(bytes(damaged))
    out["unicode name"] = d / " Café walk 🎥 夏の散歩 -x: 11:02.mp4"
    out["unicode name"].write_bytes(data + b"\x03")
    deep = d / "Reise nach Kyōto 旅行"
    while len(str(deep).encode()) < PATH_MAX - 600:
        deep /= ("Ordner mit Leerzeichen ü 旅行 " + "y" * 200)[:200]
    deep.mkdir(parents=True)
    stem = "Sommer Spaziergang 夏の散歩 "
    name = stem + "x" * (255 - len(stem.encode()) - len(".mp4")) + ".mp4"
    out["very long path"] = deep / name
    out["very long path"].write_bytes(data + b"\x04")
    assert len(name.encode()) == 255 and PATH_MAX - 600 <= len(str(out["very long path"]).encode()) < PATH_MAX
    return out


@pytest.fixture(scope="module")
def broken(tmp_path_factory, media) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("broken files")
    data = WALK_VIDEO.read_bytes()
    out = {
        "zero-length": d / "empty.mp4",
        "text named .mp4": d / "notes.mp4",
        "subtitles named .mp4": d / "talk.mp4",
        "noise": d / "noise.mp4",
        "truncated (index lost)": d / "cut.mp4",
        "garbage pictures": d / "garbage.mp4",
        "mp4 named .srt": d / "video.srt",
        "mp4 named .jsonl": d / "video.jsonl",
        "zero-byte voice note": d / "Voice 002.m4a",
        "unreadable photo": d / "IMG_0002.jpg",
        "missing": d / "gone.mp4",
        "unicode name, empty": d / "leer 空 ü.mp4",
    }
    out["zero-length"].write_bytes(b"")
    out["unicode name, empty"].write_bytes(b"")
    out["text named .mp4"].write_text("Shopping list: umbrella, milk\n", encoding="utf-8")
    out["subtitles named .mp4"].write_text("1\n00:00:01,000 --> 00:00:02,000\nhello\n", encoding="utf-8")
    out["noise"].write_bytes(random.Random(1).randbytes(50_000))
    out["truncated (index lost)"].write_bytes(data[: len(data) * 4 // 10])  # the walk's moov is at its end
    mdat_end = data.index(b"moov") - 4
    garbage = bytearray(data)
    garbage[64:mdat_end] = random.Random(2).randbytes(mdat_end - 64)
    out["garbage pictures"].write_bytes(bytes(garbage))
    out["mp4 named .srt"].write_bytes(media["talk"].read_bytes())
    out["mp4 named .jsonl"].write_bytes(media["talk"].read_bytes())
    out["zero-byte voice note"].write_bytes(b"")  # the recorder app crashed before writing anything
    photo = media["photo named .png"].read_bytes()
    out["unreadable photo"].write_bytes(photo[: len(photo) // 2])  # a copy cut off half-way
    fast = d / "fast.mp4"  # the walk with its index up front, cut short: the index claims 10.5 s
    ffmpeg("-i", str(WALK_VIDEO), "-map", "0:v:0", "-c", "copy", "-movflags", "+faststart", str(fast))
    out["truncated (data cut)"] = d / "cutfast.mp4"
    out["truncated (data cut)"].write_bytes(fast.read_bytes()[: fast.stat().st_size * 4 // 10])
    fast.unlink()
    return out


REASONS = {
    "zero-length": "empty file (0 bytes)",
    "unicode name, empty": "empty file (0 bytes)",
    "text named .mp4": "not a media file (it contains text)",
    "subtitles named .mp4": "not a media file: no audio or video streams (format: SubRip subtitle; a subtitle file? "
    "give it an .srt or .vtt name to import it as a transcript)",
    "noise": "unknown or unsupported format",
    "truncated (index lost)": "truncated or corrupt: the MP4/MOV index (moov atom) is missing",
    "truncated (data cut)": "truncated or corrupt: its video data stops before the end",
    "garbage pictures": "no decodable video frames",
    "mp4 named .srt": "not a text file (it contains binary data",
    "mp4 named .jsonl": "not a text file (it contains binary data",
    "zero-byte voice note": "empty file (0 bytes)",
    "unreadable photo": "unreadable photo: truncated or corrupt",
    "missing": "no such file or folder",
}


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Library:
    """A library (in a folder with spaces and non-ASCII letters) already holding a footage."""
    root = tmp_path_factory.mktemp("libraries") / "Bibliothek mit Ümläut 图书馆"
    lib = Library(root)
    # The fast speech model, on one thread (two threads on a busy two-core machine wait on each other).
    lib.save_settings(lib.settings.model_copy(update={"asr_model": "asr-lite", "threads": 1}))
    memory = root.parent / "day.jsonl"
    memory.write_text(
        "\n".join(
            json.dumps(
                {
                    "source": "day",
                    "start": f"2024-03-13T09:0{i}:00",
                    "end": f"2024-03-13T09:0{i}:05",
                    "kind": "narration",
                    "text": text,
                }
            )
            for i, text in enumerate(["I open the door.", "I take the keys.", "I water the plants."])
        )
        + "\n"
    )
    assert lib.add([memory]).added == [1]
    assert lib.process()["failed"] == 0
    yield lib
    lib.close()


@pytest.mark.parametrize("case", sorted(REASONS))
def test_a_bad_file_gets_its_reason_and_changes_nothing(library, broken, case):
    before = snapshot(library.store)
    report = library.add([broken[case]])
    assert report.added == [] and report.existing == []
    [(path, reason)] = report.errors
    assert path == str(broken[case])  # the message names the file ...
    assert reason.startswith(REASONS[case]), reason  # ... and says why, in words
    assert "Traceback" not in reason and str(broken[case]) not in reason  # the path is said once
    assert snapshot(library.store) == before  # nothing added, nothing lost


USABLE = ["video-only", "8k", "vfr", "mp4 named .txt", "mp4 named .mov", "damaged middle", "unicode name", "very long path"]
USABLE += ["voice note (m4a)", "photo named .png"]


@pytest.fixture(scope="module")
def indexed(library, media):
    """The odd but usable files, imported together next to the footage already there and indexed."""
    before = snapshot(library.store)
    report = library.add([media[case] for case in USABLE])
    outcome = library.process()
    by_path = {f.path: f for f in library.footage()}
    return report, outcome, {case: by_path[str(media[case].resolve())] for case in USABLE}, before


def test_odd_but_usable_files_are_imported_and_indexed(library, indexed):
    report, outcome, footage, before = indexed
    assert report.errors == [] and len(report.added) == len(USABLE)
    assert outcome["failed"] == 0, library.job_rows()
    assert {case: f.state for case, f in footage.items()} == dict.fromkeys(USABLE, "indexed")
    assert_nothing_lost(before, snapshot(library.store))  # the footage imported earlier is all there
    assert library.footage()[0].title == "day" and len(library.clips(1)) == 3


def test_huge_resolution_is_read_at_full_size(library, indexed):
    footage = indexed[2]["8k"]
    with library.store.session() as session:
        assert (session.get(Footage, footage.id).width, session.get(Footage, footage.id).height) == (7680, 4320)
    assert footage.thumbnail and footage.thumbnail.exists()
    [clip] = library.clips(footage.id)
    assert clip.thumbnails and clip.caption


def test_variable_frame_rate_keeps_real_times(library, indexed):
    footage = indexed[2]["vfr"]
    assert footage.duration == pytest.approx(3.0, abs=0.1)
    [clip] = library.clips(footage.id)
    assert clip.thumbnails and 0 <= clip.offset and clip.end - clip.start == pytest.approx(footage.duration, abs=0.1)


def test_video_without_sound_is_indexed_without_a_transcript(library, indexed):
    footage = indexed[2]["video-only"]
    assert not footage.has_audio and footage.stages["asr"] == "done"
    assert all(c.transcript == [] and c.caption for c in library.clips(footage.id))


def test_a_voice_note_and_a_misnamed_photo_are_recognised_by_their_content(library, indexed):
    note, photo = indexed[2]["voice note (m4a)"], indexed[2]["photo named .png"]
    assert (note.kind, photo.kind) == ("audio", "photo")
    assert "and so" in " ".join(t[3] for t in library.clips(note.id)[0].transcript).lower()  # its one second, heard
    assert library.clips(photo.id)[0].thumbnails and library.clips(photo.id)[0].transcript == []


def test_misnamed_videos_are_recognised_by_their_content(library, indexed):
    for case in ("mp4 named .txt", "mp4 named .mov"):
        footage = indexed[2][case]
        assert footage.kind == "video" and footage.duration == pytest.approx(2.0, abs=0.1)
        assert library.clips(footage.id)[0].thumbnails


def test_damaged_middle_is_indexed_from_what_decodes(library, indexed):
    footage = indexed[2]["damaged middle"]
    assert footage.state == "indexed" and library.clips(footage.id)[0].thumbnails


@pytest.mark.parametrize("case", ["unicode name", "very long path"])
def test_awkward_names_go_through_every_stage(library, indexed, media, case):
    footage = indexed[2][case]
    assert footage.path == str(media[case].resolve()) and footage.title == media[case].stem
    [clip] = library.clips(footage.id)
    assert clip.thumbnails and all(p.exists() for p in clip.thumbnails)
    assert "fellow" in " ".join(t[3] for t in clip.transcript).lower()  # audio extracted and heard


def test_cli_import_names_each_bad_file_and_its_reason(tmp_path, monkeypatch, broken):
    """`egodesk import --wait` of only bad files: one line per file, no traceback, exit status 1."""
    monkeypatch.setenv("EGODESK_HOME", str(tmp_path / "library"))
    cases = ["zero-length", "unicode name, empty", "truncated (index lost)", "mp4 named .srt", "unreadable photo", "missing"]
    result = egodesk("import", *(str(broken[c]) for c in cases), "--wait")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    for case in cases:
        assert f"error: {broken[case]}: {REASONS[case]}" in result.stderr
    assert f"added 0 footage, 0 already in the library, {len(cases)} error(s)" in result.stderr
