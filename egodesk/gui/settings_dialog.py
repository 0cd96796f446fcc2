"""The settings dialog, generated from the typed Settings schema: one tab per group, one editor per field
(Literal -> combo box, bool -> check box, int/float with limits -> spin box, str -> line edit, a
browse button for paths, a list of folders -> a list with Add folder… and Remove). Every edit is
validated against the schema; errors show under the field.
Above the tabs, the data folder: where the library lives. It is not a library setting (the settings are
stored inside the library), so the dialog hands it back on its own for the window to switch to."""

from __future__ import annotations

import os
import typing
from pathlib import Path
from typing import Any

from annotated_types import Ge, Gt, Le, Lt
from pydantic import ValidationError
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from egodesk.core.paths import HOME_ENV
from egodesk.core.settings import ENV_PREFIX, Settings
from egodesk.gui.widgets import message_label, show_message
from egodesk.pipeline.watch import watched_with

SPIN_MAX = 1_000_000


def _limits(info) -> tuple[float | None, float | None]:
    low = high = None
    for item in info.metadata:
        if isinstance(item, Ge):
            low = item.ge
        elif isinstance(item, Gt):
            low = item.gt
        elif isinstance(item, Le):
            high = item.le
        elif isinstance(item, Lt):
            high = item.lt
    return low, high


