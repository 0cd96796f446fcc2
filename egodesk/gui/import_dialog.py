"""The import dialog: choose files and folders, start, and watch them being indexed (the activity
model it shows is the window's, so closing the dialog loses nothing: work goes on in the background)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from egodesk.gui.activity import ActivityModel, ActivityView
from egodesk.media.probe import SUPPORTED_EXTENSIONS
from egodesk.pipeline.ingest import TEXT_SUFFIXES

# What a folder import takes, and text tracks; named by content, so "All files" may hold footage too.
VIDEO_FILTER = (
    "Videos, photos, voice notes and text tracks ("
    + " ".join(f"*{suffix}" for suffix in sorted(SUPPORTED_EXTENSIONS | TEXT_SUFFIXES))
    + ");;All files (*)"
)


def ask_files(parent: QWidget) -> list[Path]:
    """The files the user picks to import; none when the chooser is closed."""
    files, _ = QFileDialog.getOpenFileNames(parent, "Import files", "", VIDEO_FILTER)
    return [Path(f) for f in files]


def ask_folder(parent: QWidget) -> list[Path]:
    """The folder the user picks to import, in a list; none when the chooser is closed."""
    folder = QFileDialog.getExistingDirectory(parent, "Import a folder")
    return [Path(folder)] if folder else []


class ImportDialog(QDialog):
    def __init__(self, model: ActivityModel, start_import: Callable[[list[Path]], None], parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("import-dialog")
        self.setWindowTitle("Import footage")
        self.resize(760, 520)
        self.start_import = start_import
        self.paths = QListWidget(self)
        self.paths.setObjectName("import-paths")
        self.paths.setSelectionMode(QListWidget.SelectionMode.ExtendedSelection)
        add_files = QPushButton("Add files…", self)
        add_files.clicked.connect(self.choose_files)
        add_folder = QPushButton("Add folder…", self)
        add_folder.clicked.connect(self.choose_folder)
        remove = QPushButton("Remove", self)
        remove.clicked.connect(lambda: [self.paths.takeItem(self.paths.row(i)) for i in self.paths.selectedItems()])
        self.import_button = QPushButton("Import", self)
        self.import_button.setObjectName("import-start")
        self.import_button.setDefault(True)
        self.import_button.clicked.connect(self.start)
        self.activity = ActivityView(model, self)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        hint = QLabel(
            "Videos (a folder is searched for them), memory.jsonl text memories, SRT/VTT subtitles. "
            "Closing this window keeps importing in the background.",
            self,
        )
        hint.setWordWrap(True)

        row = QHBoxLayout()
        for button in (add_files, add_folder, remove):
            row.addWidget(button)
        row.addStretch(1)
        row.addWidget(self.import_button)
        layout = QVBoxLayout(self)
        layout.addWidget(hint)
        layout.addWidget(self.paths, 1)
        layout.addLayout(row)
        layout.addWidget(self.activity, 3)
        layout.addWidget(buttons)

    def add_paths(self, paths: list[Path]) -> None:
        have = {self.paths.item(i).text() for i in range(self.paths.count())}
        for path in paths:
            if str(path) not in have:
                self.paths.addItem(str(path))

    def chosen(self) -> list[Path]:
        return [Path(self.paths.item(i).text()) for i in range(self.paths.count())]

    def choose_files(self) -> None:
        self.add_paths(ask_files(self))

    def choose_folder(self) -> None:
        self.add_paths(ask_folder(self))

    def start(self) -> None:
        paths = self.chosen()
        if not paths:
            self.activity.status.setText("Add files or a folder first.")
            return
        self.paths.clear()
        self.start_import(paths)
