"""Evidence chips (one retrieved moment: thumbnail, time, source, snippet; click to watch it, right-click to
star, note or export it) and the retrieval inspector (per unit: strategy, view, ranks, scores; tokens and timings of the answer)."""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QContextMenuEvent, QMouseEvent
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QMenu, QTreeWidget, QTreeWidgetItem, QWidget

from egodesk.core.types import Answer, Evidence
from egodesk.gui.formatting import elide, fmt_duration, fmt_moment
from egodesk.gui.kept import add_keep_actions
from egodesk.gui.widgets import thumbnail_pixmap

THUMB_W, THUMB_H = 96, 54


def chip_name(index: int) -> str:
    """The objectName of the chip for evidence `index` (tests and scripts find chips by it)."""
    return f"evidence-chip-{index}"


class EvidenceChip(QFrame):
    clicked = Signal(int)
    keep_requested = Signal(str, int)  # a keep action (`kept.KEEP_ACTIONS`), this chip's index

    def __init__(self, index: int, evidence: Evidence, thumbnail: Path | None, cited: bool, parent: QWidget | None = None):
        super().__init__(parent)
        self.index, self.evidence = index, evidence
        self.setObjectName(chip_name(index))
        self.setProperty("chip", True)
        self.setProperty("cited", cited)
        self.setProperty("selected", False)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        duration = evidence.end - evidence.start
        self.setToolTip(
            f"{evidence.text}\n\nClick to watch this moment (it loops until you stop it); right-click to star, note or export it."
        )

        thumb = QLabel(self)
        thumb.setFixedSize(THUMB_W, THUMB_H)
        thumb.setAlignment(Qt.AlignmentFlag.AlignCenter)
        pixmap = thumbnail_pixmap(thumbnail, THUMB_W, THUMB_H)
        if pixmap is not None:
            thumb.setPixmap(pixmap)
        else:
            thumb.setText(evidence.kind or "text")
            thumb.setProperty("placeholder", True)
        source = html.escape(evidence.source or evidence.kind)
        ranked = f" · rank {evidence.rank}" if evidence.rank else ""
        header = QLabel(
            f"{'★ ' if cited else ''}<b>#{index + 1}</b> {fmt_moment(evidence.start)}"
            f" <span style='color:gray'>· {fmt_duration(duration)} · {source}{ranked}</span>",
            self,
        )
        header.setObjectName("chip-header")
        header.setTextFormat(Qt.TextFormat.RichText)
        header.setWordWrap(True)
        snippet = QLabel(elide(evidence.text, 160), self)
        snippet.setObjectName("chip-snippet")
        snippet.setTextFormat(Qt.TextFormat.PlainText)
        snippet.setWordWrap(True)
        layout = QGridLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setHorizontalSpacing(8)
        layout.addWidget(thumb, 0, 0, 2, 1, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(header, 0, 1)
        layout.addWidget(snippet, 1, 1)
        layout.setColumnStretch(1, 1)

    def set_selected(self, selected: bool) -> None:
        self.setProperty("selected", selected)
        self.style().unpolish(self)
        self.style().polish(self)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.clicked.emit(self.index)
        super().mousePressEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = QMenu(self)
        add_keep_actions(menu, lambda action: self.keep_requested.emit(action, self.index))
        menu.exec(event.globalPos())


class Inspector(QWidget):
    """How the evidence was found: one row a unit, and the answer's cost underneath."""

    COLUMNS = ("#", "Strategy", "View", "Ranks", "Scores", "Source")

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.tree = QTreeWidget(self)
        self.tree.setObjectName("inspector")
        self.tree.setHeaderLabels(list(self.COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setMinimumHeight(90)
        self.tree.setMaximumHeight(150)
        self.summary = QLabel(self)
        self.summary.setObjectName("inspector-summary")
        self.summary.setWordWrap(True)
        self.summary.setMinimumHeight(self.summary.fontMetrics().height() * 2)
        layout = QGridLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree, 0, 0)
        layout.addWidget(self.summary, 1, 0)

    def show_answer(self, answer: Answer | None) -> None:
        self.tree.clear()
        if answer is None:
            self.summary.clear()
            return
        for i, ev in enumerate(answer.evidence):
            ranks = ", ".join(f"{k} {v}" for k, v in ev.ranks.items())
            scores = ", ".join(f"{k} {v:.3f}" for k, v in ev.scores.items()) or f"{ev.score:.3f}"
            item = QTreeWidgetItem([str(i + 1), ev.strategy, ev.view or ev.kind, ranks, scores, ev.source])
            item.setToolTip(5, ev.text)
            self.tree.addTopLevelItem(item)
        for column in range(len(self.COLUMNS) - 1):
            self.tree.resizeColumnToContents(column)
        timings = ", ".join(f"{k} {v:.1f} s" for k, v in answer.timings.items())
        self.summary.setText(
            f"{len(answer.evidence)} units, {len(answer.cited)} cited, {answer.tokens} prompt tokens"
            + (f"; {timings}" if timings else "")
            + ("" if answer.grounded else "; not grounded in the evidence")
            + self._window(answer)
        )

    @staticmethod
    def _window(answer: Answer) -> str:
        """The time window the question named, which every strategy searched inside."""
        if window := answer.extra.get("window"):
            return f"; searched only {window['label']}: {fmt_moment(window['start'])} to {fmt_moment(window['end'])}"
        if recalled := answer.extra.get("recalled"):  # a span before the first footage: it was talked of later
            span = f"{fmt_moment(recalled['start'])} to {fmt_moment(recalled['end'])}"
            return f"; no footage from {recalled['label']} ({span}): searched what was said later"
        return ""
