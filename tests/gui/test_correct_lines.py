"""Fixing a misheard line in the real window: the composite clip (walk video + JFK's speech) indexed by
the real stages, a transcript line in the memory panel double-clicked, corrected and saved with Enter;
the panel shows the stored line, search finds it within seconds, and Ctrl+Z in the transcript takes it
back."""

from __future__ import annotations

import os
import time
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit

from egodesk.gui.memory_browser import TEXT_ROLE
from tests.gui.test_window import WAIT_MS

NEW_WORDS = "ask what the Zanzibar wombat can do for your country"


def _items(window) -> list[str]:
    listing = window.memory.transcript
    return [listing.item(i).data(TEXT_ROLE) for i in range(listing.count())]


def test_correct_a_line_in_place_then_undo_it_with_ctrl_z(qtbot, spoken_window, tmp_path):
    window = spoken_window
    (footage,) = window.view.footage.values()
    [clip] = [c for c in window.library.clips(footage.id) if c.transcript][-1:]
    start, end, _speaker, heard = clip.transcript[-1]
    window.view.open_footage(footage.id, at=(start + end) / 2 - footage.start)
    qtbot.waitUntil(lambda: heard in _items(window), timeout=WAIT_MS)

    listing = window.memory.transcript
    item = listing.item(_items(window).index(heard))
    listing.scrollToItem(item)
    where = listing.visualItemRect(item).center()
    qtbot.mousePress(listing.viewport(), Qt.MouseButton.LeftButton, pos=where)  # a double-click as a mouse makes it
    qtbot.mouseRelease(listing.viewport(), Qt.MouseButton.LeftButton, pos=where)
    qtbot.mouseDClick(listing.viewport(), Qt.MouseButton.LeftButton, pos=where)
    editor = listing.findChild(QLineEdit, "memory-line-editor")
    assert editor is not None and editor.text() == heard  # the words alone, not the time shown before them
    editor.selectAll()
    qtbot.keyClicks(editor, NEW_WORDS)
    saved = time.perf_counter()
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bool(window.library.search("wombat").hits), timeout=WAIT_MS)
    found = time.perf_counter() - saved
    print(f"saved in the window -> found by search {found:.2f} s")
    qtbot.waitUntil(lambda: NEW_WORDS in _items(window), timeout=WAIT_MS)  # the panel shows the stored line
    speech = lambda: [span.label for span in window.timeline.lanes["Speech"]]  # noqa: E731
    qtbot.waitUntil(lambda: NEW_WORDS in speech(), timeout=WAIT_MS)  # and the timeline's speech lane
    assert NEW_WORDS in window.memory.caption.text()  # the clip described again, quoting the line
    assert "Line corrected" in window.statusBar().currentMessage()
    assert found < 5

    shot = Path(os.environ.get("EGODESK_SHOT_DIR", tmp_path)) / "window-corrected-line.png"
    assert window.grab().save(str(shot)) and shot.stat().st_size > 10_000

    listing.setFocus()
    qtbot.keyClick(listing, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: heard in _items(window), timeout=WAIT_MS)
    assert "Correction undone" in window.statusBar().currentMessage()
    assert window.library.search("wombat").hits == [] and window.library.corrections() == []


def test_the_vocabulary_is_typed_in_settings_and_kept(qtbot, window, tmp_path):
    from PySide6.QtWidgets import QPlainTextEdit

    from egodesk.core.settings import Settings
    from egodesk.pipeline.library import Library

    dialog = window.open_settings()
    dialog.tabs.setCurrentIndex(list(Settings.groups()).index("Vocabulary"))
    words = dialog.findChild(QPlainTextEdit, "setting-vocabulary")
    assert words.isVisible() and words.toPlainText() == ""
    for line in ("Katrina", "Ty Hafan", ""):
        qtbot.keyClicks(words, line)
        qtbot.keyClick(words, Qt.Key.Key_Return)
    words.insertPlainText("pétanque")  # QTest types no accents: pasted
    shot = Path(os.environ.get("EGODESK_SHOT_DIR", tmp_path)) / "settings-vocabulary.png"
    assert dialog.grab().save(str(shot))
    qtbot.mouseClick(dialog.buttons.button(dialog.buttons.StandardButton.Ok), Qt.MouseButton.LeftButton)
    assert window.library.settings.vocabulary == ["Katrina", "Ty Hafan", "pétanque"]
    assert Library(window.library.paths.root).settings.vocabulary == ["Katrina", "Ty Hafan", "pétanque"]  # on disk
