"""The memory browser: what egodesk remembers of the clip under the playhead (caption, transcript
lines, tags, on-screen text, interaction records, atomic statements). Click a transcript line to seek.

A misheard line is corrected in place: double-click it (or "Correct this line…" in its menu), type, Enter.
The browser only asks (`correct_requested`, `undo_requested`); the window runs the change as a task and
the panel is read again when it is stored. Ctrl+Z in the transcript takes back the latest correction made
here, and "Undo correction" in a line's menu that line's latest one.

A line given to the wrong voice is put right from its menu: "Said by…" lists the library's voices (as the
People panel names them, `set_voices`) and "Someone else" (the line then names nobody). The line shows
its new speaker at once; the browser asks (`said_requested`) and the window stores it as a task, after
which the stored line is read again."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QScrollArea,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from egodesk.gui.formatting import fmt_clock, fmt_duration
from egodesk.gui.people import voice_title

if TYPE_CHECKING:
    from egodesk.pipeline.library import MemoryView


START_ROLE = Qt.ItemDataRole.UserRole  # a transcript line's start (wall clock)
TEXT_ROLE = Qt.ItemDataRole.UserRole + 1  # its words alone, without the time and speaker shown before them
AT_ROLE = Qt.ItemDataRole.UserRole + 2  # its middle: the moment that names it to a correction
LINE_ROLE = Qt.ItemDataRole.UserRole + 3  # its row id: what "Said by…" names it by
CORRECT_ACTION, UNDO_ACTION = "Correct this line…", "Undo correction"
SAID_BY_MENU, SOMEONE_ELSE = "Said by…", "Someone else"


class _LineEditor(QStyledItemDelegate):
    """Edits a transcript line's words (not the time and speaker shown with them) and hands the new text to
    `commit(row, text)` instead of writing it into the list: the stored line is what the list shows."""

    def __init__(self, commit, parent: QWidget):
        super().__init__(parent)
        self.commit = commit

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QWidget:
        editor = QLineEdit(parent)
        editor.setObjectName("memory-line-editor")
        return editor

    def setEditorData(self, editor: QWidget, index: QModelIndex | QPersistentModelIndex) -> None:
        assert isinstance(editor, QLineEdit)
        editor.setText(index.data(TEXT_ROLE))

    def setModelData(self, editor: QWidget, model: QAbstractItemModel, index: QModelIndex | QPersistentModelIndex) -> None:
        assert isinstance(editor, QLineEdit)
        if editor.text().strip() != (index.data(TEXT_ROLE) or "").strip():
            self.commit(index.row(), editor.text())


class MemoryBrowser(QScrollArea):
    seek_requested = Signal(float)  # absolute ts
    correct_requested = Signal(int, float, str)  # footage id, a moment within the line (wall clock), the new text
    undo_requested = Signal(int, float)  # footage id, a moment within the line
    said_requested = Signal(int, object, str)  # line id, the voice id (None: someone else), how it is named

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("memory-browser")
        self.setWidgetResizable(True)
        body = QWidget(self)
        self.layout_ = QVBoxLayout(body)
        self.layout_.setContentsMargins(6, 6, 6, 6)
        self.header = QLabel("Play or open a footage to see what egodesk remembers of that moment.", body)
        self.header.setObjectName("memory-header")
        self.header.setWordWrap(True)
        self.layout_.addWidget(self.header)
        self.sections: dict[str, tuple[QLabel, QWidget]] = {}
        self.caption = self._add("Caption", self._label(body, Qt.TextFormat.PlainText))
        self.transcript = QListWidget(body)
        self.transcript.setObjectName("memory-transcript")
        self.transcript.setWordWrap(True)
        self.transcript.setMinimumHeight(60)
        self.transcript.itemClicked.connect(self._line_clicked)
        self.transcript.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.EditKeyPressed
        )
        self.transcript.setItemDelegate(_LineEditor(self._commit_line, self.transcript))
        self.transcript.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.transcript.customContextMenuRequested.connect(self._line_menu)
        undo = QShortcut(QKeySequence.StandardKey.Undo, self.transcript)
        undo.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        undo.activated.connect(self.undo_last)
        self.corrected: list[tuple[int, float]] = []  # the lines corrected here, latest last (Ctrl+Z's stack)
        self.voices: list[Any] = []  # the library's voices (`VoiceInfo`), offered by "Said by…"
        self._add("Transcript", self.transcript)
        self.tags = self._add("Tags", self._label(body, Qt.TextFormat.PlainText))
        self.ocr = self._add("On-screen text", self._label(body, Qt.TextFormat.PlainText))
        self.records = self._add("Interaction records", self._label(body, Qt.TextFormat.RichText))
        self.statements = self._add("Atomic statements", self._label(body, Qt.TextFormat.RichText))
        self.layout_.addStretch(1)
        self.setWidget(body)
        self.key: tuple | None = None
        self.show_memory(None)

    def _label(self, parent: QWidget, text_format: Qt.TextFormat) -> QLabel:
        label = QLabel(parent)
        label.setTextFormat(text_format)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    def _add(self, title: str, widget: QWidget) -> QWidget:
        heading = QLabel(title, widget.parentWidget())
        heading.setProperty("heading", True)
        self.layout_.addWidget(heading)
        self.layout_.addWidget(widget)
        self.sections[title] = (heading, widget)
        return widget

    def _show_section(self, title: str, visible: bool) -> None:
        for widget in self.sections[title]:
            widget.setVisible(visible)

    def show_memory(self, memory: MemoryView | None, key: tuple | None = None) -> None:
        """Show a `MemoryView` (None: nothing under the playhead). `key` names the clip shown, so the
        window can skip re-querying while the playhead stays inside it."""
        editing = key is not None and key == self.key and self.transcript.state() == QAbstractItemView.State.EditingState
        self.key = key
        if memory is None:
            self.transcript.clear()  # lines are edited in place: none may stay from a clip no longer shown
            for title in self.sections:
                self._show_section(title, False)
            return
        self.header.setText(
            f"<b>{fmt_clock(memory.start)}–{fmt_clock(memory.end)}</b> ({fmt_duration(memory.end - memory.start)})"
        )
        self.caption.setText(memory.caption)
        self._show_section("Caption", bool(memory.caption))
        if not editing:  # the same clip read again (an import's progress) while a line is corrected: the edit stays
            self._show_lines(memory)
        self._show_section("Transcript", self.transcript.count() > 0)
        self.tags.setText(", ".join(f"{label} ({score:.2f})" for label, score in memory.tags))
        self._show_section("Tags", bool(memory.tags))
        self.ocr.setText(memory.ocr)
        self._show_section("On-screen text", bool(memory.ocr))
        for title, label, items in (
            ("Interaction records", self.records, memory.records),
            ("Atomic statements", self.statements, memory.statements),
        ):
            label.setText("".join(f"• {html.escape(text)}<br>" for text in items))
            self._show_section(title, bool(items))

    def _show_lines(self, memory: MemoryView) -> None:
        self.transcript.clear()
        for (line_start, line_end, speaker, text), line_id in zip(memory.transcript, memory.line_ids, strict=True):
            item = QListWidgetItem(_line_text(line_start, speaker, text))
            item.setData(LINE_ROLE, line_id)
            item.setData(START_ROLE, float(line_start))
            item.setData(AT_ROLE, (float(line_start) + float(max(line_end, line_start))) / 2)
            item.setData(TEXT_ROLE, text)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
            item.setToolTip("Click to play from here; double-click to correct what was misheard")
            self.transcript.addItem(item)

    def set_voices(self, voices: list[Any]) -> None:
        """The voices "Said by…" offers (`VoiceInfo`, as the People panel lists them)."""
        self.voices = voices

    def _line_clicked(self, item: QListWidgetItem) -> None:
        self.seek_requested.emit(item.data(START_ROLE))

    def _commit_line(self, row: int, text: str) -> None:
        """The editor closed with new words for line `row`: ask for them to be stored (the list shows the
        stored line once it is read again)."""
        if self.key is None or not text.strip():
            return  # an emptied line is left as it was: a correction needs words, undo takes one back
        at = self.transcript.item(row).data(AT_ROLE)
        self.corrected.append((self.key[0], at))
        self.correct_requested.emit(self.key[0], at, text)

    def undo_last(self) -> bool:
        """Ctrl+Z: take back the latest correction made here; False when there is none."""
        if not self.corrected:
            return False
        footage_id, at = self.corrected.pop()
        self.undo_requested.emit(footage_id, at)
        return True

    def _line_menu(self, pos: QPoint) -> None:
        item = self.transcript.itemAt(pos)
        if item is None or self.key is None:
            return
        footage_id, at = self.key[0], item.data(AT_ROLE)
        menu = QMenu(self.transcript)
        menu.addAction(CORRECT_ACTION, lambda: self.transcript.editItem(item))
        menu.addAction(UNDO_ACTION, lambda: self.undo_requested.emit(footage_id, at))
        said = menu.addMenu(SAID_BY_MENU)
        for voice in self.voices:
            said.addAction(voice_title(voice), lambda v=voice: self._say(item, v))
        said.addSeparator()
        said.addAction(SOMEONE_ELSE, lambda: self._say(item, None))
        menu.exec(self.transcript.viewport().mapToGlobal(pos))

    def _say(self, item: QListWidgetItem, voice: Any | None) -> None:
        """Show the line with its new speaker now (the label its lines will carry: "me" for the voice a
        person said is theirs, else its name, else none) and ask for it to be stored."""
        label = "" if voice is None else ("me" if voice.me_said else voice.name or "")
        item.setText(_line_text(item.data(START_ROLE), label, item.data(TEXT_ROLE)))
        self.said_requested.emit(
            item.data(LINE_ROLE), None if voice is None else voice.id, voice_title(voice) if voice else SOMEONE_ELSE.lower()
        )


def _line_text(start: float, speaker: str, text: str) -> str:
    return f"{fmt_clock(start)}  {speaker + ': ' if speaker else ''}{text}"
