"""Closing footage while Qt's FFmpeg engine runs must not deadlock the window (egodesk.gui.media_calls).

The deadlock was a race (main thread in QMediaPlayer.stop() holding the GIL, the engine's audio thread
waiting for it): with the bindings' calls, a loop like the child below hung within 4, 8 and 18 cycles,
and this test (then 40 cycles) failed in 2 of 3 runs. The child is a process of its own so that a hang
fails this test by its timeout instead of stalling the suite."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from egodesk.gui import media_calls

REPO = Path(__file__).resolve().parents[2]
CYCLES = 60
WAIT_MS = 300


def test_the_teardown_calls_reach_qt_directly():
    assert media_calls._method(media_calls.STOP, 1) is not None
    assert media_calls._method(media_calls.SET_SOURCE, 2) is not None


def test_closing_footage_again_and_again_never_hangs(video_library):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    video_library.close()  # the child opens the library itself
    done = subprocess.run(
        [sys.executable, "-m", "tests.gui.open_close_cycles", str(video_library.paths.root), str(CYCLES), str(WAIT_MS)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"cycles {CYCLES}" in done.stdout
