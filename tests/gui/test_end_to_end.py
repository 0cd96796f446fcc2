"""The real window on a real, empty library, driven as a user would: import the composite clip through
the import dialog until it is indexed, ask a question and get evidence chips, click one and land inside
its range, cancel an ingest, all while the event loop keeps ticking and the window reads the library
only off its own thread."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from egodesk.gui.evidence import EvidenceChip, chip_name
from egodesk.gui.stall import StallMeter
from egodesk.pipeline.library import Library
from tests.conftest import ffmpeg
from tests.gui.conftest import open_window

INDEX_MS = 240_000
ANSWER_MS = 240_000


@pytest.fixture
def empty_window(qtbot, library, monkeypatch):
    monkeypatch.setenv("EGODESK_LLM_MODEL", "llm-test")  # a real but tiny LLM keeps the test short
    lib = Library(library)
    lib.reads_on_gui_thread = []
    for name in ("footage", "clips", "memory_at"):  # what the window reads: each call notes its thread
        real = getattr(lib, name)

        def spy(*args, _real=real, _name=name, **kwargs):
            if threading.current_thread() is threading.main_thread():
                lib.reads_on_gui_thread.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(lib, name, spy)
    win = open_window(qtbot, lib)
    yield win
    win.close()
    lib.close()


def test_import_ask_and_jump_to_the_evidence(qtbot, empty_window, composite_clip):
    window = empty_window
    meter = StallMeter().start()

    dialog = window.open_import_dialog()
    dialog.add_paths([composite_clip])
    dialog.start()
    # the window's own view of the library: polling the database from this thread would itself stall it
    qtbot.waitUntil(lambda: any(f.state == "indexed" for f in window.view.footage.values()), timeout=INDEX_MS)
    [footage] = window.view.footage.values()
    item = window.library_panel.item_for(footage.id)
    qtbot.waitUntil(lambda: "ndexed" in " ".join(item.text(i) for i in range(item.columnCount())), timeout=10_000)

    task = window.ask_panel.ask("What did the speaker ask his fellow Americans?")
    assert task is not None
    answers = []
    window.ask_panel.answer_ready.connect(answers.append)
    qtbot.waitUntil(lambda: bool(answers), timeout=ANSWER_MS)
    stall_ms = meter.stop()
    answer = answers[0]
    assert answer.evidence and window.ask_panel.chips
    assert answer.grounded or answer.abstained

    chip = window.ask_panel.findChild(EvidenceChip, chip_name(0))
    evidence = answer.evidence[0]
    qtbot.mouseClick(chip, Qt.MouseButton.LeftButton)
    player = window.player
    qtbot.waitUntil(lambda: player.loaded and player.frame_time is not None, timeout=20_000)
    start, end = evidence.start - footage.start, evidence.end - footage.start
    frame = 1 / player.fps
    assert start - frame <= player.position() <= end + frame
    assert window.timeline.highlighted == 0
    lane = window.timeline.lanes["Evidence"]
    assert any(abs(s.start - evidence.start) < 1e-6 for s in lane)
    qtbot.waitUntil(lambda: window.memory.key is not None, timeout=10_000)  # the moment's memories, read off-thread
    assert evidence.keyframe and Path(evidence.keyframe).is_file()  # the chip's image came with the answer
    assert window.library.reads_on_gui_thread == []
    print(f"longest event-loop stall during ingest + answer: {stall_ms} ms (goal < 50 ms)")
    # The goal is < 50 ms (25 ms on an idle machine with the library read off the GUI thread); the
    # bound here leaves room for a busier CI machine while still catching work that blocks the GUI
    # thread (seconds, not ms).
    assert stall_ms < 250


def test_cancel_an_ingest_from_the_window(qtbot, empty_window, composite_clip, tmp_path):
    window = empty_window
    longer = tmp_path / "DAY3_12000000_long.mp4"
    ffmpeg("-stream_loop", "5", "-i", str(composite_clip), "-t", "60", "-c", "copy", str(longer))
    task = window.import_paths([longer])
    assert task is not None
    qtbot.waitUntil(lambda: any(f.state == "indexing" for f in window.library.footage()), timeout=60_000)
    window.cancel_import()
    # The op stops at its next check (a clean return) or its process is ended after the grace period.
    qtbot.waitUntil(lambda: task.state in ("cancelled", "done"), timeout=10_000)
    qtbot.waitUntil(lambda: "indexing" not in {f.state for f in window.library.footage()}, timeout=5_000)
    assert {f.state for f in window.library.footage()} <= {"cancelled", "pending"}
    assert window.resume_import() is not None  # and it can be resumed
