"""Help menu: the log viewer, the data folder, and About (versions and model licences)."""

from __future__ import annotations

import platform
import sqlite3
import sys
from importlib import metadata
from pathlib import Path

import PySide6
from PySide6.QtCore import Qt, QUrl, qVersion
from PySide6.QtGui import QDesktopServices, QFontDatabase
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from egodesk import __version__
from egodesk.core.manifest import load_manifest
from egodesk.core.paths import frozen_app_dir

LOG_TAIL_BYTES = 200_000
PACKAGES = ("llama-cpp-python", "faster-whisper", "onnxruntime", "hnswlib", "SQLAlchemy", "numpy", "qasync")


def open_folder(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))


class LogDialog(QDialog):
    """The end of the log file, newest last, with a button to open the log folder."""

    def __init__(self, log_file: Path, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("log-dialog")
        self.setWindowTitle(f"Log: {log_file}")
        self.resize(900, 560)
        text = QPlainTextEdit(self)
        text.setReadOnly(True)
        text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        text.setPlainText(self._tail(log_file))
        text.moveCursor(text.textCursor().MoveOperation.End)
        folder = QPushButton("Open log folder", self)
        folder.clicked.connect(lambda: open_folder(log_file.parent))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        buttons.addButton(folder, QDialogButtonBox.ButtonRole.ActionRole)
        layout = QVBoxLayout(self)
        layout.addWidget(text)
        layout.addWidget(buttons)

    @staticmethod
    def _tail(path: Path) -> str:
        try:
            with open(path, "rb") as handle:
                handle.seek(max(0, path.stat().st_size - LOG_TAIL_BYTES))
                return handle.read().decode("utf-8", "replace")
        except OSError as exc:
            return f"No log yet ({exc.strerror or exc})."


def versions() -> list[tuple[str, str]]:
    app = frozen_app_dir()
    where = f"installed app in {app}" if app else f"Python environment {sys.prefix}"
    rows = [
        ("egodesk", f"{__version__} ({where})"),
        ("Python", platform.python_version()),
        ("Qt", qVersion()),
        ("PySide6", PySide6.__version__),
        ("SQLite", sqlite3.sqlite_version),
    ]
    for name in PACKAGES:
        try:
            rows.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            rows.append((name, "not installed"))
    return rows


def about_html() -> str:
    version_rows = "".join(f"<tr><td>{name}</td><td>{value}</td></tr>" for name, value in versions())
    try:
        models = "".join(
            f"<tr><td>{spec.role}</td><td>{spec.upstream}</td><td>{spec.licence}</td></tr>" for spec in load_manifest().values()
        )
    except (OSError, KeyError, ValueError) as exc:
        models = f"<tr><td colspan=3>the model manifest cannot be read: {exc}</td></tr>"
    return (
        f"<h2>egodesk {__version__}</h2><p>Personal video memory: everything stays on this computer.</p>"
        f"<h3>Versions</h3><table cellspacing=4>{version_rows}</table>"
        f"<h3>Models and their licences</h3><table cellspacing=4>{models}</table>"
    )


class AboutDialog(QDialog):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("about-dialog")
        self.setWindowTitle("About egodesk")
        label = QLabel(about_html(), self)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok, self)
        buttons.accepted.connect(self.accept)
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addWidget(buttons)
