"""Kept moments in the window: the Starred list, and the one set of actions (star, note, export) that every
view offering a moment puts in its menu: an evidence chip, a clip on the timeline, a search hit, a row of
the list itself.

Each view only says which action on which moment (`KEEP_ACTIONS`, through its `keep_requested` signal);
`Keeping` asks what it must (a note's text, a file name), runs the change as a task (`ops.keep`,
`ops.export`: a write never runs on the GUI thread) and tells the window how it went. The list reads the
library again when a task says the kept moments changed (`ops.KEPT`), so no caller refreshes it by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QPoint, Qt, Signal
from PySide6.QtWidgets import QFileDialog, QInputDialog, QLabel, QListWidget, QListWidgetItem, QMenu, QVBoxLayout, QWidget

from egodesk.gui import ops
from egodesk.gui.formatting import elide, fmt_clock, fmt_duration
from egodesk.gui.tasks import Task, TaskRunner

# action -> its menu text; every view's menu offers these, in this order
KEEP_ACTIONS = {"star": "★ Star this moment", "note": "Add a note…", "export": "Export as MP4…"}
INSTANT_S = 5.0  # a moment named by one instant (a search hit on a keyframe) is kept this long


def add_keep_actions(menu: QMenu, request: Callable[[str], None]) -> None:
    """Put the keep actions in a view's menu; `request(action)` says which was chosen."""
    for action, text in KEEP_ACTIONS.items():
        menu.addAction(text, lambda a=action: request(a))


class Keeping(QObject):
    """Runs the keep actions for every view of one window."""

    message = Signal(str)  # how it went, for the status bar

    def __init__(self, runner: TaskRunner, root: str, footage: Callable[[], dict[int, Any]], parent: QWidget):
        """`footage()` is the window's footage by id (title, start, duration)."""
        super().__init__(parent)
        self.runner, self.root, self.footage, self.widget = runner, root, footage, parent

    def request(self, action: str, footage_id: int, start: float, end: float) -> Task | None:
        """A view asked for `action` on a moment (wall-clock span); a dialog asks for what it needs."""
        start, end = self._span(footage_id, start, end)
        if action == "star":
            return self.star(footage_id, start, end)
        if action == "note":
            text, ok = QInputDialog.getMultiLineText(
                self.widget, "Add a note", f"A note on {self._what(footage_id, start, end)}:"
            )
            return self.add_note(footage_id, start, end, text) if ok else None
        if action == "export":
            out, _ = QFileDialog.getSaveFileName(
                self.widget, "Export as MP4", str(Path.home() / self._file_name(footage_id, start)), "MP4 video (*.mp4)"
            )
            return self.export(footage_id, start, end, out) if out else None
        raise ValueError(f"not a keep action: {action}")

    def _span(self, footage_id: int, start: float, end: float) -> tuple[float, float]:
        """The moment as the view named it; an instant becomes INSTANT_S, within its footage where it is known."""
        end = end if end > start else start + INSTANT_S
        footage = self.footage().get(footage_id)
        return (start, min(end, footage.start + footage.duration)) if footage is not None else (start, end)

    def _what(self, footage_id: int, start: float, end: float) -> str:
        footage = self.footage().get(footage_id)
        title = f" of “{footage.title}”" if footage is not None else ""
        return f"the moment {fmt_clock(start)} ({fmt_duration(end - start)}){title}"

    def _file_name(self, footage_id: int, start: float) -> str:
        footage = self.footage().get(footage_id)
        stem = Path(footage.title).stem if footage is not None else f"footage-{footage_id}"
        return f"{stem}-{fmt_clock(start).replace(':', '-')}.mp4"

    def _run(self, op, *args: Any, label: str, done: str, failed: str) -> Task:
        return self.runner.run(
            op,
            self.root,
            *args,
            label=label,
            on_success=lambda _r: self.message.emit(done),
            on_failure=lambda m: self.message.emit(f"{failed}: {m}"),
        )

    def star(self, footage_id: int, start: float, end: float) -> Task:
        what = self._what(footage_id, start, end)
        return self._run(ops.keep, "star", footage_id, start, end, label="Star", done=f"Starred {what}.", failed="Not starred")

    def unstar(self, star_id: int) -> Task:
        return self._run(ops.keep, "unstar", star_id, label="Unstar", done="Star removed.", failed="Star not removed")

    def add_note(self, footage_id: int, start: float, end: float, text: str) -> Task:
        what = self._what(footage_id, start, end)
        return self._run(
            ops.keep, "add_note", footage_id, start, end, text, label="Note", done=f"Note kept on {what}.", failed="Note not kept"
        )

    def edit_note(self, note_id: int, text: str) -> Task:
        return self._run(ops.keep, "edit_note", note_id, text, label="Note", done="Note changed.", failed="Note not changed")

    def edit(self, note: Any) -> Task | None:
        """Ask for a note's new text (`note` a KeptMoment), then change it."""
        text, ok = QInputDialog.getMultiLineText(self.widget, "Edit note", "The note:", note.text)
        return self.edit_note(note.id, text) if ok else None

    def delete_note(self, note_id: int) -> Task:
        return self._run(ops.keep, "delete_note", note_id, label="Note", done="Note deleted.", failed="Note not deleted")

    def export(self, footage_id: int, start: float, end: float, out: str) -> Task:
        what = self._what(footage_id, start, end)
        return self.runner.run(
            ops.export,
            self.root,
            footage_id,
            start,
            end,
            out,
            label="Export",
            on_success=lambda r: self.message.emit(
                f"Exported {what} to {r.path} ({'stream copy' if r.copied else 're-encoded'}, {r.subtitles} subtitle lines)."
            ),
            on_failure=lambda m: self.message.emit(f"Not exported: {m}"),
        )


