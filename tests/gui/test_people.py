"""People in the real window: the composite clip (walk video + JFK's speech) indexed by the real stages,
its voice listed in the People panel as the library's guess of the wearer ("me?"); a sample clicked plays
its turn; "This is me" from its menu makes its lines say "me" on the memory panel at once; named by
double-click, the panel shows the name; forgotten from its menu, it leaves the panel and the lines keep
their words without it. A turn of a voice heard in two footage splits that footage off from its menu. One
line given to the wrong voice is put right from its menu in the memory panel ("Said by…")."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QInputDialog, QMenu, QMessageBox
from sqlalchemy import select

from egodesk.gui.memory_browser import LINE_ROLE, SAID_BY_MENU, SOMEONE_ELSE, TEXT_ROLE
from egodesk.gui.people import PeoplePanel
from egodesk.memory.people import VoiceInfo
from egodesk.memory.schema import StaleMoment, Unit
from tests.gui.test_kept import choose, right_click
from tests.gui.test_window import WAIT_MS

# A change to the voices runs in a worker process that opens the library and embeds the moments it relabels.
TASK_MS = 120_000


def _lines(window) -> list[str]:
    listing = window.memory.transcript
    return [listing.item(i).text() for i in range(listing.count())]


def _memories_say(library, words: str) -> bool:
    """No moment is left showing an old name, and a transcript memory says `words`."""
    with library.store.session() as s:
        if s.scalars(select(StaleMoment)).first() is not None:
            return False
        return any(words in text for text in s.scalars(select(Unit.text).where(Unit.kind == "transcript")))


def test_name_a_voice_listen_to_it_and_forget_it(qtbot, spoken_window, monkeypatch, tmp_path):
    window = spoken_window
    panel = window.people_panel
    window.docks["people"].raise_()  # its tab, beside the Starred list's
    qtbot.waitUntil(lambda: bool(panel.voices), timeout=WAIT_MS)
    voice = panel.voices[0]
    row = panel.tree.topLevelItem(0)
    assert voice.me and not voice.me_said and row.text(0) == "me?"  # one footage's voice: the wearer, a guess
    assert row.childCount() >= 1  # a turn to listen to

    sample = row.child(0)
    footage_id, start, _end = sample.data(0, Qt.ItemDataRole.UserRole)
    tree = panel.tree
    tree.expandItem(row)
    QApplication.processEvents()  # the expanded row laid out before it is clicked
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=tree.visualItemRect(sample).center())
    player = window.player
    qtbot.waitUntil(lambda: player.loaded and player.frame_time is not None, timeout=WAIT_MS)
    footage = window.view.footage[footage_id]
    assert window.view.current.id == footage_id
    assert abs(player.position() - (start - footage.start)) < 1.5  # it plays from the turn

    player.media.pause()  # on the turn, so the memory panel shows its clip
    qtbot.waitUntil(lambda: bool(_lines(window)), timeout=WAIT_MS)
    assert not any(line.split("  ", 1)[1].startswith("me: ") for line in _lines(window))  # a guess labels no line
    choose("This is me")
    right_click(tree.viewport(), tree.visualItemRect(panel.tree.topLevelItem(0)).center())
    qtbot.waitUntil(lambda: bool(panel.voices) and panel.voices[0].me_said, timeout=TASK_MS)
    assert panel.tree.topLevelItem(0).text(0) == "me"
    qtbot.waitUntil(lambda: _lines(window) and all("  me: " in line for line in _lines(window)), timeout=WAIT_MS)
    speakers = lambda: {span.group for span in window.timeline.lanes["Speech"]}  # noqa: E731
    qtbot.waitUntil(lambda: "me" in speakers(), timeout=WAIT_MS)  # the speech lane in the wearer's colour too
    qtbot.waitUntil(lambda: _memories_say(window.library, "me: "), timeout=TASK_MS)  # the memories, in the next task

    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("John", True))
    at = tree.visualItemRect(panel.tree.topLevelItem(0)).center()
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=at)  # a double-click's first press, then it
    qtbot.mouseDClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=at)
    qtbot.waitUntil(lambda: bool(panel.voices) and panel.voices[0].name == "John", timeout=TASK_MS)
    assert panel.tree.topLevelItem(0).text(0) == "John (me)"
    assert window.library.voices()[0].name == "John"  # stored, not just shown

    shot = Path(os.environ.get("EGODESK_SHOT_DIR", tmp_path)) / "window-people.png"
    assert window.grab().save(str(shot)) and shot.stat().st_size > 10_000

    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    choose("Forget this voice…")
    right_click(tree.viewport(), tree.visualItemRect(panel.tree.topLevelItem(0)).center())
    qtbot.waitUntil(lambda: not any(v.id == voice.id for v in panel.voices), timeout=TASK_MS)
    assert not any(v.id == voice.id for v in window.library.voices())
    qtbot.waitUntil(lambda: _lines(window) and not any("  me: " in line for line in _lines(window)), timeout=WAIT_MS)
    listing = window.memory.transcript
    assert any(listing.item(i).data(TEXT_ROLE) for i in range(listing.count()))  # the words stay


def test_a_turn_that_is_someone_else_splits_its_footage_off_the_voice(qtbot):
    panel = PeoplePanel()
    qtbot.addWidget(panel)
    tom = VoiceInfo(4, "Tom", "Tom", False, 2, 40.0)
    once = VoiceInfo(5, None, "Voice 5", False, 1, 9.0)
    panel.set_people([tom, once], {4: [(7, 1000.0, 1004.0)], 5: [(8, 2000.0, 2003.0)]})
    panel.tree.expandAll()
    QApplication.processEvents()
    asked: list = []
    panel.split_requested.connect(lambda voice, footage_id: asked.append((voice.id, footage_id)))
    turn = panel.tree.topLevelItem(0).child(0)
    choose("Not Tom in this footage: a voice of its own")
    right_click(panel.tree.viewport(), panel.tree.visualItemRect(turn).center())
    qtbot.waitUntil(lambda: bool(asked), timeout=WAIT_MS)
    assert asked == [(4, 7)]
    lone = panel.tree.topLevelItem(1).child(0)  # heard in one footage: nothing to split it from, no menu
    right_click(panel.tree.viewport(), panel.tree.visualItemRect(lone).center())
    assert QApplication.activePopupWidget() is None


def choose_in(submenu: str, text: str) -> None:
    """The next menu shown opens its `submenu` and picks its action `text` (`choose`, one level down)."""

    def pick() -> None:
        menu = QApplication.activePopupWidget()
        if not isinstance(menu, QMenu):
            QTimer.singleShot(20, pick)
            return
        [inner] = [a.menu() for a in menu.actions() if a.text() == submenu]
        [action] = [a for a in inner.actions() if a.text() == text]
        menu.close()
        action.trigger()

    QTimer.singleShot(20, pick)


def test_said_by_from_a_lines_menu_names_who_said_that_line(qtbot, spoken_window):
    """The voice named John; his line said to be someone else's from its menu: it shows no name at once and
    is stored so, while John stays a voice of the library; then given back to John from the same menu,
    which lists the library's voices as the People panel names them. (The clip holds one line: that the
    other lines keep their voice is `tests/pipeline/test_speakers.py`'s.)"""
    window = spoken_window
    library = window.library
    (footage,) = window.view.footage.values()
    [voice] = library.voices()
    library.name_voice(voice.id, "John")  # named before the window reads the voices and the clip
    window.refresh_people()
    qtbot.waitUntil(lambda: [v.name for v in window.memory.voices] == ["John"], timeout=WAIT_MS)
    clip = max(library.clips(footage.id), key=lambda c: len(c.transcript))
    window.view.open_footage(footage.id, at=clip.start - footage.start + 0.5)
    listing = window.memory.transcript
    qtbot.waitUntil(lambda: bool(_lines(window)) and all("  John: " in line for line in _lines(window)), timeout=WAIT_MS)
    item = listing.item(0)
    line_id = item.data(LINE_ROLE)
    assert line_id == clip.line_ids[0]

    choose_in(SAID_BY_MENU, SOMEONE_ELSE)
    right_click(listing.viewport(), listing.visualItemRect(item).center())
    assert "John: " not in listing.item(0).text()  # at once: the task storing it has only started

    def stored() -> dict[int, str]:
        """Each of the clip's lines' speaker as stored."""
        [now] = library.clips(footage.id, clip.id)
        return {i: speaker for i, (_, _, speaker, _) in zip(now.line_ids, now.transcript)}

    qtbot.waitUntil(lambda: stored()[line_id] == "", timeout=TASK_MS)
    qtbot.waitUntil(lambda: "said by someone else" in window.statusBar().currentMessage(), timeout=WAIT_MS)
    assert [v.name for v in library.voices()] == ["John"]  # the voice stays; only the line changed

    choose_in(SAID_BY_MENU, "John (me?)")  # the library's guess of the wearer, named
    right_click(listing.viewport(), listing.visualItemRect(listing.item(0)).center())
    assert "  John: " in listing.item(0).text()
    qtbot.waitUntil(lambda: stored()[line_id] == "John", timeout=TASK_MS)
