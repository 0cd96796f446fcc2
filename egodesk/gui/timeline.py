"""The timeline under the player: footage of the day, its clips, the transcript (coloured by speaker), the
search field's hits, the current answer's evidence and the playhead, in absolute wall-clock time. Click or drag
to seek; the wheel zooms (from seconds to the whole day) around the cursor, shift+wheel pans; right-click a clip
to star, note, export or forget it."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics, QMouseEvent, QPainter, QPen, QWheelEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QMenu,
    QScrollBar,
    QSizePolicy,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from egodesk.gui.formatting import DAY, fmt_clock, fmt_duration
from egodesk.gui.kept import add_keep_actions

MIN_SPAN_S = 5.0
GUTTER = 78
RULER_H = 18
LANES = ("Footage", "Clips", "Speech", "Search", "Evidence")
LANE_H = 22
TICKS_S = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600)
# The Speech lane is coloured by who speaks: light colours (the label stays dark on them), told apart at a glance
SPEAKER_COLORS = ("#8ecae6", "#f4a6a6", "#b5e07a", "#c9b3f5", "#7fd1c7", "#f7b983", "#eaa2dc")
ME_COLOR = "#ffd166"  # the wearer's own lines: a colour no other person gets
# a voice nobody named yet is no one in particular: neutral grey, so that it never passes for a named person
UNNAMED_COLOR = "#c4c9d1"


@dataclass
class Span:
    """One thing drawn on a lane: [start, end) in absolute seconds, a label, and what it stands for."""

    start: float
    end: float
    label: str = ""
    key: Any = None
    detail: str = ""  # the tooltip, when it says more than the label
    group: str | None = None  # what its colour follows: on the Speech lane the line's speaker ("" unnamed)


def speaker_color(speaker: str) -> QColor:
    """The colour of a speaker's lines: "me" its own, an unnamed voice grey, and a name always the same one
    (a stable hash of the name, not Python's hash(), which changes from run to run)."""
    name = speaker.strip().lower()
    if not name:
        return QColor(UNNAMED_COLOR)
    if name == "me":
        return QColor(ME_COLOR)
    return QColor(SPEAKER_COLORS[zlib.crc32(name.encode()) % len(SPEAKER_COLORS)])


class Timeline(QWidget):
    seek_requested = Signal(float)  # absolute ts
    evidence_clicked = Signal(int)  # index into the current answer's evidence
    search_clicked = Signal(int)  # index into the search field's hits
    forget_requested = Signal(object, object, object)  # footage_id, start or None, end or None
    keep_requested = Signal(str, object, float, float)  # a keep action on a clip: action, footage id, start, end
    view_changed = Signal(float, float)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("timeline")
        self.setMinimumHeight(RULER_H + LANE_H * len(LANES) + 6)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMouseTracking(True)
        self.lanes: dict[str, list[Span]] = {name: [] for name in LANES}
        self.playhead: float | None = None
        self.loop: tuple[float, float] | None = None
        self.highlighted: int | None = None
        self.view = (0.0, 60.0)
        self._dragging = False

    # -- content -------------------------------------------------------------------------------

    def set_lane(self, name: str, spans: list[Span]) -> None:
        self.lanes[name] = sorted(spans, key=lambda s: s.start)
        self.update()

    def set_evidence(self, spans: list[Span]) -> None:
        """Evidence markers; each span's key is its index in the answer's evidence list."""
        self.highlighted = None
        self.set_lane("Evidence", spans)

    def highlight_evidence(self, index: int | None) -> None:
        self.highlighted = index
        self.update()

    def set_playhead(self, ts: float | None) -> None:
        self.playhead = ts
        if ts is not None and not self._dragging and not self.view[0] <= ts <= self.view[1]:
            span = self.view[1] - self.view[0]
            self.show_range(ts - span * 0.1, ts + span * 0.9)  # page along, like a player does
        self.update()

    def set_loop(self, loop: tuple[float, float] | None) -> None:
        self.loop = loop
        self.update()

    # -- view ----------------------------------------------------------------------------------

    def show_range(self, start: float, end: float) -> None:
        span = min(DAY, max(MIN_SPAN_S, end - start))
        middle = (start + end) / 2
        self.view = (middle - span / 2, middle + span / 2)
        self.view_changed.emit(*self.view)
        self.update()

    def zoom(self, factor: float, anchor: float | None = None) -> None:
        """factor < 1 zooms in; the anchor time stays under the same pixel."""
        start, end = self.view
        anchor = (start + end) / 2 if anchor is None else anchor
        span = min(DAY, max(MIN_SPAN_S, (end - start) * factor))
        ratio = (anchor - start) / (end - start)
        self.view = (anchor - span * ratio, anchor - span * ratio + span)
        self.view_changed.emit(*self.view)
        self.update()

    def pan_to(self, start: float) -> None:
        span = self.view[1] - self.view[0]
        self.view = (start, start + span)
        self.update()

    def x_of(self, ts: float) -> float:
        start, end = self.view
        return GUTTER + (ts - start) / (end - start) * max(1, self.width() - GUTTER)

    def ts_at(self, x: float) -> float:
        start, end = self.view
        return start + (x - GUTTER) / max(1, self.width() - GUTTER) * (end - start)

    def lane_rect(self, name: str) -> QRectF:
        top = RULER_H + LANES.index(name) * LANE_H
        return QRectF(GUTTER, top + 2, self.width() - GUTTER, LANE_H - 4)

    def span_rect(self, name: str, span: Span) -> QRectF:
        lane = self.lane_rect(name)
        left, right = self.x_of(span.start), self.x_of(span.end)
        return QRectF(left, lane.top(), max(3.0, right - left), lane.height())

    # -- painting ------------------------------------------------------------------------------

    def paintEvent(self, _event) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        painter.fillRect(self.rect(), palette.base())
        self._paint_ruler(painter)
        colors = {
            "Footage": QColor("#5b8def"),
            "Clips": QColor("#8fb3f5"),
            "Speech": QColor("#7cc4a4"),
            "Search": QColor("#b48ef0"),
            "Evidence": QColor("#f0a030"),
        }
        metrics = QFontMetrics(self.font())
        for name in LANES:
            lane = self.lane_rect(name)
            painter.setPen(palette.text().color())
            painter.drawText(QRectF(4, lane.top(), GUTTER - 8, lane.height()), Qt.AlignmentFlag.AlignVCenter, name)
            spans = list(enumerate(self.lanes[name]))
            if name == "Evidence":  # long ranges first, so that short ones stay visible on top
                spans.sort(key=lambda item: item[1].start - item[1].end)
            for i, span in spans:
                if span.end < self.view[0] or span.start > self.view[1]:
                    continue
                rect = self.span_rect(name, span).intersected(lane)
                color = QColor(colors[name])
                if name == "Speech" and span.group is not None:
                    color = speaker_color(span.group)
                if name == "Clips" and i % 2:
                    color = color.darker(115)
                if name == "Evidence" and span.key == self.highlighted:
                    color = QColor("#e5484d")
                painter.fillRect(rect, color)
                if rect.width() > 24 and span.label:
                    painter.setPen(QColor("#10151f"))
                    text = metrics.elidedText(span.label, Qt.TextElideMode.ElideRight, int(rect.width()) - 6)
                    painter.drawText(rect.adjusted(3, 0, -3, 0), Qt.AlignmentFlag.AlignVCenter, text)
        if self.loop:
            left, right = self.x_of(self.loop[0]), self.x_of(self.loop[1])
            painter.fillRect(QRectF(left, RULER_H, right - left, self.height() - RULER_H), QColor(229, 72, 77, 40))
        if self.playhead is not None:
            x = self.x_of(self.playhead)
            painter.setPen(QPen(QColor("#e5484d"), 2))
            painter.drawLine(QPointF(x, 0), QPointF(x, self.height()))

    def _paint_ruler(self, painter: QPainter) -> None:
        start, end = self.view
        width = max(1, self.width() - GUTTER)
        step = next((t for t in TICKS_S if width / ((end - start) / t) >= 70), TICKS_S[-1])
        painter.setPen(self.palette().mid().color())
        painter.drawLine(GUTTER, RULER_H - 1, self.width(), RULER_H - 1)
        tick = (start // step) * step
        while tick <= end:
            x = self.x_of(tick)
            if x >= GUTTER:
                painter.drawLine(QPointF(x, RULER_H - 5), QPointF(x, RULER_H - 1))
                painter.drawText(QPointF(x + 2, RULER_H - 6), fmt_clock(tick, seconds=step < 60))
            tick += step

    # -- interaction ---------------------------------------------------------------------------

    def span_at(self, name: str, x: float, y: float) -> Span | None:
        for span in self.lanes[name]:
            if self.span_rect(name, span).contains(QPointF(x, y)):
                return span
        return None

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton or event.position().x() < GUTTER:
            return
        evidence = self.span_at("Evidence", event.position().x(), event.position().y())
        if evidence is not None:
            self.evidence_clicked.emit(evidence.key)
            return
        hit = self.span_at("Search", event.position().x(), event.position().y())
        if hit is not None:
            self.search_clicked.emit(hit.key)
            return
        self._dragging = True
        self.seek_requested.emit(self.ts_at(event.position().x()))

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        x, y = event.position().x(), event.position().y()
        if self._dragging:
            self.seek_requested.emit(self.ts_at(max(GUTTER, x)))
            return
        for name in LANES:
            span = self.span_at(name, x, y)
            if span is not None and (span.detail or span.label):
                QToolTip.showText(
                    event.globalPosition().toPoint(),
                    f"{fmt_clock(span.start)} ({fmt_duration(span.end - span.start)})\n{span.detail or span.label}",
                    self,
                )
                return
        QToolTip.hideText()

    def mouseReleaseEvent(self, _event: QMouseEvent) -> None:
        self._dragging = False

    def wheelEvent(self, event: QWheelEvent) -> None:
        delta = event.angleDelta()
        if event.modifiers() & Qt.KeyboardModifier.ShiftModifier or abs(delta.x()) > abs(delta.y()):
            amount = delta.x() or delta.y()
            span = self.view[1] - self.view[0]
            self.pan_to(self.view[0] - amount / 120 * span * 0.1)
        elif delta.y():
            self.zoom(0.8 if delta.y() > 0 else 1.25, self.ts_at(event.position().x()))
        event.accept()

    def contextMenuEvent(self, event) -> None:
        x = event.pos().x()
        clip = self.span_at("Clips", x, self.lane_rect("Clips").center().y())
        footage = self.span_at("Footage", x, self.lane_rect("Footage").center().y())
        if clip is None and footage is None:
            return
        menu = QMenu(self)
        if clip is not None:
            add_keep_actions(menu, lambda action: self.keep_requested.emit(action, clip.key, clip.start, clip.end))
            menu.addSeparator()
            menu.addAction(
                f"Forget this moment ({fmt_clock(clip.start)}–{fmt_clock(clip.end)})…",
                lambda: self.forget_requested.emit(clip.key, clip.start, clip.end),
            )
        if footage is not None:
            menu.addAction(f"Forget all of “{footage.label}”…", lambda: self.forget_requested.emit(footage.key, None, None))
        menu.exec(event.globalPos())


class TimelinePanel(QWidget):
    """The timeline with its zoom buttons and a scroll bar over the day."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.timeline = Timeline(self)
        self.scroll = QScrollBar(Qt.Orientation.Horizontal, self)
        self.scroll.valueChanged.connect(lambda v: self.timeline.pan_to(self._day_start + v))
        self.timeline.view_changed.connect(self._sync_scroll)
        self._day_start = 0.0
        self._footage_range: tuple[float, float] | None = None

        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        for text, tip, slot in (
            ("−", "Zoom out", lambda: self.timeline.zoom(1.5)),
            ("+", "Zoom in", lambda: self.timeline.zoom(1 / 1.5)),
            ("Footage", "Show the whole footage", self.fit_footage),
            ("Day", "Show the whole day", self.fit_day),
        ):
            button = QToolButton(self)
            button.setText(text)
            button.setToolTip(tip)
            button.clicked.connect(slot)
            buttons.addWidget(button)
        buttons.addWidget(self.scroll, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.timeline)
        layout.addLayout(buttons)

    def set_day(self, day_start: float, footage_range: tuple[float, float] | None) -> None:
        self._day_start = day_start
        self._footage_range = footage_range
        self.fit_footage()

    def fit_footage(self) -> None:
        if self._footage_range:
            start, end = self._footage_range
            pad = max(1.0, (end - start) * 0.02)
            self.timeline.show_range(start - pad, end + pad)

    def fit_day(self) -> None:
        self.timeline.show_range(self._day_start, self._day_start + DAY)

    def _sync_scroll(self, start: float, end: float) -> None:
        span = end - start
        self.scroll.blockSignals(True)
        self.scroll.setRange(int(-span), int(DAY))
        self.scroll.setPageStep(max(1, int(span)))
        self.scroll.setValue(int(start - self._day_start))
        self.scroll.blockSignals(False)