class KeptPanel(QWidget):
    """The Starred list: every starred moment and note in time order; a click plays the moment, the
    right button offers what can be done with it."""

    picked = Signal(object)  # KeptMoment
    keep_requested = Signal(str, object, float, float)  # action, footage id, start, end
    unstar_requested = Signal(int)
    edit_requested = Signal(object)  # KeptMoment (a note)
    delete_requested = Signal(int)  # a note's id

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("kept-panel")
        self.kept: list[Any] = []
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.list = QListWidget(self)
        self.list.setObjectName("kept-list")
        self.list.setWordWrap(True)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.itemClicked.connect(lambda item: self.picked.emit(self.kept[self.list.row(item)]))
        self.list.customContextMenuRequested.connect(self._menu)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.status)
        layout.addWidget(self.list, 1)
        self.set_kept([])

    def set_kept(self, kept: list[Any]) -> None:
        self.kept = kept
        self.list.clear()
        for k in kept:
            mark = "★" if k.kind == "star" else "✎"
            head = f"{mark} {fmt_clock(k.start)} · {fmt_duration(k.end - k.start)} · {k.title}"
            item = QListWidgetItem(f"{head}\n{elide(k.text, 200)}" if k.text else head)
            item.setToolTip(k.text or "Click to play this moment; right-click for more.")
            self.list.addItem(item)
        stars = sum(1 for k in kept if k.kind == "star")
        self.status.setText(
            f"{stars} starred, {len(kept) - stars} notes"
            if kept
            else "Nothing starred yet: right-click an answer's moment, a clip on the timeline or a search hit to star it."
        )

    def _menu(self, pos: QPoint) -> None:
        item = self.list.itemAt(pos)
        if item is None:
            return
        k = self.kept[self.list.row(item)]
        menu = QMenu(self)
        if k.kind == "star":
            menu.addAction("Unstar", lambda: self.unstar_requested.emit(k.id))
            menu.addAction(KEEP_ACTIONS["note"], lambda: self.keep_requested.emit("note", k.footage_id, k.start, k.end))
        else:
            menu.addAction("Edit note…", lambda: self.edit_requested.emit(k))
            menu.addAction("Delete note", lambda: self.delete_requested.emit(k.id))
            menu.addAction(KEEP_ACTIONS["star"], lambda: self.keep_requested.emit("star", k.footage_id, k.start, k.end))
        menu.addAction(KEEP_ACTIONS["export"], lambda: self.keep_requested.emit("export", k.footage_id, k.start, k.end))
        menu.exec(self.list.viewport().mapToGlobal(pos))
