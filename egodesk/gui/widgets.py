"""Small generic widgets the views share."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import QLabel, QMenu, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from egodesk.core.paths import resources_dir


def icon(name: str) -> QIcon:
    """An icon from resources/icons (an empty icon when the file is missing)."""
    path = resources_dir() / "icons" / f"{name}.svg"
    return QIcon(str(path)) if path.is_file() else QIcon()


class Section(QWidget):
    """A titled, collapsible block: the retrieval inspector, the options, the history."""

    def __init__(self, title: str, content: QWidget, expanded: bool = False, parent: QWidget | None = None):
        super().__init__(parent)
        self.toggle = QToolButton(self)
        self.toggle.setObjectName("section-toggle")
        self.toggle.setText(title)
        self.toggle.setCheckable(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.toggle.toggled.connect(self.set_expanded)
        self.content = content
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.toggle)
        layout.addWidget(content)
        self.toggle.setChecked(expanded)
        self.set_expanded(expanded)

    def set_expanded(self, expanded: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        self.content.setVisible(expanded)
        if self.toggle.isChecked() != expanded:
            self.toggle.setChecked(expanded)

    @property
    def expanded(self) -> bool:
        return self.toggle.isChecked()


_PIXMAPS: dict[tuple[str, int, int], QPixmap] = {}


def thumbnail_pixmap(path: Path | None, width: int, height: int) -> QPixmap | None:
    """A cached, scaled thumbnail; None when there is none or it cannot be read."""
    if path is None:
        return None
    key = (str(path), width, height)
    if key not in _PIXMAPS:
        pixmap = QPixmap(str(path))
        if pixmap.isNull():
            return None
        _PIXMAPS[key] = pixmap.scaled(
            width, height, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
        )
    return _PIXMAPS[key]


def message_label(object_name: str, parent: QWidget | None = None) -> QLabel:
    """A word-wrapped label for inline messages; its `level` property (info/error) picks the style."""
    label = QLabel(parent)
    label.setObjectName(object_name)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.hide()
    return label


def show_message(label: QLabel, text: str, level: str = "info") -> None:
    label.setProperty("level", level)
    label.style().unpolish(label)
    label.style().polish(label)
    label.setText(text)
    label.setVisible(bool(text))


def add_merge_menu(menu: QMenu, item: Any, items: Sequence[Any], title: Callable[[Any], str], merge: SignalInstance) -> None:
    """A "Merge X into" submenu listing every other voice or face of `items` (each with an `id`); choosing
    one emits `merge(kept, item)`. None when `item` is the only one."""
    others = [other for other in items if other.id != item.id]
    if others:
        into = menu.addMenu(f"Merge {title(item)} into")
        for other in others:
            into.addAction(title(other), lambda o=other: merge.emit(o, item))
