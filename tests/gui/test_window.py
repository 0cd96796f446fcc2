"""The real main window on a real library holding the real walk video."""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtMultimedia import QMediaDevices
from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QLineEdit

from egodesk.core.settings import Settings
from egodesk.core.types import Answer, Evidence
from egodesk.gui.evidence import EvidenceChip, chip_name
from egodesk.gui.settings_dialog import SettingsDialog
from egodesk.pipeline.library import Library

WAIT_MS = 15_000


def walk_footage(window):
    (footage,) = window.view.footage.values()
    return footage


def answer_about(footage, ranges: list[tuple[float, float]]) -> Answer:
    evidence = [
        Evidence(
            unit_id=100 + i,
            footage_id=footage.id,
            source=footage.title,
            start=footage.start + a,
            end=footage.start + b,
            text=f"I walk along the path (part {i + 1}).",
            score=0.9 - i / 10,
            strategy="parent",
            view="caption",
            ranks={"dense": i + 1},
            scores={"dense": 0.8 - i / 10},
            offset=a,
        )
        for i, (a, b) in enumerate(ranges)
    ]
    return Answer(question="where did I walk?", text="Along a path by the sea.", evidence=evidence, cited=[100], tokens=321)


def test_library_panel_lists_the_footage_by_day(window):
    footage = walk_footage(window)
    item = window.library_panel.item_for(footage.id)
    assert item is not None and item.text(0) == "gopro_max-heromode"
    assert item.parent().text(0) == "Mon 18 Nov 2019 · 1 file · 0:11"  # the recording day, from the metadata
    assert item.text(2) == "0:11"


def test_settings_dialog_changes_the_strategy_and_it_persists(qtbot, window):
    dialog = window.open_settings()
    assert isinstance(dialog, SettingsDialog)
    strategy = dialog.findChild(QComboBox, "setting-strategy")
    assert {"auto", "parent", "hybrid", "carve", "records", "timeaware"} <= {
        strategy.itemText(i) for i in range(strategy.count())
    }
    strategy.setCurrentText("hybrid")
    qtbot.mouseClick(dialog.buttons.button(dialog.buttons.StandardButton.Ok), Qt.MouseButton.LeftButton)
    assert window.library.settings.strategy == "hybrid"
    assert Library(window.library.paths.root).settings.strategy == "hybrid"  # read back from disk


def test_settings_dialog_shows_validation_errors_inline(qtbot, window):
    dialog = window.open_settings()
    dialog.findChild(QLineEdit, "setting-wearer_name").setText("")
    error = dialog.findChild(QLabel, "error-wearer_name")
    assert not error.isHidden() and "at least 1 character" in error.text()
    assert dialog.tabs.tabText(list(Settings.groups()).index("Memory")) == "⚠ Memory"
    ok = dialog.buttons.button(dialog.buttons.StandardButton.Ok)
    assert not ok.isEnabled()
    dialog.findChild(QLineEdit, "setting-wearer_name").setText("Katrina")
    assert ok.isEnabled() and error.isHidden()
    dialog.reject()


def test_player_loads_the_real_video_and_seeks_within_a_frame(qtbot, window):
    footage = walk_footage(window)
    window.view.open_footage(footage.id)
    player = window.player
    qtbot.waitUntil(lambda: player.loaded, timeout=WAIT_MS)
    assert abs(player.fps - 30000 / 1001) < 0.01 and abs(player.duration() - 10.5) < 0.1
    for target in (2.0, 7.345, 0.5):
        player.seek_moment(target)
        qtbot.waitUntil(
            lambda target=target: player.frame_time is not None and abs(player.frame_time - target) <= 1 / player.fps,
            timeout=WAIT_MS,
        )
    shown = player.frame_time
    player.step(1)
    qtbot.waitUntil(lambda: abs(player.frame_time - (shown + 1 / player.fps)) < 0.002, timeout=WAIT_MS)
    assert window.timeline.playhead == footage.start + player.position()
    # sound goes to the system's audio output when it has one; a headless machine's engine gets none
    assert (player.media.audioOutput() is not None) == bool(QMediaDevices.audioOutputs())


def test_timeline_marks_the_answers_evidence(qtbot, window):
    footage = walk_footage(window)
    window.view.open_footage(footage.id)
    window.ask_panel.present(answer_about(footage, [(1.0, 3.0), (6.0, 9.0)]))
    lane = window.timeline.lanes["Evidence"]
    assert [(s.start - footage.start, s.end - footage.start, s.key) for s in lane] == [(1.0, 3.0, 0), (6.0, 9.0, 1)]
    rect = window.timeline.span_rect("Evidence", lane[1])
    assert window.timeline.rect().contains(rect.center().toPoint())  # visible on the footage's view
    assert [c.objectName() for c in window.ask_panel.chips] == [chip_name(0), chip_name(1)]


