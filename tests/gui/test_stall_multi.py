"""The window never stutters on a library of several footage over two days: while another footage imports,
three questions are typed and asked in the ask panel, each answer's first cited moment is clicked (the
player jumps to it), a search is typed and a hit clicked; through all of it the event loop's longest
stall is printed against the goal of 50 ms on 2 cores (issue 51), and must stay under GUARD_MS. The
rule's reason: a window that freezes for longer is felt as a stutter, and every one of these steps is
the window's everyday use, not a one-off. The guard is not the goal: on a quiet 2-core machine the
longest stall measured 33-53 ms (docs/architecture.md), so a guard at the goal would fail one run in five
on the machine's noise; twice the goal still fails on the freezes this test was written to catch (the
0.2 s wait for a worker's exit, 134 ms; the 73 and 139 ms seen before)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QUrl
from pytestqt.exceptions import TimeoutError

from egodesk.gui.evidence import EvidenceChip
from egodesk.gui.main_window import MainWindow
from egodesk.gui.stall import StallMeter
from egodesk.pipeline.library import Library
from tests.conftest import JFK_AUDIO, REPO, WALK_VIDEO, ffmpeg

STALL_MS = 50  # the goal
GUARD_MS = 2 * STALL_MS  # what fails the test
WAIT_MS = 600_000
# Each is answered by the model, its words streaming in; the last names a thing nothing holds.
QUESTIONS = (
    "What did the speaker ask his fellow Americans?",
    "What did the speaker say about freedom?",
    "Where did I leave the blue umbrella?",
)
SEARCH = "country"


def footage(out: Path, when: str, speech: bool, flip: bool = False, loops: int = 0) -> Path:
    """The walk video (flipped: another picture) with the JFK speech or its own sound, recorded `when`
    (UTC, the container's creation time; the walk's own 2019 time is dropped); `loops` repeats it."""
    args = ["-stream_loop", str(loops), "-i", str(WALK_VIDEO)] if loops else ["-i", str(WALK_VIDEO)]
    if speech:
        args += ["-i", str(JFK_AUDIO), "-map", "0:v:0", "-map", "1:a:0", "-shortest"]
    else:
        args += ["-map", "0:v:0", "-map", "0:a:0"]
    video = ["-vf", "hflip", "-c:v", "libx264", "-preset", "ultrafast"] if flip else ["-c:v", "copy"]
    ffmpeg(*args, *video, "-c:a", "aac", "-map_metadata", "-1", "-metadata", f"creation_time={when}", str(out))
    return out


@pytest.fixture
def two_days(tmp_path, library, monkeypatch):
    """A library of three indexed footage over two days (indexed by `egodesk import --wait`, as a person
    would, in its own process), and a longer fourth footage of the second day to import from the window."""
    monkeypatch.setenv("EGODESK_LLM_MODEL", "llm-test")
    media = tmp_path / "media"
    media.mkdir()
    indexed = [
        footage(media / "morning.mp4", "2026-03-02T09:15:00Z", speech=True),
        footage(media / "afternoon.mp4", "2026-03-02T14:30:00Z", speech=False),
        footage(media / "next-day.mp4", "2026-03-03T10:00:00Z", speech=True, flip=True),
    ]
    env = {**os.environ, "EGODESK_HOME": str(library)}
    done = subprocess.run(
        [sys.executable, "-m", "egodesk", "import", "--wait", *map(str, indexed)],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    later = footage(media / "evening.mp4", "2026-03-03T18:00:00Z", speech=False, loops=8)  # about 90 s
    return library, later


@pytest.fixture
def multi_window(qtbot, two_days):
    root, later = two_days
    lib = Library(root)
    lib.reads_on_gui_thread = []
    for name in ("footage", "clips", "memory_at", "search"):  # what the window reads: each call notes its thread
        real = getattr(lib, name)

        def spy(*args, _real=real, _name=name, **kwargs):
            if threading.current_thread() is threading.main_thread():
                lib.reads_on_gui_thread.append(_name)
            return _real(*args, **kwargs)

        setattr(lib, name, spy)
    window = MainWindow(lib)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: window.reads.idle and len(window.view.footage) == 3, timeout=WAIT_MS)
    yield window, later
    window.close()
    lib.close()


def ask_and_jump(qtbot, window: MainWindow, question: str) -> str:
    """Type the question, press Enter, wait for the answer, click its first cited chip (the first chip
    when it cites none) and wait until the player shows that moment. Returns a line for the log."""
    panel = window.ask_panel
    answers = []
    panel.answer_ready.connect(answers.append)
    panel.question.clear()
    qtbot.keyClicks(panel.question, question)
    qtbot.keyClick(panel.question, Qt.Key.Key_Return)
    task = panel.task
    assert task is not None, panel.message.text()
    qtbot.waitUntil(lambda: bool(answers) or task.state not in ("pending", "running"), timeout=WAIT_MS)
    panel.answer_ready.disconnect(answers.append)
    assert answers, f"{question!r}: {task.state} {task.error} {panel.message.text()}"
    answer = answers[0]
    assert answer.evidence and len(panel.chips) == len(answer.evidence), question
    cited = [chip for chip in panel.chips if chip.property("cited")]
    chip = (cited or panel.chips)[0]
    assert isinstance(chip, EvidenceChip)
    evidence = chip.evidence
    qtbot.mouseClick(chip, Qt.MouseButton.LeftButton)
    footage = window.view.footage[evidence.footage_id]
    at, end = evidence.start - footage.start, evidence.end - footage.start
    player = window.player

    def landed() -> bool:  # the moment's file is loaded and plays inside the moment (it loops there)
        shown = player.shown_position()
        return player.loaded and player.path == Path(footage.path) and shown is not None and at - 0.5 <= shown <= end + 0.5

    try:
        qtbot.waitUntil(landed, timeout=30_000)
    except TimeoutError:
        pytest.fail(
            f"{question!r}: the player is at {player.path} {player.shown_position()}, not {footage.path} {at:.2f}-{end:.2f}"
        )
    assert window.timeline.highlighted == chip.index
    return f"{question!r} -> {answer.text[:60]!r}, {'cited' if cited else 'first'} chip #{chip.index + 1} at {at:.1f} s"


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the tiny model takes minutes for an answer on 2 busy cores
def test_no_stall_while_importing_asking_searching_and_jumping(qtbot, multi_window):
    window, later = multi_window
    meter = StallMeter(sample_ms=30).start()
    meter.phase = "import starts"
    task = window.import_paths([later])
    assert task is not None
    qtbot.waitUntil(lambda: len(window.view.footage) == 4, timeout=WAIT_MS)  # registered: listed while indexing
    lines = []
    for n, question in enumerate(QUESTIONS, start=1):
        meter.phase = f"question {n}"
        try:
            lines.append(ask_and_jump(qtbot, window, question))
        finally:
            print(f"{meter.phase}: {meter.report()}", flush=True)
    importing = window.import_task is not None

    meter.phase = "search"
    panel = window.search_panel
    qtbot.keyClicks(panel.field, SEARCH)
    qtbot.waitUntil(lambda: bool(panel.hits), timeout=WAIT_MS)
    hit = panel.hits[0]
    panel.results.anchorClicked.emit(QUrl("hit:0"))  # the list's link of the first hit
    player = window.player
    at = hit.start - window.view.footage[hit.footage_id].start
    qtbot.waitUntil(lambda: player.loaded and abs(player.position() - at) < 0.5, timeout=30_000)

    meter.phase = "import ends"
    qtbot.waitUntil(lambda: window.import_task is None, timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: window.reads.idle and all(f.state == "indexed" for f in window.view.footage.values()), timeout=WAIT_MS
    )
    stall_ms = meter.stop()
    days = {int(f.start // 86_400) for f in window.view.footage.values()}

    print("\n".join(lines))
    print(f"the import was still running after the third question: {importing}")
    print(meter.report() + f" (goal < {STALL_MS} ms)")
    for gap, phase, stack in sorted(meter.stalls, reverse=True)[:5]:  # where the GUI thread was in the worst
        print(f"--- {gap} ms in {phase}: {stack}")
    assert len(days) == 2 and len(window.view.footage) == 4
    assert window.library.reads_on_gui_thread == []
    assert stall_ms < GUARD_MS, meter.report() + "\n" + meter.worst_stack
