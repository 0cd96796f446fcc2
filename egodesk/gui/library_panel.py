"""The library panel: footage grouped by day, with duration (or "photo"), indexing state (searchable, and
whether its LLM-built memories are still building; "file missing" when its file is gone) and thumbnail.
Double-click opens a footage; the context menu forgets it or shows the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, QSize, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QIcon
from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QMenu, QPushButton, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from egodesk.gui.formatting import day_label, fmt_clock, fmt_duration, group_by_day
from egodesk.gui.widgets import thumbnail_pixmap

THUMB = QSize(64, 36)
STATE_TEXT = {"indexed": "indexed", "indexing": "indexing…", "pending": "waiting", "failed": "failed", "cancelled": "paused"}
# Once searchable, what is left is the LLM-built memories (records, atomic statements), which fill in later.
MEMORY_TEXT = {
    "indexing": "memories building…",
    "pending": "memories waiting",
    "failed": "memories failed",
    "cancelled": "memories paused",
}


def state_text(footage: Any) -> str:
    """'searchable · memories building…' once a search can find it, else its indexing state; 'file missing'
    before all when its file is gone (its memories stay: the tooltip has the rest)."""
    if footage.missing:
        return "file missing"
    if footage.searchable and footage.state in MEMORY_TEXT:
        return f"searchable · {MEMORY_TEXT[footage.state]}"
    stages = footage.stages or {}
    text = STATE_TEXT.get(footage.state, footage.state)
    if footage.state in ("indexing", "pending", "cancelled") and stages:
        done = sum(1 for s in stages.values() if s == "done")
        text += f" {done}/{len(stages)}"
    return text


def length_text(footage: Any) -> str:
    """A photo is a moment, not a length; a voice note says it is sound only."""
    if footage.kind == "photo":
        return "photo"
    return f"sound {fmt_duration(footage.duration)}" if footage.kind == "audio" else fmt_duration(footage.duration)


class LibraryPanel(QWidget):
    open_requested = Signal(int)  # footage id
    forget_requested = Signal(int)
    import_files_requested = Signal()
    import_folder_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("library-panel")
        self.tree = QTreeWidget(self)
        self.tree.setObjectName("library-tree")
        self.tree.setHeaderLabels(["Footage", "Start", "Length", "State"])
        self.tree.setIconSize(THUMB)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._menu)
        self.tree.itemActivated.connect(self._activated)
        self.tree.setUniformRowHeights(False)
        files = QPushButton("Import files…", self)
        files.clicked.connect(self.import_files_requested)
        folder = QPushButton("Import folder…", self)
        folder.clicked.connect(self.import_folder_requested)
        row = QHBoxLayout()
        row.addWidget(files)
        row.addWidget(folder)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.tree, 1)
        layout.addLayout(row)
        self.footage: dict[int, Any] = {}
        self.set_footage([])

    def set_footage(self, footage: list[Any]) -> None:
        """Rebuild the tree, keeping the selection and which days are expanded."""
        selected = self.selected_id()
        collapsed = {
            self.tree.topLevelItem(i).data(0, Qt.ItemDataRole.UserRole + 1)
            for i in range(self.tree.topLevelItemCount())
            if not self.tree.topLevelItem(i).isExpanded()
        }
        self.footage = {f.id: f for f in footage}
        self.tree.clear()
        if not footage:
            hint = QTreeWidgetItem(["Nothing here yet: import files or drop them on the window."])
            hint.setFlags(Qt.ItemFlag.NoItemFlags)
            self.tree.addTopLevelItem(hint)
            hint.setFirstColumnSpanned(True)
            return
        for day, items in group_by_day(footage):
            total = sum(f.duration for f in items)
            label = day_label(day)
            day_item = QTreeWidgetItem([f"{label} · {len(items)} file{'s' if len(items) > 1 else ''} · {fmt_duration(total)}"])
            day_item.setData(0, Qt.ItemDataRole.UserRole + 1, label)
            day_item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.tree.addTopLevelItem(day_item)
            day_item.setFirstColumnSpanned(True)
            for f in items:
                item = QTreeWidgetItem([f.title or Path(f.path).name, fmt_clock(f.start), length_text(f), state_text(f)])
                item.setData(0, Qt.ItemDataRole.UserRole, f.id)
                gone = "\nthe file is gone (moved, deleted, or on a card taken out); its memories are kept" if f.missing else ""
                item.setToolTip(0, f"{f.path}\n{f.kind}" + (f"\n{f.error}" if f.error else "") + gone)
                item.setToolTip(3, f.error or ", ".join(f"{k}: {v}" for k, v in (f.stages or {}).items()))
                pixmap = thumbnail_pixmap(f.thumbnail, THUMB.width(), THUMB.height())
                if pixmap is not None:
                    item.setIcon(0, QIcon(pixmap))
                if f.state == "failed" or f.missing:
                    item.setForeground(3, Qt.GlobalColor.red)
                day_item.addChild(item)
                if f.id == selected:
                    item.setSelected(True)
            day_item.setExpanded(label not in collapsed)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)

    def selected_id(self) -> int | None:
        items = self.tree.selectedItems()
        return items[0].data(0, Qt.ItemDataRole.UserRole) if items else None

    def item_for(self, footage_id: int) -> QTreeWidgetItem | None:
        for i in range(self.tree.topLevelItemCount()):
            day = self.tree.topLevelItem(i)
            for j in range(day.childCount()):
                if day.child(j).data(0, Qt.ItemDataRole.UserRole) == footage_id:
                    return day.child(j)
        return None

    def select(self, footage_id: int) -> None:
        item = self.item_for(footage_id)
        if item is not None:
            self.tree.setCurrentItem(item)

    def _activated(self, item: QTreeWidgetItem) -> None:
        footage_id = item.data(0, Qt.ItemDataRole.UserRole)
        if footage_id is not None:
            self.open_requested.emit(footage_id)

    def _menu(self, point: QPoint) -> None:
        item = self.tree.itemAt(point)
        footage_id = item.data(0, Qt.ItemDataRole.UserRole) if item else None
        menu = QMenu(self)
        if footage_id is not None:
            footage = self.footage[footage_id]
            menu.addAction("Open", lambda: self.open_requested.emit(footage_id))
            menu.addAction(
                "Show file in folder", lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(footage.path).parent)))
            )
            menu.addSeparator()
            menu.addAction("Forget this footage…", lambda: self.forget_requested.emit(footage_id))
        else:
            menu.addAction("Import files…", self.import_files_requested.emit)
            menu.addAction("Import folder…", self.import_folder_requested.emit)
        menu.exec(self.tree.viewport().mapToGlobal(point))
