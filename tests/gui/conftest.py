"""GUI fixtures: a real library holding the real walk video (registered, not yet indexed: fast), and
the real main window on it."""

from __future__ import annotations

import pytest

from tests.conftest import WALK_VIDEO


@pytest.fixture
def video_library(library):
    from egodesk.pipeline.library import Library

    lib = Library(library)
    report = lib.add([WALK_VIDEO])
    assert report.added and not report.errors
    yield lib
    lib.close()


@pytest.fixture
def window(qtbot, video_library):
    from egodesk.gui.main_window import MainWindow

    win = MainWindow(video_library)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.close()