def test_chips_lead_with_the_cited_moment_and_a_toggle_shows_time_order(qtbot, window):
    footage = walk_footage(window)
    answer = answer_about(footage, [(6.0, 8.0), (1.0, 3.0), (4.0, 5.0)])  # cited first, then by relevance
    for rank, ev in enumerate(answer.evidence, start=1):
        ev.rank = rank
    window.ask_panel.present(answer)
    panel = window.ask_panel

    def laid_out() -> list[int]:
        layout = panel.chip_layout
        return [w.index for w in (layout.itemAt(i).widget() for i in range(layout.count())) if isinstance(w, EvidenceChip)]

    assert laid_out() == [0, 1, 2] and panel.chips[0].property("cited")
    header = panel.chips[0].findChild(QLabel, "chip-header").text()
    assert "★" in header and "#1" in header and "rank 1" in header
    lane = [(s.start, s.end, s.key) for s in window.timeline.lanes["Evidence"]]
    toggle = panel.findChild(QCheckBox, "evidence-time-order")
    assert toggle.isVisibleTo(window)
    toggle.setChecked(True)
    assert laid_out() == [1, 2, 0]  # 1-3 s, 4-5 s, 6-8 s
    assert [(s.start, s.end, s.key) for s in window.timeline.lanes["Evidence"]] == lane  # the timeline keeps its lanes
    toggle.setChecked(False)
    assert laid_out() == [0, 1, 2]


def test_clicking_an_evidence_chip_seeks_inside_its_range_and_loops_it(qtbot, window):
    footage = walk_footage(window)
    window.ask_panel.present(answer_about(footage, [(1.0, 3.0), (6.0, 8.0)]))
    chip = window.ask_panel.findChild(EvidenceChip, chip_name(1))
    qtbot.mouseClick(chip, Qt.MouseButton.LeftButton)
    player = window.player
    qtbot.waitUntil(lambda: player.loaded and player.frame_time is not None, timeout=WAIT_MS)
    assert player.loop == (6.0, 8.0)
    assert window.timeline.highlighted == 1 and chip.property("selected")
    for _ in range(8):  # it plays and loops: every sampled position stays inside the range
        qtbot.wait(150)
        assert 6.0 <= player.position() <= 8.0 + 1 / player.fps
    player.loop_label.click()  # dismiss
    assert player.loop is None and window.timeline.highlighted is None and not chip.property("selected")


def test_a_moment_picked_on_the_timeline_is_the_one_picked_in_the_chips(qtbot, window):
    footage = walk_footage(window)
    window.view.open_footage(footage.id)
    window.ask_panel.present(answer_about(footage, [(1.0, 3.0), (6.0, 9.0)]))
    timeline = window.timeline
    rect = timeline.span_rect("Evidence", timeline.lanes["Evidence"][1])
    qtbot.mouseClick(timeline, Qt.MouseButton.LeftButton, pos=rect.center().toPoint())
    assert window.selection.index == 1  # one hop: the timeline tells the shared selection
    assert [chip.property("selected") for chip in window.ask_panel.chips] == [False, True]
    assert timeline.highlighted == 1 and window.player.loop == (6.0, 9.0)
    window.ask_panel.present(answer_about(footage, [(2.0, 4.0)]))  # a new answer: nothing is picked
    assert window.selection.index is None and window.player.loop is None and timeline.highlighted is None


def test_an_empty_question_gets_a_message_not_a_task(qtbot, window):
    assert window.ask_panel.ask("   ") is None
    message = window.ask_panel.findChild(QLabel, "ask-message")
    assert message.isVisibleTo(window) and "Type a question" in message.text()
    assert window.runner.tasks == []


def test_unreadable_paths_are_reported_with_the_reason(qtbot, window, tmp_path):
    assert window.import_paths([tmp_path / "missing.mp4"]) is None
    assert window.activity_model.problems == [(str(tmp_path / "missing.mp4"), "no such file or folder")]
    assert window.runner.tasks == []


def test_closing_the_window_ends_workers_without_waiting(qtbot, window):
    from tests.gui import task_ops

    task = window.runner.run(task_ops.sleep, 60, label="sleep")
    qtbot.wait(300)
    window.close()
    assert task.state == "cancelled"
    qtbot.waitUntil(lambda: not task.process.is_alive(), timeout=2000)


def test_layout_and_question_history_are_remembered_per_library(qtbot, window, video_library):
    from egodesk.gui.main_window import MainWindow

    window.docks["memory"].hide()
    window.ask_panel.present(answer_about(walk_footage(window), [(1.0, 2.0)]))
    window.close()
    again = MainWindow(video_library)
    qtbot.addWidget(again)
    again.show()
    assert again.docks["memory"].isHidden() and not again.docks["library"].isHidden()
    assert [e["q"] for e in again.ask_panel.history_entries()] == ["where did I walk?"]
    again.close()


