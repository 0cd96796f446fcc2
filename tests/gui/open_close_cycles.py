"""Child process for test_player_teardown: the real window on a library holding the real walk video
opens the footage (every other cycle playing it), lets the engine run a moment, closes it, and closes the
window, CYCLES times.

`python -m tests.gui.open_close_cycles LIBRARY CYCLES WAIT_MS`; prints "cycles N" when all are done."""

from __future__ import annotations

import sys
from pathlib import Path


def main(library: Path, cycles: int, wait_ms: int) -> None:
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from egodesk.gui.main_window import MainWindow
    from egodesk.pipeline.library import Library

    app = QApplication.instance() or QApplication([])

    def run_events(ms: int) -> None:
        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    lib = Library(library)
    for cycle in range(cycles):
        window = MainWindow(lib)
        window.show()
        while not window.view.footage:  # read off the GUI thread
            run_events(20)
        (footage,) = window.view.footage.values()
        window.view.open_footage(footage.id, play=cycle % 2 == 1)
        run_events(wait_ms)
        window.view.close_footage("closed")
        window.close()
        window.deleteLater()
        run_events(10)
    lib.close()
    app.processEvents()
    print(f"cycles {cycles}", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
