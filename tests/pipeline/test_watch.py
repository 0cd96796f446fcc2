"""The folder watcher's rules on real files and a real library, one scan at a time: a file is imported
once it is unchanged over two scans and not before (a copy still growing is never taken), the same bytes
twice are one footage, a camera card's DCIM tree is walked without its sidecars, a bad file is said once,
a removed file is noticed and its footage kept (a removed folder: tests/badinput/test_badinput_watch.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from egodesk.core.settings import Settings
from egodesk.media.hashing import content_hash
from egodesk.pipeline.library import Library
from egodesk.pipeline.watch import FolderWatch, watched_with, watched_without
from tests.conftest import JFK_AUDIO, WALK_VIDEO, ffmpeg


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> list[Path]:
    """Three different 1 s cuts of the walk (with speech), 160x90: real camera files, small."""
    d = tmp_path_factory.mktemp("clips")
    out = []
    for i in range(3):
        path = d / f"GX01000{i}.MP4"
        ffmpeg(
            *("-ss", str(2 * i), "-i", str(WALK_VIDEO), "-ss", str(2 * i), "-i", str(JFK_AUDIO)),
            *("-map", "0:v:0", "-map", "1:a:0", "-t", "1", "-vf", "scale=160:90", "-r", "10"),
            *("-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", str(path)),
        )
        out.append(path)
    return out


@pytest.fixture
def setup(tmp_path):
    folder = tmp_path / "card"
    folder.mkdir()
    library = Library(tmp_path / "library")
    library.save_settings(watched_with(library.settings, library.paths.root, folder))
    watcher = FolderWatch(library.store, library.settings)
    yield library, folder, watcher
    library.close()


def test_a_new_file_is_imported_at_the_second_scan_and_only_once(setup, clips):
    library, folder, watcher = setup
    shutil.copy(clips[0], folder / "a.mp4")
    assert not watcher.scan()  # first seen: it may still be being written
    report = watcher.scan()
    assert [Path(p).name for p, _ in report.added] == ["a.mp4"] and not report.errors
    assert not watcher.scan()  # in the library now: never looked at again
    [footage] = library.footage()
    assert footage.path == str((folder / "a.mp4").resolve()) and footage.state == "pending"


def test_a_growing_file_waits_until_it_stops_growing(setup, clips):
    """Each scan sees more bytes: nothing is taken until two scans agree, and then the whole file is."""
    library, folder, watcher = setup
    data = clips[1].read_bytes()
    target = folder / "copying.mp4"
    step = len(data) // 4
    for end in range(step, len(data), step):
        target.write_bytes(data[:end])
        assert not watcher.scan(), f"taken at {end} of {len(data)} bytes"
    target.write_bytes(data)
    assert not watcher.scan()
    [(path, footage_id)] = watcher.scan().added
    with library.store.session() as session:
        from egodesk.memory.store import Footage

        assert session.get(Footage, footage_id).content_hash == content_hash(clips[1])  # all of it


def test_duplicates_are_skipped_once_and_not_hashed_again(setup, clips, monkeypatch):
    library, folder, watcher = setup
    shutil.copy(clips[0], folder / "first.mp4")
    watcher.scan()
    watcher.scan()
    shutil.copy(clips[0], folder / "same bytes.mp4")
    watcher.scan()
    report = watcher.scan()
    assert report.added == [] and [Path(p).name for p, _ in report.existing] == ["same bytes.mp4"]
    hashed = []
    monkeypatch.setattr("egodesk.pipeline.ingest.content_hash", lambda p: hashed.append(p) or "x")
    assert not watcher.scan() and hashed == []  # the duplicate, unchanged, is not read again
    assert len(library.footage()) == 1


def test_a_camera_card_tree_is_walked_without_sidecars(setup, clips):
    library, folder, watcher = setup
    gopro = folder / "DCIM" / "100GOPRO"
    gopro.mkdir(parents=True)
    for clip in clips[:2]:
        shutil.copy(clip, gopro / clip.name)
        shutil.copy(clip, gopro / clip.with_suffix(".LRV").name)  # the camera's low-resolution proxy: same MP4 data
        (gopro / clip.with_suffix(".THM").name).write_bytes(b"\xff\xd8\xff\xe0 thumbnail")
    (gopro / "._GX010000.MP4").write_bytes(b"\x00\x05\x16\x07 macOS resource fork")
    (folder / "MISC").mkdir()
    (folder / "MISC" / "version.txt").write_text("HERO11")
    watcher.scan()
    report = watcher.scan()
    assert sorted(Path(p).name for p, _ in report.added) == [clips[0].name, clips[1].name]
    assert not report.errors and not report.existing


def test_a_bad_file_is_reported_once_and_tried_again_when_it_changes(setup, clips):
    library, folder, watcher = setup
    cut = folder / "cut.mp4"
    cut.write_bytes(WALK_VIDEO.read_bytes()[:50_000])  # its index (at the end) never arrived
    watcher.scan()
    [(path, reason)] = watcher.scan().errors
    assert path == str(cut.resolve()) and reason.startswith("truncated or corrupt")
    assert not watcher.scan()  # said once
    shutil.copy(clips[2], cut)  # copied again, whole
    watcher.scan()
    assert [Path(p).name for p, _ in watcher.scan().added] == ["cut.mp4"]


def found(watcher, clip: Path, dest: Path) -> int:
    """`clip` copied into the watched folder at `dest` and imported (a file is taken at its second
    scan, once it stopped growing): its footage id."""
    shutil.copy(clip, dest)
    watcher.scan()
    [(_, footage_id)] = watcher.scan().added
    return footage_id


def test_a_removed_file_is_noticed_and_its_footage_kept(setup, clips):
    library, folder, watcher = setup
    footage_id = found(watcher, clips[0], folder / "a.mp4")
    (folder / "a.mp4").unlink()
    report = watcher.scan()
    assert report.missing == [(str((folder / "a.mp4").resolve()), footage_id)]
    assert not watcher.scan()  # said once
    [footage] = library.footage()
    assert footage.id == footage_id and footage.missing  # still there, marked missing


def test_a_moved_file_brings_its_footage_along(setup, clips):
    library, folder, watcher = setup
    footage_id = found(watcher, clips[0], folder / "a.mp4")
    (folder / "sorted").mkdir()
    (folder / "a.mp4").rename(folder / "sorted" / "a.mp4")
    watcher.scan()
    report = watcher.scan()
    assert report.existing == [(str((folder / "sorted" / "a.mp4").resolve()), footage_id)]
    [footage] = library.footage()
    assert footage.path == str((folder / "sorted" / "a.mp4").resolve()) and not footage.missing


def test_which_folders_can_be_watched(tmp_path):
    root = tmp_path / "library"
    root.mkdir()
    settings = Settings()
    with pytest.raises(ValueError, match="no such folder"):
        watched_with(settings, root, tmp_path / "nowhere")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="not a folder"):
        watched_with(settings, root, tmp_path / "file")
    with pytest.raises(ValueError, match="holds the library's own files"):
        watched_with(settings, root, root / ".." / "library" / ".")
    with pytest.raises(ValueError, match="holds the library's own files"):
        watched_with(settings, root, tmp_path)
    (tmp_path / "card").mkdir()
    once = watched_with(settings, root, tmp_path / "card")
    assert watched_with(once, root, tmp_path / "card").watched_folders == [str(tmp_path / "card")]
    assert watched_without(once, tmp_path / "card").watched_folders == []
    with pytest.raises(ValueError, match="not a watched folder"):
        watched_without(settings, tmp_path / "card")


def test_the_folder_list_comes_from_the_environment_too():
    assert Settings.load(None, {"EGODESK_WATCHED_FOLDERS": "/a:/b"}).watched_folders == ["/a", "/b"]
    assert Settings.load(None, {"EGODESK_WATCHED_FOLDERS": '["/a:b"]'}).watched_folders == ["/a:b"]
