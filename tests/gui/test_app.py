from egodesk.gui.app import apply_style
from egodesk.gui.main_window import MainWindow


def test_main_window_opens_on_an_empty_library(qtbot, library, qapp):
    apply_style(qapp)
    assert "QFrame[chip=\"true\"]" in qapp.styleSheet()
    window = MainWindow()  # the library EGODESK_HOME names
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert "egodesk" in window.windowTitle()
    assert window.library.paths.root == library.resolve()
    assert window.library_panel.tree.topLevelItem(0).text(0).startswith("Nothing here yet")
    assert window.activity.status.text() == "No import running."
    window.close()
    qapp.setStyleSheet("")
