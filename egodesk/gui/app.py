"""Start the desktop app: QApplication + qasync event loop + the main window."""

from __future__ import annotations

import logging
import os
import sys

from egodesk.core.paths import resources_dir

log = logging.getLogger(__name__)


def _qt_messages_to_log() -> None:
    """Qt's own warnings (a missing audio device, a codec without hardware decoding) go to the log file
    at debug level instead of the terminal."""
    from PySide6.QtCore import qInstallMessageHandler

    qt_log = logging.getLogger("qt")
    qInstallMessageHandler(lambda _mode, _context, message: qt_log.debug("%s", message))


def _report_unexpected(window) -> None:
    """An exception escaping a slot goes to the log and the status bar: never a traceback dialog, and
    the window keeps running."""

    def hook(kind, value, trace) -> None:
        log.error("unexpected error", exc_info=(kind, value, trace))
        window.statusBar().showMessage(f"Something went wrong ({kind.__name__}: {value}); see Help > Show logs.", 15000)

    sys.excepthook = hook


def apply_style(app) -> None:
    from PySide6.QtGui import QIcon

    style = resources_dir() / "style.qss"
    if style.is_file():
        app.setStyleSheet(style.read_text(encoding="utf-8"))
    icon = resources_dir() / "icons" / "egodesk.svg"
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))


open_windows: list = []  # the open main windows (Qt would delete an unreferenced one)


def open_window(library):
    """Show a main window on `library`; its data-folder choice swaps it for a window on that library."""
    from egodesk.gui.main_window import MainWindow

    window = MainWindow(library)
    _report_unexpected(window)
    window.library_switch_requested.connect(lambda root: switch_library(window, root))
    window.show()
    open_windows.append(window)
    return window


def switch_library(window, root) -> None:
    """Open the library at `root` in a new window, then close the old one (its library stays intact)."""
    from PySide6.QtWidgets import QMessageBox

    from egodesk.core.logging_setup import setup_logging
    from egodesk.core.paths import HOME_ENV
    from egodesk.core.settings import SettingsError
    from egodesk.pipeline.library import Library

    try:
        library = Library(root)
    except (SettingsError, OSError) as exc:
        QMessageBox.warning(window, "Data folder", f"The library in {root} cannot be opened:\n\n{exc}")
        return
    if HOME_ENV in os.environ:  # this process was started on a named library: it now means this one
        os.environ[HOME_ENV] = str(library.paths.root)
    setup_logging(library.paths)
    log.info("egodesk GUI switched to library %s", library.paths.root)
    open_window(library)
    window.close()
    open_windows.remove(window)
    window.library.close()
    window.deleteLater()


def start_window(files: list[str] | None = None):
    """Open the window the app starts with: on the library `start_library` picks (saying why when it is
    not the last one used), where that library was left, or showing the files given once imported into
    it. None when the library cannot be opened (the user was told)."""
    from PySide6.QtWidgets import QMessageBox

    from egodesk.core.appstate import start_library
    from egodesk.core.logging_setup import setup_logging
    from egodesk.core.settings import SettingsError
    from egodesk.pipeline.library import Library

    try:
        paths, note = start_library()
        library = Library(paths)
    except (SettingsError, OSError) as exc:
        QMessageBox.critical(None, "egodesk", f"The library cannot be opened:\n\n{exc}")
        return None
    setup_logging(library.paths)
    log.info("egodesk GUI starting on library %s", library.paths.root)
    window = open_window(library)
    if note:
        log.info("%s", note)
        window.statusBar().showMessage(note, 30000)
    if files:
        window.open_files(files)
    return window


def run_app(argv: list[str] | None = None, files: list[str] | None = None) -> int:
    """Run the app until its last window closes; `files` are imported and shown (`egodesk FILE...`)."""
    os.environ.setdefault("QT_API", "pyside6")
    os.environ.setdefault("QT_LOGGING_RULES", "qt.multimedia.ffmpeg*=false")  # no stream dumps on stderr
    import asyncio

    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    app.setApplicationName("egodesk")
    app.setOrganizationName("egodesk")
    apply_style(app)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    _qt_messages_to_log()
    if start_window(files) is None:
        loop.close()
        return 1
    with loop:
        closed = asyncio.Event()
        app.aboutToQuit.connect(closed.set)
        loop.run_until_complete(closed.wait())
    return 0
