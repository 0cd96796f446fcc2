"""Start where it was left, in the real window on the real walk video: the last library, footage and
position come back; File > Open Recent lists and opens libraries; a file given at start is imported and
shown; a library or footage that is gone since gets a message."""

from __future__ import annotations

import shutil
import sys

import pytest
from PySide6.QtWidgets import QMenu

from egodesk.core.paths import choose_data_folder, chosen_data_folder
from egodesk.gui import app
from egodesk.gui.app import open_window, start_window
from egodesk.pipeline.library import Library
from tests.conftest import WALK_VIDEO

WAIT_MS = 15_000


@pytest.fixture(autouse=True)
def app_state(tmp_path, monkeypatch):
    """Config and data folders of the test's own (recent libraries, places, the last library; the
    platform's default library is not the user's), no EGODESK_HOME (the app picks its library itself);
    the app's exception hook and open windows are undone after."""
    for kind in ("CONFIG", "DATA", "STATE", "CACHE"):
        monkeypatch.setenv(f"XDG_{kind}_HOME", str(tmp_path / kind.lower()))
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    yield
    for window in app.open_windows:
        window.close()
    app.open_windows.clear()


def started(qtbot, files=None):
    """The window the app starts with, once it has read its footage list."""
    window = start_window(files)
    qtbot.addWidget(window)
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: window.reads.idle)
    return window


def only_footage(window):
    (footage,) = window.view.footage.values()
    return footage


def test_the_app_reopens_the_last_library_footage_and_frame(qtbot, video_library, monkeypatch):
    monkeypatch.delenv("EGODESK_HOME")
    choose_data_folder(video_library.paths.root)  # the library last used
    first = started(qtbot)
    assert first.library.paths.root == video_library.paths.root
    assert first.view.current is None  # nothing was left open before
    footage = only_footage(first)
    first.view.open_footage(footage.id, at=6.2)
    player = first.player
    qtbot.waitUntil(lambda: player.loaded and player.frame_time is not None and player.frame_time > 6.0, timeout=WAIT_MS)
    left_at = player.frame_time
    first.close()

    again = started(qtbot)
    assert again.library.paths.root == video_library.paths.root
    player = again.player
    qtbot.waitUntil(lambda: player.loaded and player.frame_time is not None, timeout=WAIT_MS)
    assert again.view.current.id == footage.id and again.library_panel.selected_id() == footage.id
    qtbot.waitUntil(lambda: abs(player.frame_time - left_at) < 0.5 / player.fps, timeout=WAIT_MS)  # the same frame
    assert again.timeline.playhead == pytest.approx(footage.start + player.position(), abs=1e-3)
    again.close()


def test_open_recent_lists_the_other_libraries_and_opens_one(qtbot, video_library, tmp_path, monkeypatch):
    monkeypatch.delenv("EGODESK_HOME")
    gone = Library(tmp_path / "gone")
    open_window(gone).close()
    gone.close()
    open_window(video_library).close()
    window = open_window(Library(tmp_path / "second"))  # closed and deleted when another library is opened
    menu = window.findChild(QMenu, "menu-recent")
    assert menu.title() == "Open &Recent" and menu.menuAction() in window.menuBar().actions()[0].menu().actions()
    shutil.rmtree(tmp_path / "gone")
    menu.aboutToShow.emit()
    entries = [a for a in menu.actions() if a.isEnabled()]
    assert [a.toolTip() for a in entries] == [str(video_library.paths.root)]  # the current and the gone one are not listed
    assert entries[0].text().startswith("&1 ")
    with qtbot.waitSignal(window.library_switch_requested, timeout=5000):
        entries[0].trigger()
    opened = app.open_windows[-1]  # in place of the window it was chosen in
    assert window not in app.open_windows and not window.isVisible()
    qtbot.addWidget(opened)
    qtbot.waitUntil(lambda: opened.reads.idle)
    assert opened.library.paths.root == video_library.paths.root and only_footage(opened).title == "gopro_max-heromode"
    assert chosen_data_folder() == video_library.paths.root  # and it is the library the next start opens
    menu = opened.findChild(QMenu, "menu-recent")
    menu.aboutToShow.emit()
    assert [a.toolTip() for a in menu.actions()] == [str((tmp_path / "second").resolve())]
    menu.choose(tmp_path / "gone")  # gone since the menu was filled: a message, no library made there
    assert "not there any more" in opened.statusBar().currentMessage() and not (tmp_path / "gone").exists()


def test_a_video_given_at_start_is_imported_into_the_last_library_and_shown(qtbot, library, monkeypatch):
    monkeypatch.delenv("EGODESK_HOME")
    choose_data_folder(library)
    window = started(qtbot, [str(WALK_VIDEO)])
    qtbot.waitUntil(lambda: window.view.current is not None and window.player.loaded, timeout=60_000)
    footage = window.view.current
    assert footage.title == "gopro_max-heromode" and window.library.paths.root == library.resolve()
    assert window.library_panel.selected_id() == footage.id
    assert window.import_task is not None  # shown once registered; its indexing goes on
    window.close()


def test_a_file_given_while_an_import_runs_is_imported_after_it(qtbot, window):
    from tests.gui import task_ops

    running = window.runner.run(task_ops.sleep, 60, label="sleep")
    window.import_task = running  # an import of other files, still running
    assert window.open_files([WALK_VIDEO]) is running
    running.cancel()
    qtbot.waitUntil(lambda: window.import_task is not running and window.import_task is not None, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.view.current is not None and window.player.loaded, timeout=60_000)
    assert window.view.current.title == "gopro_max-heromode"  # already in the library: shown all the same


def test_a_last_library_that_is_gone_gives_a_message_and_the_most_recent_opens(qtbot, video_library, tmp_path, monkeypatch):
    monkeypatch.delenv("EGODESK_HOME")
    open_window(video_library).close()
    last = choose_data_folder(tmp_path / "on a usb drive")
    open_window(Library(last)).close()
    shutil.rmtree(last)
    window = started(qtbot)
    assert window.library.paths.root == video_library.paths.root and not last.exists()
    message = window.statusBar().currentMessage()
    assert str(last) in message and "not there any more" in message


def test_a_last_footage_that_is_gone_gives_a_message(qtbot, video_library, monkeypatch):
    monkeypatch.delenv("EGODESK_HOME")
    choose_data_folder(video_library.paths.root)
    first = started(qtbot)
    footage = only_footage(first)
    first.view.open_footage(footage.id, at=2.0)
    first.close()
    video_library.forget(footage.id)
    again = started(qtbot)
    qtbot.waitUntil(lambda: "no longer in this library" in again.statusBar().currentMessage(), timeout=WAIT_MS)
    assert "“gopro_max-heromode”" in again.statusBar().currentMessage() and again.view.current is None
