"""The memory browser: what egodesk remembers of the clip under the playhead (caption, transcript
lines, tags, on-screen text, interaction records, atomic statements). Click a transcript line to seek."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QScrollArea, QVBoxLayout, QWidget

from egodesk.gui.formatting import fmt_clock, fmt_duration

if TYPE_CHECKING:
    from egodesk.pipeline.library import MemoryView


class MemoryBrowser(QScrollArea):
    seek_requested = Signal(float)  # absolute ts

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
        self.key = key
        if memory is None:
            for title in self.sections:
                self._show_section(title, False)
            return
        self.header.setText(
            f"<b>{fmt_clock(memory.start)}–{fmt_clock(memory.end)}</b> ({fmt_duration(memory.end - memory.start)})"
        )
        self.caption.setText(memory.caption)
        self._show_section("Caption", bool(memory.caption))
        self.transcript.clear()
        for line_start, _line_end, speaker, text in memory.transcript:
            item = QListWidgetItem(f"{fmt_clock(line_start)}  {speaker + ': ' if speaker else ''}{text}")
            item.setData(Qt.ItemDataRole.UserRole, float(line_start))
            item.setToolTip("Click to play from here")
            self.transcript.addItem(item)
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

    def _line_clicked(self, item: QListWidgetItem) -> None:
        self.seek_requested.emit(item.data(Qt.ItemDataRole.UserRole))