def test_keyboard_drives_the_player(qtbot, window):
    window.view.open_footage(walk_footage(window).id, at=5.0)
    player = window.player
    qtbot.waitUntil(lambda: player.loaded and player.frame_time is not None, timeout=WAIT_MS)
    window.timeline.setFocus()
    shown = player.frame_time
    qtbot.keyClick(window, Qt.Key.Key_Period)
    qtbot.waitUntil(lambda: player.frame_time > shown + 0.02, timeout=WAIT_MS)
    qtbot.keyClick(window, Qt.Key.Key_Left)
    qtbot.waitUntil(lambda: player.position() < 1.0, timeout=WAIT_MS)
    qtbot.keyClick(window, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: player.media.playbackState() == player.media.PlaybackState.PlayingState, timeout=WAIT_MS)
    window.ask_panel.question.setFocus()
    qtbot.keyClicks(window.ask_panel.question, "a b")  # typing keeps its space: the line edit wins
    assert window.ask_panel.question.text() == "a b"
    player.media.pause()  # nothing plays on while pytest reports and the next test starts


def test_dropping_files_on_the_window_imports_them(qtbot, window, tmp_path, monkeypatch):
    from PySide6.QtCore import QMimeData, QUrl
    from PySide6.QtGui import QDropEvent

    asked = []
    monkeypatch.setattr(window, "import_paths", lambda paths: asked.append(paths))
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(tmp_path))])
    event = QDropEvent(
        QPointF(100, 100), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    window.dropEvent(event)
    assert asked == [[tmp_path]]


def test_the_import_choosers_import_what_is_chosen_and_nothing_when_closed(qtbot, window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    chosen = {"files": [str(tmp_path / "a.mp4"), str(tmp_path / "b.mp4")], "folder": str(tmp_path / "gone")}
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a: (chosen["files"], ""))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a: chosen["folder"])
    window.library_panel.import_files_requested.emit()  # missing files: reported, no import started
    window.library_panel.import_folder_requested.emit()
    assert [p for p, _ in window.activity_model.problems] == [*chosen["files"], chosen["folder"]]
    dialog = window.open_import_dialog()  # the dialog's choosers are the same: they fill its list
    dialog.choose_files()
    dialog.choose_folder()
    assert [str(p) for p in dialog.chosen()] == [*chosen["files"], chosen["folder"]]
    chosen.update(files=[], folder="")  # a chooser closed: nothing asked
    window.library_panel.import_files_requested.emit()
    window.library_panel.import_folder_requested.emit()
    dialog.choose_folder()
    assert len(window.activity_model.problems) == 3 and len(dialog.chosen()) == 3
    assert window.runner.tasks == []
    dialog.close()


def test_forgetting_a_footage_removes_it_from_the_window(qtbot, window):
    footage = walk_footage(window)
    window.view.open_footage(footage.id)
    task = window.forget(footage.id, confirm=False)
    with qtbot.waitSignal(task.finished, timeout=WAIT_MS):
        pass
    assert task.state == "done", task.error
    qtbot.waitUntil(lambda: window.view.footage == {})  # the window reads the library again, off its thread
    assert window.view.current is None
    assert window.library.footage() == []
    assert window.library_panel.tree.topLevelItem(0).text(0).startswith("Nothing here yet")


def test_a_folder_with_broken_files_reports_each_with_its_reason(qtbot, library, tmp_path):
    from egodesk.gui.main_window import MainWindow

    window = MainWindow(Library(library))
    qtbot.addWidget(window)
    folder = tmp_path / "day"
    folder.mkdir()
    (folder / "broken.mp4").write_bytes(b"not a video at all")
    (folder / "notes.jsonl").write_text(
        '{"id": "1", "source": "kitchen", "start": "2025-03-14T09:30:00", "end": "2025-03-14T09:30:10", '
        '"kind": "narration", "text": "I take the kettle."}\n{broken line\n',
        encoding="utf-8",
    )
    task = window.import_paths([folder])
    problems = {}
    task.partial.connect(lambda _r: problems.update(window.activity_model.problems))
    with qtbot.waitSignal(task.finished, timeout=120_000):
        pass
    assert task.state == "done", task.error
    paths = [p for p, _ in window.activity_model.problems]
    assert str(folder / "broken.mp4") in paths and problems  # reported when registered, before indexing
    assert any(p.endswith("notes.jsonl:2") for p in paths), window.activity_model.problems  # the bad line, by number
    assert "kitchen" in {f.title for f in window.library.footage()}  # the good line was imported
    assert window.runner.tasks == []
    window.close()
