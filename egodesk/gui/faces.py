"""The faces the library has seen, as pictures in the People panel: each face's best sighting cut from its
footage (`Library.face_pictures`), its name or "Face N", and in how many footage it was seen. A person
names a face (double-click or its menu), merges two faces that are one person, or forgets one; the list
only says what was asked (its signals) and `PeopleActions` runs it, as for the voices.

The pictures come as JPEG bytes read off the GUI thread and are never written to disk, so a forgotten
face leaves no picture file behind.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPoint, QSize, Qt, Signal
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import QListView, QListWidget, QListWidgetItem, QMenu, QWidget

from egodesk.gui.widgets import add_merge_menu

FACE_ROLE = Qt.ItemDataRole.UserRole  # an item's face id
ICON_SIDE = 72


def face_title(face: Any) -> str:
    return face.label


class FacesList(QListWidget):
    name_requested = Signal(object)  # FaceInfo
    merge_requested = Signal(object, object)  # FaceInfo kept, FaceInfo merged into it
    forget_requested = Signal(object)  # FaceInfo

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("faces-list")
        self.faces: list[Any] = []
        self.setViewMode(QListView.ViewMode.IconMode)
        self.setIconSize(QSize(ICON_SIDE, ICON_SIDE))
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setMovement(QListView.Movement.Static)
        self.setWordWrap(True)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)
        self.itemActivated.connect(self._activated)

    def set_faces(self, faces: list[Any], pictures: dict[int, bytes]) -> None:
        """Show `faces` (`FaceInfo`), each with its picture when there is one (JPEG bytes by face id)."""
        self.faces = faces
        self.clear()
        for face in faces:
            item = QListWidgetItem(f"{face_title(face)}\n{face.footage} footage")
            item.setData(FACE_ROLE, face.id)
            item.setToolTip(f"Seen in {face.sightings} keyframes. Double-click to name; right-click to merge or forget.")
            pixmap = QPixmap()
            if face.id in pictures and pixmap.loadFromData(pictures[face.id], "JPG"):
                item.setIcon(QIcon(pixmap))
            self.addItem(item)

    def face(self, face_id: int) -> Any | None:
        return next((f for f in self.faces if f.id == face_id), None)

    def _face_of(self, item: QListWidgetItem | None) -> Any | None:
        return self.face(item.data(FACE_ROLE)) if item is not None else None

    def _activated(self, item: QListWidgetItem) -> None:
        face = self._face_of(item)
        if face is not None:
            self.name_requested.emit(face)

    def _menu(self, pos: QPoint) -> None:
        face = self._face_of(self.itemAt(pos))
        if face is None:
            return
        menu = QMenu(self)
        menu.addAction("Name…", lambda: self.name_requested.emit(face))
        add_merge_menu(menu, face, self.faces, face_title, self.merge_requested)
        menu.addSeparator()
        menu.addAction("Forget this face…", lambda: self.forget_requested.emit(face))
        menu.exec(self.viewport().mapToGlobal(pos))
