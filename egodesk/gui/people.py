"""People in the window: the People panel lists every voice the library has heard (the wearer's, "me",
first), each with how many footage it is heard in, how long it speaks, and a few of its turns to listen
to; a person says which voice is theirs, names a voice once, merges two voices that are one person,
splits off a footage where a voice was someone else (right-click one of its turns), and forgets one.
The wearer the library found by itself is only a guess ("me?") until the person says so: only then do
that voice's lines say "me" (`memory.people` says why). Below the voices, the faces seen (`faces.FacesList`:
a picture of each, named, merged and forgotten the same way).

The panel only says what was asked (its signals); `PeopleActions` asks what it must (the name, which
voice to merge into, a confirmation before forgetting), runs the change as a task (`ops.people`: a write
never runs on the GUI thread) and tells the window how it went. The panel reads the library again when a
task says the voices changed (`ops.PEOPLE`), and a new name shows at once wherever lines are shown (the
memory panel, the timeline's speech lane, the evidence), since those read the line's speaker.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, QPoint, Qt, Signal
from PySide6.QtWidgets import (
    QInputDialog,
    QLabel,
    QMenu,
    QMessageBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from egodesk.gui import ops
from egodesk.gui.faces import FacesList, face_title
from egodesk.gui.formatting import fmt_clock, fmt_duration
from egodesk.gui.tasks import Task, TaskRunner
from egodesk.gui.widgets import add_merge_menu

VOICE_ROLE = Qt.ItemDataRole.UserRole  # a voice row: its id; a sample row: (footage id, start, end)


def voice_title(voice: Any) -> str:
    """How the panel names a voice: the wearer's is "me" ("me?" while it is the library's guess), with the
    name given, if any; another its label (the name given, else "Voice N")."""
    if not voice.me:
        return voice.label
    me = "me" if voice.me_said else "me?"
    return f"{voice.name} ({me})" if voice.name else me


class PeoplePanel(QWidget):
    play_requested = Signal(int, float, float)  # a sample to listen to: footage id, start, end (wall clock)
    name_requested = Signal(object)  # VoiceInfo
    claim_requested = Signal(object)  # VoiceInfo: "This is me"
    merge_requested = Signal(object, object)  # VoiceInfo kept, VoiceInfo merged into it
    split_requested = Signal(object, int)  # VoiceInfo, the footage where it was someone else
    forget_requested = Signal(object)  # VoiceInfo

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("people-panel")
        self.voices: list[Any] = []
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.tree = QTreeWidget(self)
        self.tree.setObjectName("people-list")
        self.tree.setHeaderLabels(["Voice", "Footage", "Speech"])
        self.tree.setRootIsDecorated(True)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._menu)
        self.tree.itemActivated.connect(self._activated)
        self.tree.itemClicked.connect(self._clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.faces_status = QLabel(self)
        self.faces_status.setWordWrap(True)
        self.faces = FacesList(self)
        layout.addWidget(self.status)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.faces_status)
        layout.addWidget(self.faces, 1)
        self.set_people([], {})

    def set_people(
        self,
        voices: list[Any],
        samples: dict[int, list[tuple[int, float, float]]],
        faces: list[Any] | None = None,
        pictures: dict[int, bytes] | None = None,
    ) -> None:
        """Show `voices` (`VoiceInfo`) with up to a few `samples` each (footage id, start, end), then the
        `faces` (`FaceInfo`) with their `pictures` (JPEG bytes by face id)."""
        faces = faces or []
        self.faces.set_faces(faces, pictures or {})
        named_faces = sum(1 for f in faces if f.name)
        self.faces_status.setText(
            f"{len(faces)} face{'s' if len(faces) != 1 else ''} seen, {named_faces} named: double-click one to name it."
            if faces
            else "No faces yet: they are looked for in each footage's keyframes and photos as they are indexed."
        )
        opened = {
            self.tree.topLevelItem(i).data(0, VOICE_ROLE)
            for i in range(self.tree.topLevelItemCount())
            if self.tree.topLevelItem(i).isExpanded()
        }  # a read after a change keeps open what the person opened
        self.voices = voices
        self.tree.clear()
        for voice in voices:
            row = QTreeWidgetItem([voice_title(voice), str(voice.footage), fmt_duration(voice.seconds)])
            row.setData(0, VOICE_ROLE, voice.id)
            row.setToolTip(0, "Double-click to name this voice; right-click to merge or forget it.")
            for footage_id, start, end in samples.get(voice.id, []):
                sample = QTreeWidgetItem([f"▶ {fmt_clock(start)} · {fmt_duration(end - start)}", "", ""])
                sample.setData(0, VOICE_ROLE, (footage_id, start, end))
                sample.setToolTip(0, "Click to listen")
                row.addChild(sample)
            self.tree.addTopLevelItem(row)
            for i in range(row.childCount()):
                row.child(i).setFirstColumnSpanned(True)  # a turn's time reads across the columns
            row.setExpanded(voice.id in opened)
        for column in range(3):
            self.tree.resizeColumnToContents(column)
        named = sum(1 for v in voices if v.name)
        guess = " Is “me?” your voice? Right-click it: This is me." if any(v.me and not v.me_said for v in voices) else ""
        self.status.setText(
            f"{len(voices)} voice{'s' if len(voices) != 1 else ''}, {named} named: double-click a voice to name it.{guess}"
            if voices
            else "No voices yet: they are found in each footage's speech as it is indexed."
        )

    def voice(self, voice_id: int) -> Any | None:
        return next((v for v in self.voices if v.id == voice_id), None)

    def _voice_of(self, item: QTreeWidgetItem | None) -> Any | None:
        data = item.data(0, VOICE_ROLE) if item is not None else None
        return self.voice(data) if isinstance(data, int) else None

    def _clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        data = item.data(0, VOICE_ROLE)
        if isinstance(data, (list, tuple)):  # Qt may hand a stored tuple back as a list
            footage_id, start, end = data
            self.play_requested.emit(int(footage_id), float(start), float(end))

    def _activated(self, item: QTreeWidgetItem, _column: int) -> None:
        voice = self._voice_of(item)
        if voice is not None:
            self.name_requested.emit(voice)

    def _menu(self, pos: QPoint) -> None:
        item = self.tree.itemAt(pos)
        if item is not None and item.parent() is not None:  # one of a voice's turns
            self._turn_menu(pos, item)
            return
        voice = self._voice_of(item)
        if voice is None:
            return
        menu = QMenu(self)
        if not voice.me_said:
            menu.addAction("This is me", lambda: self.claim_requested.emit(voice))
        menu.addAction("Name…", lambda: self.name_requested.emit(voice))
        add_merge_menu(menu, voice, self.voices, voice_title, self.merge_requested)
        menu.addSeparator()
        menu.addAction("Forget this voice…", lambda: self.forget_requested.emit(voice))
        menu.exec(self.tree.viewport().mapToGlobal(pos))

    def _turn_menu(self, pos: QPoint, item: QTreeWidgetItem) -> None:
        """A turn that is someone else: its footage is split off the voice (after listening to it)."""
        voice = self._voice_of(item.parent())
        if voice is None or voice.footage < 2:  # heard in one footage: nothing to split it from
            return
        footage_id = int(item.data(0, VOICE_ROLE)[0])
        menu = QMenu(self)
        menu.addAction(
            f"Not {voice_title(voice)} in this footage: a voice of its own", lambda: self.split_requested.emit(voice, footage_id)
        )
        menu.exec(self.tree.viewport().mapToGlobal(pos))


class PeopleActions(QObject):
    """Runs the People panel's changes for one window."""

    message = Signal(str)  # how it went, for the status bar

    def __init__(self, runner: TaskRunner, root: str, parent: QWidget):
        super().__init__(parent)
        self.runner, self.root, self.widget = runner, root, parent

    def ask_name(self, voice: Any) -> Task | None:
        name, ok = QInputDialog.getText(self.widget, "Name this voice", f"Who is {voice_title(voice)}?", text=voice.name or "")
        return self.name(voice, name) if ok and name.strip() else None

    def confirm_merge(self, into: Any, other: Any) -> Task | None:
        answer = QMessageBox.question(
            self.widget,
            "Merge voices",
            f"{voice_title(other)} and {voice_title(into)} are one person? {voice_title(other)}'s lines will be {voice_title(into)}'s.",
        )
        return self.merge(into, other) if answer == QMessageBox.StandardButton.Yes else None

    def confirm_forget(self, voice: Any) -> Task | None:
        answer = QMessageBox.question(
            self.widget,
            "Forget this voice",
            f"Forget {voice_title(voice)}'s voice print and name? Their words stay, as unnamed speech.",
        )
        return self.forget(voice) if answer == QMessageBox.StandardButton.Yes else None

    def claim(self, voice: Any) -> Task:
        return self._run(
            "claim_voice", voice.id, done=f"{voice_title(voice)} is your voice now: its lines say “me”.", failed="Not changed"
        )

    def name(self, voice: Any, name: str) -> Task:
        return self._run(
            "name_voice", voice.id, name.strip(), done=f"{voice_title(voice)} is {name.strip()} now.", failed="Not named"
        )

    def merge(self, into: Any, other: Any) -> Task:
        return self._run(
            "merge_voices", into.id, other.id, done=f"{voice_title(other)} merged into {voice_title(into)}.", failed="Not merged"
        )

    def split(self, voice: Any, footage_id: int) -> Task:
        return self._run(
            "split_voice",
            voice.id,
            footage_id,
            done=f"What {voice_title(voice)} was heard as in that footage is a voice of its own now: name it.",
            failed="Not split",
        )

    def said_by(self, line_id: int, voice_id: int | None, who: str) -> Task:
        """Who said one line (the Memory panel's "Said by…"): `voice_id`, or None for someone else."""
        return self._run("set_line_voice", line_id, voice_id, done=f"That line is said by {who} now.", failed="Not changed")

    def forget(self, voice: Any) -> Task:
        return self._run(
            "forget_voice", voice.id, done=f"{voice_title(voice)}'s voice print and name forgotten.", failed="Not forgotten"
        )

    def ask_face_name(self, face: Any) -> Task | None:
        name, ok = QInputDialog.getText(self.widget, "Name this face", f"Who is {face_title(face)}?", text=face.name or "")
        return (
            self._run("name_face", face.id, name.strip(), done=f"{face_title(face)} is {name.strip()} now.", failed="Not named")
            if ok and name.strip()
            else None
        )

    def confirm_face_merge(self, into: Any, other: Any) -> Task | None:
        answer = QMessageBox.question(self.widget, "Merge faces", f"{face_title(other)} and {face_title(into)} are one person?")
        if answer != QMessageBox.StandardButton.Yes:
            return None
        return self._run(
            "merge_faces", into.id, other.id, done=f"{face_title(other)} merged into {face_title(into)}.", failed="Not merged"
        )

    def confirm_face_forget(self, face: Any) -> Task | None:
        answer = QMessageBox.question(
            self.widget,
            "Forget this face",
            f"Forget {face_title(face)}'s face print and name? Where it was seen stays, as someone unnamed.",
        )
        if answer != QMessageBox.StandardButton.Yes:
            return None
        return self._run(
            "forget_face", face.id, done=f"{face_title(face)}'s face print and name forgotten.", failed="Not forgotten"
        )

    def _run(self, action: str, *args: Any, done: str, failed: str) -> Task:
        """The change as a task (the lines say it when it ends), then the memories that showed the old
        names as another, so the names show without waiting for them."""

        def changed(_result: Any) -> None:
            self.message.emit(done)
            self.runner.run(
                ops.refresh_memories,
                self.root,
                label="People",
                on_failure=lambda m: self.message.emit(f"The memories still show the old names: {m}"),
            )

        return self.runner.run(
            ops.people,
            self.root,
            action,
            *args,
            label="People",
            on_success=changed,
            on_failure=lambda m: self.message.emit(f"{failed}: {m}"),
        )
