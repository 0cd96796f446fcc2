"""Bad input in a watched folder: an unreadable photo and a zero-byte voice note are each said once with
their reason, and the folder itself disappearing (a card taken out) is said once, by the scan and by
`egodesk watch list` and `egodesk footage`; nothing stored is lost, and watching resumes when it is back."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from egodesk.pipeline.library import Library
from egodesk.pipeline.watch import FolderWatch, watched_with
from tests.badinput.support import assert_nothing_lost, egodesk, snapshot
from tests.conftest import WALK_VIDEO, ffmpeg

pytestmark = pytest.mark.badinput


def _small_video(path):
    """One second of the walk video, small and silent: a camera file that imports in seconds."""
    ffmpeg("-i", str(WALK_VIDEO), "-t", "1", "-an", "-vf", "scale=160:90", "-c:v", "libx264", "-preset", "ultrafast", str(path))


@pytest.fixture
def watched(tmp_path, monkeypatch):
    """A library watching a card folder that holds one small video, imported and indexed."""
    card = tmp_path / "card" / "DCIM" / "100MEDIA"
    card.mkdir(parents=True)
    _small_video(card / "a.mp4")
    monkeypatch.setenv("EGODESK_HOME", str(tmp_path / "library"))
    library = Library(tmp_path / "library")
    library.save_settings(watched_with(library.settings, library.paths.root, tmp_path / "card"))
    watcher = FolderWatch(library.store, library.settings)
    watcher.scan()
    assert len(watcher.scan().added) == 1 and library.process()["failed"] == 0
    yield library, tmp_path / "card", card, watcher
    library.close()


def test_an_unreadable_photo_and_an_empty_voice_note_are_said_once(watched):
    library, _, card, watcher = watched
    before = snapshot(library.store)
    ffmpeg("-ss", "1", "-i", str(WALK_VIDEO), "-frames:v", "1", str(card / "whole.jpg"))
    (card / "IMG_0001.JPG").write_bytes((card / "whole.jpg").read_bytes()[:3000])  # cut off half-way
    (card / "whole.jpg").unlink()
    (card / "Voice 001.m4a").write_bytes(b"")
    watcher.scan()
    report = watcher.scan()
    reasons = {Path(path).name: why for path, why in report.errors}
    assert reasons.keys() == {"IMG_0001.JPG", "Voice 001.m4a"} and not report.added
    assert reasons["IMG_0001.JPG"].startswith("unreadable photo: truncated or corrupt")
    assert reasons["Voice 001.m4a"] == "empty file (0 bytes)"
    assert all(line.startswith("error: ") and "Traceback" not in line for line in report.lines())
    assert not watcher.scan()  # said once, not at every scan
    assert snapshot(library.store) == before  # nothing added, nothing lost


def test_a_folder_that_disappears_is_said_once_and_loses_nothing(watched, tmp_path):
    library, folder, card, watcher = watched
    before = snapshot(library.store)
    shutil.rmtree(folder)  # the card is taken out
    report = watcher.scan()
    assert report.folders_gone == [str(folder)] and report.missing == []  # the folder is said, not each file in it
    assert report.lines() == [f"watched folder not found: {folder} (unplugged or removed?); watching resumes when it is back"]
    assert not watcher.scan()
    assert_nothing_lost(before, snapshot(library.store))
    [footage] = library.footage()
    assert footage.missing and footage.state == "indexed" and library.clips(footage.id)[0].caption  # memories kept
    listed = egodesk("watch", "list")
    assert listed.returncode == 0 and f"{folder}  (not found: unplugged or removed?)" in listed.stdout
    shown = egodesk("footage")
    assert f"(missing: {footage.path} is gone; its memories are kept)" in shown.stdout
    card.mkdir(parents=True)  # the card is back, with its file
    _small_video(card / "a.mp4")
    assert watcher.scan().folders_back == [str(folder)]
    assert not library.footage()[0].missing
