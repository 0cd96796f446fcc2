"""Watched folders in the real window: Settings lists them (and refuses the library's own folder), and a
photo copied into a watched folder while the window is open appears in the library panel by itself,
indexed; when it is deleted the panel says its file is missing and keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from egodesk.gui.main_window import MainWindow
from egodesk.pipeline.library import Library
from tests.conftest import WALK_VIDEO, ffmpeg

WAIT_MS = 90_000  # the watch task's process loads the tagger, OCR and embedder before it indexes


@pytest.fixture
def card(tmp_path) -> Path:
    folder = tmp_path / "card" / "DCIM" / "100APPLE"
    folder.mkdir(parents=True)
    return folder


def test_settings_list_the_watched_folders(qtbot, window, card):
    dialog = window.open_settings()
    folders = dialog.editors["watched_folders"].widget
    assert folders.folders() == []
    ok = dialog.buttons.button(dialog.buttons.StandardButton.Ok)
    folders.add_folder(str(window.library.paths.root))  # the library's own folder: its thumbnails are photos
    error = dialog.findChild(QLabel, "error-watched_folders")
    assert not ok.isEnabled() and "holds the library's own files" in error.text()
    folders.set_folders([str(card.parent.parent)])
    assert ok.isEnabled() and error.isHidden()
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    assert Library(window.library.paths.root).settings.watched_folders == [str(card.parent.parent)]
    assert window.watch_task is not None and window.watch_task.running  # watching starts at once
    reopened = window.open_settings()
    assert reopened.editors["watched_folders"].widget.folders() == [str(card.parent.parent)]
    reopened.reject()


def test_a_photo_copied_into_a_watched_folder_appears_by_itself(qtbot, library, card, tmp_path):
    lib = Library(library)
    lib.save_settings(lib.settings.model_copy(update={"watched_folders": [str(card.parent.parent)], "watch_interval_s": 0.3}))
    window = MainWindow(lib)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: window.reads.idle)
    assert window.watch_task is not None and window.watch_task.running
    shot = tmp_path / "IMG_0042.JPG"
    ffmpeg("-ss", "3", "-i", str(WALK_VIDEO), "-frames:v", "1", "-vf", "scale=640:-2", str(shot))
    shot.rename(card / shot.name)  # the phone's sync drops it in

    def photo():
        return next((f for f in window.view.footage.values() if f.title == "IMG_0042"), None)

    def searchable() -> bool:
        return photo() is not None and window.library_panel.item_for(photo().id).text(3).startswith(("searchable", "indexed"))

    qtbot.waitUntil(searchable, timeout=WAIT_MS)
    shot_footage = photo()
    item = window.library_panel.item_for(shot_footage.id)
    assert item.text(2) == "photo" and item.icon(0).isNull() is False  # its own thumbnail
    window.grab().save(str(tmp_path / "watched-photo.png"))
    window.library_panel.open_requested.emit(shot_footage.id)
    assert "is a photo" in window.player.placeholder.text()
    (card / shot.name).unlink()  # deleted on the phone
    qtbot.waitUntil(lambda: window.library_panel.item_for(shot_footage.id).text(3) == "file missing", timeout=WAIT_MS)
    window.grab().save(str(tmp_path / "watched-missing.png"))
    window.close()
