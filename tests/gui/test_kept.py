"""Kept moments in the real window on the real walk video: a moment starred from an evidence chip's menu
appears in the Starred list, a click there plays it, a note added from a clip's menu on the timeline is
found by the search field, and a refused one says why."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QInputDialog, QMenu

from egodesk.gui.evidence import EvidenceChip, chip_name
from egodesk.gui.kept import KEEP_ACTIONS
from tests.gui.test_window import WAIT_MS, answer_about, walk_footage


def choose(text: str) -> None:
    """The next menu shown picks its action `text`, as a person would: a menu runs its own event loop, so a
    timer finds it open and triggers the action."""

    def pick() -> None:
        menu = QApplication.activePopupWidget()
        if not isinstance(menu, QMenu):
            QTimer.singleShot(20, pick)
            return
        [action] = [a for a in menu.actions() if a.text() == text]
        menu.close()
        action.trigger()

    QTimer.singleShot(20, pick)


def right_click(widget, pos: QPoint) -> None:
    QApplication.sendEvent(widget, QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, widget.mapToGlobal(pos)))


def test_star_from_a_chip_then_the_starred_list_plays_it(qtbot, window, tmp_path):
    footage = walk_footage(window)
    window.ask_panel.present(answer_about(footage, [(1.0, 3.0), (6.0, 8.0)]))
    chip = window.ask_panel.findChild(EvidenceChip, chip_name(1))
    choose(KEEP_ACTIONS["star"])
    right_click(chip, chip.rect().center())
    qtbot.waitUntil(lambda: bool(window.kept_panel.kept), timeout=WAIT_MS)  # the task ran, the list was read again
    [star] = window.kept_panel.kept
    assert (star.kind, star.footage_id, star.offset, star.end - star.start) == ("star", footage.id, 6.0, 2.0)
    assert window.library.kept() == [star]  # stored, not just shown
    assert "Starred the moment" in window.statusBar().currentMessage()

    listing = window.kept_panel.list
    item = listing.item(0)
    assert item.text().startswith("★") and footage.title in item.text()
    qtbot.mouseClick(listing.viewport(), Qt.MouseButton.LeftButton, pos=listing.visualItemRect(item).center())
    player = window.player
    qtbot.waitUntil(lambda: player.loaded and player.frame_time is not None, timeout=WAIT_MS)
    assert window.view.current.id == footage.id and 6.0 <= player.position() < 7.0  # it plays from the star

    shot = Path(os.environ.get("EGODESK_SHOT_DIR", tmp_path)) / "window-starred.png"
    assert window.grab().save(str(shot)) and shot.stat().st_size > 10_000


def test_a_note_from_the_timeline_is_found_by_search(qtbot, window, monkeypatch):
    footage = walk_footage(window)
    window.view.open_footage(footage.id)
    qtbot.waitUntil(lambda: bool(window.timeline.lanes["Clips"]), timeout=WAIT_MS)
    timeline = window.timeline
    clip = timeline.lanes["Clips"][0]
    monkeypatch.setattr(QInputDialog, "getMultiLineText", lambda *_a, **_k: ("The blue umbrella is behind the bench", True))
    choose(KEEP_ACTIONS["note"])
    right_click(timeline, timeline.span_rect("Clips", clip).center().toPoint())
    qtbot.waitUntil(lambda: bool(window.kept_panel.kept), timeout=WAIT_MS)
    [note] = window.kept_panel.kept
    assert (note.kind, note.text, note.start, note.end) == ("note", "The blue umbrella is behind the bench", clip.start, clip.end)
    assert "umbrella" in window.kept_panel.list.item(0).text()

    window.search_panel.field.setText("umbrella")
    window.search_panel.run()
    qtbot.waitUntil(lambda: bool(window.search_panel.hits), timeout=WAIT_MS)
    [hit] = window.search_panel.hits
    assert (hit.kind, hit.footage_id) == ("note", footage.id) and "my note" in window.search_panel.results.toPlainText()


def test_an_empty_note_is_refused_with_the_reason_and_nothing_kept(qtbot, window):
    footage = walk_footage(window)
    task = window.keeping.add_note(footage.id, footage.start, footage.start + 2, "   ")
    with qtbot.waitSignal(task.finished, timeout=WAIT_MS):
        pass
    assert task.state == "failed" and "needs some text" in task.error
    assert "Note not kept: a note needs some text" in window.statusBar().currentMessage()
    assert window.library.kept() == []
