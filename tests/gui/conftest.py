"""GUI fixtures: a real library holding the real walk video (registered, not yet indexed: fast), and
the real main window on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import WALK_VIDEO

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items):
    """Every test under tests/gui carries the `gui` marker (`./test.sh -m "not gui"` runs the rest)."""
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.gui)


@pytest.fixture
def video_library(library):
    from egodesk.pipeline.library import Library

    lib = Library(library)
    report = lib.add([WALK_VIDEO])
    assert report.added and not report.errors
    yield lib
    lib.close()


def open_window(qtbot, library):
    """The real main window on `library`, shown (closed by the test's fixture, or with the qtbot)."""
    from egodesk.gui.main_window import MainWindow

    win = MainWindow(library)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    return win


@pytest.fixture
def spoken_window(qtbot, library, composite_clip):
    """The real main window on a library holding the composite clip (walk video + JFK's speech) indexed by
    every real stage: transcript lines, memories and the voice heard."""
    from egodesk.pipeline.library import Library

    lib = Library(library)
    assert lib.add([composite_clip]).added
    lib.process()
    win = open_window(qtbot, lib)
    qtbot.waitUntil(lambda: win.reads.idle and bool(win.view.footage))
    yield win
    win.close()
    lib.close()


@pytest.fixture
def window(qtbot, video_library):
    win = open_window(qtbot, video_library)
    qtbot.waitUntil(lambda: win.reads.idle)  # the footage list is read off the GUI thread
    yield win
    win.close()
