"""How responsive is the window? A 10 ms QTimer records the longest gap between its ticks: a blocked
GUI thread shows up as a gap far above 10 ms (used by tests and the screenshot script)."""

from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, QObject, QTimer

TICK_MS = 10


class StallMeter(QObject):
    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.max_gap_ms = 0
        self.ticks = 0
        self._clock = QElapsedTimer()
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)

    def start(self) -> StallMeter:
        self.max_gap_ms, self.ticks = 0, 0
        self._clock.start()
        self._timer.start()
        return self

    def exclude(self) -> None:
        """Do not count the time since the last tick: the caller just did something that is not the app's
        (a screenshot of the X screen blocks for tens of ms)."""
        self._clock.restart()

    def stop(self) -> int:
        """Stop measuring; returns the longest gap between ticks in milliseconds."""
        self._timer.stop()
        return self.max_gap_ms

    def _tick(self) -> None:
        self.max_gap_ms = max(self.max_gap_ms, self._clock.restart())
        self.ticks += 1