class FolderList(QWidget):
    """A list of folders with Add folder… and Remove: the watched folders."""

    def __init__(self, title: str, parent: QWidget, on_change):
        super().__init__(parent)
        self.title = title
        self.list = QListWidget(self)
        self.list.setMinimumHeight(90)
        add = QPushButton("Add folder…", self)
        add.setObjectName("add-folder")
        add.clicked.connect(self._add)
        self.remove = QPushButton("Remove", self)
        self.remove.setObjectName("remove-folder")
        self.remove.clicked.connect(lambda: self.list.takeItem(self.list.currentRow()))
        self.list.model().rowsInserted.connect(on_change)
        self.list.model().rowsRemoved.connect(on_change)
        buttons = QVBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(self.remove)
        buttons.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)

    def _add(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, self.title)
        if folder:
            self.add_folder(folder)

    def add_folder(self, folder: str) -> None:
        if folder not in self.folders():
            self.list.addItem(folder)

    def folders(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def set_folders(self, folders: list[str]) -> None:
        self.list.clear()
        self.list.addItems(folders)


class FieldEditor:
    """One field's editor widget with a uniform get/set and a change callback."""

    def __init__(self, name: str, info, parent: QWidget, on_change, choices: list[str] | None = None):
        self.name, self.info = name, info
        annotation = info.annotation
        if typing.get_origin(annotation) is typing.Literal or choices:
            self.widget: Any = QComboBox(parent)
            for choice in choices or typing.get_args(annotation):
                self.widget.addItem(str(choice), choice)
            self.widget.currentIndexChanged.connect(on_change)
        elif annotation == list[str] and (info.json_schema_extra or {}).get("editor") == "lines":
            self.widget = QPlainTextEdit(parent)  # words, one a line: the vocabulary
            self.widget.setMinimumHeight(120)
            self.widget.setPlaceholderText("One name, place or word a line")
            self.widget.textChanged.connect(on_change)
        elif annotation == list[str]:  # folders
            self.widget = FolderList(info.title or name, parent, on_change)
        elif annotation is bool:
            self.widget = QCheckBox(parent)
            self.widget.toggled.connect(on_change)
        elif annotation in (int, float):
            low, high = _limits(info)
            self.widget = QSpinBox(parent) if annotation is int else QDoubleSpinBox(parent)
            if annotation is float:
                self.widget.setDecimals(3)
                self.widget.setStepType(QDoubleSpinBox.StepType.AdaptiveDecimalStepType)
            self.widget.setRange(low if low is not None else -SPIN_MAX, high if high is not None else SPIN_MAX)
            self.widget.valueChanged.connect(on_change)
        else:
            self.widget = QLineEdit(parent)
            self.widget.textChanged.connect(on_change)
        self.widget.setObjectName(f"setting-{name}")
        self.widget.setToolTip(info.description or "")

    def value(self) -> Any:
        if isinstance(self.widget, QComboBox):
            return self.widget.currentData()
        if isinstance(self.widget, QCheckBox):
            return self.widget.isChecked()
        if isinstance(self.widget, FolderList):
            return self.widget.folders()
        if isinstance(self.widget, QPlainTextEdit):
            return [line.strip() for line in self.widget.toPlainText().splitlines() if line.strip()]
        if isinstance(self.widget, (QSpinBox, QDoubleSpinBox)):
            return self.widget.value()
        return self.widget.text()

    def set_value(self, value: Any) -> None:
        if isinstance(self.widget, QComboBox):
            if self.widget.findData(value) < 0:  # a stored value the list does not know: keep it
                self.widget.addItem(str(value), value)
            self.widget.setCurrentIndex(self.widget.findData(value))
        elif isinstance(self.widget, QCheckBox):
            self.widget.setChecked(bool(value))
        elif isinstance(self.widget, FolderList):
            self.widget.set_folders(list(value))
        elif isinstance(self.widget, QPlainTextEdit):
            self.widget.setPlainText("\n".join(value))
        elif isinstance(self.widget, (QSpinBox, QDoubleSpinBox)):
            self.widget.setValue(value)
        else:
            self.widget.setText(str(value))


class SettingsDialog(QDialog):
    """`choices` turns a free-text field into a list (the retrieval strategies the code registers)."""

    def __init__(
        self,
        settings: Settings,
        parent: QWidget | None = None,
        choices: dict[str, list[str]] | None = None,
        data_folder: Path | None = None,
    ):
        super().__init__(parent)
        self.setObjectName("settings-dialog")
        self.setWindowTitle("Settings")
        self.resize(620, 520)
        self.original = settings
        self.result_settings: Settings | None = None
        self.data_folder = data_folder
        self.result_data_folder: Path | None = None  # set when the user chose another folder
        self.editors: dict[str, FieldEditor] = {}
        self.errors: dict[str, QLabel] = {}
        self._built = False  # no validating while the editors are filled in
        self.summary = message_label("settings-summary", self)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Cancel
            | QDialogButtonBox.StandardButton.RestoreDefaults,
            self,
        )
        self.tabs = QTabWidget(self)
        for group, names in Settings.groups().items():
            scroll = QScrollArea(self.tabs)
            scroll.setWidgetResizable(True)
            scroll.setFrameShape(QScrollArea.Shape.NoFrame)
            page = QWidget(scroll)
            form = QFormLayout(page)
            for name in names:
                info = Settings.model_fields[name]
                editor = FieldEditor(name, info, page, self._validate, (choices or {}).get(name))
                editor.set_value(getattr(settings, name))
                self.editors[name] = editor
                error = message_label(f"error-{name}", page)
                self.errors[name] = error
                field_box = QVBoxLayout()
                field_box.setSpacing(1)
                field_box.addLayout(self._with_browse(name, editor, page))
                field_box.addWidget(error)
                label = QLabel(info.title or name, page)
                label.setToolTip(info.description or "")
                if ENV_PREFIX + name.upper() in os.environ:
                    label.setText(label.text() + " *")
                    label.setToolTip(f"Overridden by the environment variable {ENV_PREFIX + name.upper()}")
                form.addRow(label, field_box)
            scroll.setWidget(page)
            self.tabs.addTab(scroll, group)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults).clicked.connect(self.restore_defaults)
        layout = QVBoxLayout(self)
        layout.addLayout(self._data_folder_row())
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.summary)
        layout.addWidget(self.buttons)
        self._built = True
        self._validate()

    def _data_folder_row(self) -> QFormLayout:
        self.data_folder_edit = QLineEdit(str(self.data_folder or ""), self)
        self.data_folder_edit.setObjectName("setting-data_folder")
        self.data_folder_edit.setToolTip(
            "The folder holding this library: database, indices, thumbnails, logs. "
            "Choosing another opens the library there (a new one if it is empty); "
            "the current one stays where it is."
        )
        self.data_folder_edit.textChanged.connect(self._validate)
        browse = QPushButton("Browse…", self)
        browse.setObjectName("browse-data_folder")
        browse.clicked.connect(self._browse_data_folder)
        row = QHBoxLayout()
        row.addWidget(self.data_folder_edit, 1)
        row.addWidget(browse)
        box = QVBoxLayout()
        box.setSpacing(1)
        box.addLayout(row)
        self.errors["data_folder"] = message_label("error-data_folder", self)
        box.addWidget(self.errors["data_folder"])
        label = QLabel("Data folder", self)
        if HOME_ENV in os.environ:
            label.setText("Data folder *")
            label.setToolTip(
                f"This session's library was given by --library or {HOME_ENV}: a folder chosen here opens now, "
                f"but later starts with --library or {HOME_ENV} still open theirs."
            )
        form = QFormLayout()
        form.addRow(label, box)
        return form

    def _browse_data_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Data folder", self.data_folder_edit.text())
        if folder:
            self.data_folder_edit.setText(folder)

    def chosen_folder(self) -> Path | None:
        """The data folder typed in, if it differs from the current one."""
        text = self.data_folder_edit.text().strip()
        if not text:
            return None
        folder = Path(text).expanduser()
        current = self.data_folder.resolve() if self.data_folder else None
        return None if current is not None and folder.resolve() == current else folder

    def _data_folder_error(self) -> str:
        text = self.data_folder_edit.text().strip()
        if not text:
            return "Choose a folder for the library."
        if not Path(text).expanduser().is_absolute():
            return "Give the full path of the folder."
        if Path(text).expanduser().exists() and not Path(text).expanduser().is_dir():
            return "This is a file, not a folder."
        return ""

    def _with_browse(self, name: str, editor: FieldEditor, page: QWidget) -> QHBoxLayout:
        row = QHBoxLayout()
        row.addWidget(editor.widget, 1)
        if name.endswith("_path"):
            browse = QPushButton("Browse…", page)
            browse.clicked.connect(lambda: self._browse(editor))
            row.addWidget(browse)
        return row

    def _browse(self, editor: FieldEditor) -> None:
        path, _ = QFileDialog.getOpenFileName(self, editor.info.title or editor.name, "", "GGUF models (*.gguf);;All files (*)")
        if path:
            editor.set_value(path)

    def values(self) -> dict[str, Any]:
        return {name: editor.value() for name, editor in self.editors.items()}

    def _validate(self, *_args) -> Settings | None:
        """Check the edited values against the schema; show each error under its field."""
        if not self._built:
            return None
        for label in self.errors.values():
            show_message(label, "")
        bad: set[str] = set()
        folder_error = self._data_folder_error()
        if folder_error:
            show_message(self.errors["data_folder"], folder_error, "error")
        try:
            settings = Settings.model_validate(self.values())
        except ValidationError as exc:
            for err in exc.errors():
                name = str(err["loc"][0]) if err["loc"] else ""
                if name in self.errors:
                    show_message(self.errors[name], err["msg"], "error")
                    bad.add(name)
            show_message(self.summary, f"{exc.error_count()} setting(s) need fixing before they can be saved.", "error")
            settings = None
        watch_error = self._watched_folder_error()
        if watch_error:
            show_message(self.errors["watched_folders"], watch_error, "error")
            bad.add("watched_folders")
        self._mark_tabs(bad)
        ok = settings is not None and not folder_error and not watch_error
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(ok)
        return settings if ok else None

    def _watched_folder_error(self) -> str:
        """A folder added to the watched ones must be one that can be watched (`watched_with` says why not);
        one watched before stays even while it is not there (a card taken out)."""
        if self.data_folder is None:  # no library to keep out of them
            return ""
        for folder in self.editors["watched_folders"].value():
            if folder in self.original.watched_folders:
                continue
            try:
                watched_with(self.original, self.data_folder, folder)
            except ValueError as exc:
                return str(exc)
        return ""

    def _mark_tabs(self, bad: set[str]) -> None:
        """A tab holding an invalid field says so, since its error is out of sight on another tab."""
        for index, (group, names) in enumerate(Settings.groups().items()):
            self.tabs.setTabText(index, f"⚠ {group}" if bad.intersection(names) else group)

    def restore_defaults(self) -> None:
        defaults = Settings()
        for name, editor in self.editors.items():
            editor.set_value(getattr(defaults, name))

    def accept(self) -> None:
        settings = self._validate()
        if settings is None:
            return
        self.result_settings = settings
        self.result_data_folder = self.chosen_folder()
        super().accept()
