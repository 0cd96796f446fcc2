"""Start the desktop app: QApplication + qasync event loop + the main window."""

from __future__ import annotations

import os
import sys


def run_app(argv: list[str] | None = None) -> int:
    os.environ.setdefault("QT_API", "pyside6")
    import asyncio

    import qasync
    from PySide6.QtWidgets import QApplication

    from egodesk.gui.main_window import MainWindow

    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    app.setApplicationName("egodesk")
    app.setOrganizationName("egodesk")
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    window = MainWindow()
    window.show()
    with loop:
        closed = asyncio.Event()
        app.aboutToQuit.connect(closed.set)
        loop.run_until_complete(closed.wait())
    return 0
