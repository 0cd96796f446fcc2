"""The faces in the People panel: each with its picture (a real face: skimage's astronaut portrait, NASA,
public domain, cut as `Library.face_pictures` cuts one), its name or "Face N" and its footage count; a
double-click asks to name it, its menu merges it into another face or forgets it; the panel says how many
faces are seen and named. The change itself runs through `ops.people`, which accepts the face actions."""

from __future__ import annotations

import cv2
import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication

from egodesk.gui import ops
from egodesk.gui.people import PeoplePanel
from egodesk.media.crops import square_crop_jpeg
from egodesk.memory.faces import FaceInfo
from tests.gui.test_kept import choose, right_click
from tests.gui.test_window import WAIT_MS


@pytest.fixture
def panel(qtbot):
    from skimage import data

    her = cv2.cvtColor(data.astronaut(), cv2.COLOR_RGB2BGR)
    picture = square_crop_jpeg(her, (179, 83, 266, 170))
    panel = PeoplePanel()
    qtbot.addWidget(panel)
    faces = [FaceInfo(3, "Ana", "Ana", 2, 7), FaceInfo(5, None, "Face 5", 1, 1)]
    panel.set_people([], {}, faces, {3: picture})
    panel.resize(400, 600)
    panel.show()
    QApplication.processEvents()
    return panel


def test_faces_are_shown_with_their_picture_name_and_footage(panel):
    listing = panel.faces
    assert listing.count() == 2
    first, second = listing.item(0), listing.item(1)
    assert first.text() == "Ana\n2 footage" and second.text() == "Face 5\n1 footage"
    assert not first.icon().isNull() and second.icon().isNull()  # the second has no picture: its footage is gone
    assert panel.faces_status.text().startswith("2 faces seen, 1 named")


def test_a_face_is_named_merged_and_forgotten_from_the_list(qtbot, panel):
    listing = panel.faces
    asked: list = []
    listing.name_requested.connect(lambda f: asked.append(("name", f.id)))
    listing.merge_requested.connect(lambda into, other: asked.append(("merge", into.id, other.id)))
    listing.forget_requested.connect(lambda f: asked.append(("forget", f.id)))
    second = listing.visualItemRect(listing.item(1)).center()
    qtbot.mouseClick(listing.viewport(), Qt.MouseButton.LeftButton, pos=second)  # a double-click's first press, then it
    qtbot.mouseDClick(listing.viewport(), Qt.MouseButton.LeftButton, pos=second)
    qtbot.waitUntil(lambda: bool(asked), timeout=WAIT_MS)
    choose("Forget this face…")
    right_click(listing.viewport(), second)
    qtbot.waitUntil(lambda: len(asked) == 2, timeout=WAIT_MS)
    assert asked == [("name", 5), ("forget", 5)]
    menu_texts: list = []

    def look() -> None:
        menu = QApplication.activePopupWidget()
        if menu is None:
            QTimer.singleShot(20, look)
            return
        menu_texts.extend(a.text() for a in menu.actions())
        [merge] = [a for a in menu.actions() if a.menu() is not None]
        [into] = merge.menu().actions()
        menu.close()
        into.trigger()

    QTimer.singleShot(0, look)
    right_click(listing.viewport(), second)
    qtbot.waitUntil(lambda: len(asked) == 3, timeout=WAIT_MS)
    assert "Merge Face 5 into" in menu_texts and asked[-1] == ("merge", 3, 5)


def test_the_people_op_takes_the_face_changes_and_nothing_else(tmp_path):
    from egodesk.memory.people import PeopleError

    assert ops.FACE_ACTIONS == ("name_face", "merge_faces", "forget_face")
    with pytest.raises(ValueError, match="not a change to the voices or faces"):
        ops.people(None, str(tmp_path / "lib"), "delete_everything")
    with pytest.raises(PeopleError, match="no face F9"):
        ops.people(None, str(tmp_path / "lib"), "forget_face", 9)


def test_in_the_window_a_photo_face_is_shown_named_and_forgotten(qtbot, library, tmp_path, monkeypatch):
    """The real window on a library holding the astronaut photo indexed by every real stage: the face is
    read into the People panel with its picture, named by double-click, and forgotten from its menu, each
    change run as a task in a worker process."""
    import numpy as np
    from PIL import Image
    from PySide6.QtWidgets import QInputDialog, QMessageBox
    from skimage import data

    from egodesk.pipeline.library import Library
    from tests.gui.conftest import open_window
    from tests.gui.test_people import TASK_MS

    photo = tmp_path / "IMG_0007.jpg"
    Image.fromarray(np.ascontiguousarray(data.astronaut())).save(photo, quality=90)
    lib = Library(library)
    lib.save_settings(lib.settings.model_copy(update={"threads": 1, "memory_records": False, "memory_atomic": False}))
    assert lib.add([photo]).added
    assert lib.process()["failed"] == 0
    window = open_window(qtbot, lib)
    try:
        window.docks["people"].raise_()
        listing = window.people_panel.faces
        qtbot.waitUntil(lambda: listing.count() == 1, timeout=WAIT_MS)
        assert not listing.item(0).icon().isNull()
        [face] = listing.faces
        at = listing.visualItemRect(listing.item(0)).center()
        monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("Eileen", True))
        qtbot.mouseClick(listing.viewport(), Qt.MouseButton.LeftButton, pos=at)
        qtbot.mouseDClick(listing.viewport(), Qt.MouseButton.LeftButton, pos=at)
        qtbot.waitUntil(lambda: bool(listing.faces) and listing.faces[0].name == "Eileen", timeout=TASK_MS)
        assert listing.item(0).text().startswith("Eileen") and lib.faces()[0].name == "Eileen"
        monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
        choose("Forget this face…")
        right_click(listing.viewport(), listing.visualItemRect(listing.item(0)).center())
        qtbot.waitUntil(lambda: listing.count() == 0, timeout=TASK_MS)
        assert lib.faces() == [] and face.id not in lib.face_pictures()
    finally:
        window.close()
        lib.close()
