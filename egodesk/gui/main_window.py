"""The main window."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QMainWindow

from egodesk import __version__


class MainWindow(QMainWindow):
    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle(f"egodesk {__version__}")
        self.resize(1280, 800)
        self.setCentralWidget(QLabel("Import footage to begin."))
