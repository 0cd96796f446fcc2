import sys

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLineEdit

from egodesk.core.paths import chosen_data_folder
from egodesk.gui import app
from egodesk.gui.app import apply_style, open_window
from egodesk.gui.main_window import MainWindow
from egodesk.pipeline.library import Library


@pytest.fixture(autouse=True)
def app_state(monkeypatch):
    """open_window installs the app's exception hook and keeps its windows: both undone after a test."""
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    yield
    app.open_windows.clear()


def test_main_window_opens_on_an_empty_library(qtbot, library, qapp):
    apply_style(qapp)
    assert 'QFrame[chip="true"]' in qapp.styleSheet()
    window = MainWindow()  # the library EGODESK_HOME names
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: window.reads.idle)
    assert "egodesk" in window.windowTitle()
    assert window.library.paths.root == library.resolve()
    assert window.library_panel.tree.topLevelItem(0).text(0).startswith("Nothing here yet")
    assert window.activity.status.text() == "No import running."
    player = window.player  # its video surface was made at start, under the placeholder
    qtbot.waitUntil(lambda: player.stack.currentWidget() is player.placeholder)
    window.close()
    qapp.setStyleSheet("")


def test_choosing_another_data_folder_opens_that_library_and_keeps_the_old_one(qtbot, library, qapp, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    old = open_window(Library(library))
    qtbot.waitExposed(old)
    dialog = old.open_settings()
    folder = dialog.findChild(QLineEdit, "setting-data_folder")
    assert folder.text() == str(library.resolve())
    folder.setText(str(tmp_path / "second library"))
    with qtbot.waitSignal(old.library_switch_requested, timeout=5000) as switched:
        qtbot.mouseClick(dialog.buttons.button(dialog.buttons.StandardButton.Ok), Qt.MouseButton.LeftButton)
    new_root = (tmp_path / "second library").resolve()
    assert switched.args == [new_root]
    assert chosen_data_folder() == new_root  # the next start opens it too
    (window,) = [w for w in app.open_windows if w is not old]
    qtbot.addWidget(window)
    assert window.library.paths.root == new_root and window.isVisible() and not old.isVisible()
    assert (new_root / "library.sqlite").is_file() and (library / "library.sqlite").is_file()
    assert "second library" in window.windowTitle()
    window.close()


def test_a_file_is_no_data_folder(qtbot, library, tmp_path):
    window = open_window(Library(library))
    qtbot.addWidget(window)
    (tmp_path / "notes.txt").write_text("not a folder")
    dialog = window.open_settings()
    dialog.findChild(QLineEdit, "setting-data_folder").setText(str(tmp_path / "notes.txt"))
    assert dialog.findChild(QLabel, "error-data_folder").text() == "This is a file, not a folder."
    assert not dialog.buttons.button(dialog.buttons.StandardButton.Ok).isEnabled()
    dialog.findChild(QLineEdit, "setting-data_folder").setText("relative/path")
    assert "full path" in dialog.findChild(QLabel, "error-data_folder").text()
    dialog.reject()
    window.close()
