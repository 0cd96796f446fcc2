"""Import and indexing activity: per footage and per stage progress with an ETA, per-file problems
with the reason, and cancel / resume. One model, shown both in the Activity dock and the import dialog."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionProgressBar,
    QStyleOptionViewItem,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from egodesk.core.types import Progress
from egodesk.gui.formatting import Eta, fmt_duration

PERCENT = Qt.ItemDataRole.UserRole + 1  # 0..100, or -1 when the total is not known yet
COLUMNS = ("What", "Progress", "ETA", "Status")
PROBLEMS = "Problems"


class ActivityModel(QStandardItemModel):
    """Rows: one per footage (children: its stages), one 'Import' row for events without a footage,
    and a 'Problems' row whose children are (path, reason)."""

    changed = Signal()

    def __init__(self, title_for: Callable[[int], str], parent=None):
        super().__init__(0, len(COLUMNS), parent)
        self.setHorizontalHeaderLabels(list(COLUMNS))
        self.title_for = title_for
        self._parents: dict[object, QStandardItem] = {}
        self._stages: dict[tuple[object, str], tuple[list[QStandardItem], Eta]] = {}
        self.problems: list[tuple[str, str]] = []

    def _parent_row(self, key: object, title: str) -> QStandardItem:
        if key not in self._parents:
            items = [QStandardItem(title)] + [QStandardItem("") for _ in COLUMNS[1:]]
            for item in items:
                item.setEditable(False)
            self.appendRow(items)
            self._parents[key] = items[0]
        return self._parents[key]

    def on_progress(self, event: Progress) -> None:
        key: object = event.footage_id if event.footage_id is not None else "import"
        title = self.title_for(event.footage_id) if event.footage_id is not None else "Import"
        parent = self._parent_row(key, title)
        if (key, event.stage) not in self._stages:
            items = [QStandardItem(event.stage)] + [QStandardItem("") for _ in COLUMNS[1:]]
            for item in items:
                item.setEditable(False)
            parent.appendRow(items)
            self._stages[(key, event.stage)] = (items, Eta())
        items, eta = self._stages[(key, event.stage)]
        failed = event.message.startswith("failed")
        if event.total > 0:
            eta.update(event.done, event.total)
            percent = int(100 * min(event.done, event.total) / event.total)
            left = eta.seconds_left()
            items[2].setText("" if left is None or percent >= 100 else fmt_duration(left))
        else:
            percent = 100 if event.message == "done" else -1
        items[1].setData(percent, PERCENT)
        items[1].setText(f"{event.done}/{event.total}" if event.total else "")
        items[3].setText(event.message)
        items[3].setForeground(QBrush(QColor("#d13438")) if failed else QBrush())
        self._summarise(parent, key)
        self.changed.emit()

    def _summarise(self, parent: QStandardItem, key: object) -> None:
        """A footage row shows how many of its stages are done and the stage now running."""
        stages = [(stage, items) for (k, stage), (items, _eta) in self._stages.items() if k == key]
        done = sum(1 for _s, items in stages if items[1].data(PERCENT) == 100)
        row = parent.row()
        self.item(row, 1).setData(int(100 * done / len(stages)) if stages else -1, PERCENT)
        self.item(row, 1).setText(f"{done}/{len(stages)} stages")
        current = next((s for s, items in reversed(stages) if items[1].data(PERCENT) != 100), None)
        self.item(row, 3).setText(f"{current}…" if current else "done")

    def stage_count(self) -> int:
        """How many (footage, stage) rows have reported progress."""
        return len(self._stages)

    def add_problems(self, problems: list[tuple[str, str]]) -> None:
        """Per-file errors, each with its reason (a broken file, a folder that cannot be read)."""
        if not problems:
            return
        parent = self._parent_row(PROBLEMS, PROBLEMS)
        for path, reason in problems:
            self.problems.append((path, reason))
            items = [QStandardItem(Path(path).name or path), QStandardItem(""), QStandardItem(""), QStandardItem(reason)]
            for item in items:
                item.setEditable(False)
                item.setToolTip(f"{path}\n{reason}")
            items[3].setForeground(QBrush(QColor("#d13438")))
            parent.appendRow(items)
        self.item(parent.row(), 3).setText(f"{len(self.problems)} file(s) not imported")
        self.changed.emit()

    def reset(self) -> None:
        self.removeRows(0, self.rowCount())
        self._parents.clear()
        self._stages.clear()
        self.problems = []
        self.changed.emit()


class ProgressDelegate(QStyledItemDelegate):
    """Draws the Progress column as a progress bar (a busy bar when the total is unknown)."""

    def paint(self, painter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        percent = index.data(PERCENT)
        if percent is None:
            super().paint(painter, option, index)
            return
        bar = QStyleOptionProgressBar()
        bar.rect = option.rect.adjusted(2, 3, -2, -3)
        bar.minimum, bar.maximum = 0, 100 if percent >= 0 else 0
        bar.progress = max(0, percent)
        bar.text = index.data(Qt.ItemDataRole.DisplayRole) or (f"{percent}%" if percent >= 0 else "")
        bar.textVisible = True
        bar.state = option.state
        QApplication.style().drawControl(QStyle.ControlElement.CE_ProgressBar, bar, painter)


class ActivityView(QWidget):
    cancel_requested = Signal()
    resume_requested = Signal()

    def __init__(self, model: ActivityModel, parent: QWidget | None = None):
        super().__init__(parent)
        self.model = model
        self.tree = QTreeView(self)
        self.tree.setObjectName("activity-tree")
        self.tree.setModel(model)
        self.tree.setItemDelegateForColumn(1, ProgressDelegate(self.tree))
        self.tree.header().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.tree.setColumnWidth(0, 260)
        self.tree.setColumnWidth(1, 150)
        self.tree.setColumnWidth(2, 60)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        model.rowsInserted.connect(lambda parent, *_: self.tree.expand(parent) if parent.isValid() else None)
        self.status = QLabel("No import running.", self)
        self.status.setObjectName("activity-status")
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setObjectName("activity-cancel")
        self.cancel_button.setToolTip("Stop indexing; finished stages are kept and Resume continues")
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.resume_button = QPushButton("Resume", self)
        self.resume_button.setObjectName("activity-resume")
        self.resume_button.setToolTip("Continue indexing footage left unfinished")
        self.resume_button.clicked.connect(self.resume_requested)
        clear = QPushButton("Clear", self)
        clear.clicked.connect(model.reset)
        row = QHBoxLayout()
        row.addWidget(self.status, 1)
        for button in (self.cancel_button, self.resume_button, clear):
            row.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.tree, 1)
        layout.addLayout(row)
        self.set_state(running=False, unfinished=0)

    def set_state(self, running: bool, unfinished: int, text: str | None = None) -> None:
        self.cancel_button.setEnabled(running)
        self.resume_button.setEnabled(not running and unfinished > 0)
        if text is None:
            text = (
                "Importing and indexing…"
                if running
                else f"{unfinished} footage not fully indexed: Resume continues where it stopped."
                if unfinished
                else "No import running."
            )
        self.status.setText(text)
