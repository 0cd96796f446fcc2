"""How responsive is the window? A 10 ms QTimer records the longest gap between its ticks: a blocked
GUI thread shows up as a gap far above 10 ms (used by tests and the screenshot script).

The caller names what the window is doing (`phase`), so the longest gap says where it happened. With
`sample_ms`, a watchdog thread also takes the GUI thread's Python stack once a gap passes that many ms,
and the stack of the longest gap is kept (`worst_stack`): what blocked the window, not only how long."""

from __future__ import annotations

import faulthandler
import tempfile
import threading
import time
from collections import Counter

from PySide6.QtCore import QElapsedTimer, QObject, QTimer

TICK_MS = 10
_WATCH_S = 0.003  # how often the watchdog looks at the GUI thread's last tick


class StallMeter(QObject):
    def __init__(self, parent: QObject | None = None, sample_ms: int | None = None):
        super().__init__(parent)
        self.max_gap_ms = 0
        self.ticks = 0
        self.phase = ""  # what the window is doing now (set by the caller)
        self.worst_phase = ""  # what it was doing in the longest gap
        self.worst_stack = ""  # the GUI thread's stack in the longest gap (with sample_ms)
        self.gaps: dict[str, int] = {}  # phase -> its longest gap
        self.stalls: list[tuple[int, str, str]] = []  # with sample_ms: each gap over it (ms, phase, stack)
        self.worst_cpu_ms = 0.0  # of the longest gap, how long the GUI thread ran (the rest it waited)
        self._cpu = 0.0  # the GUI thread's CPU time at the last tick
        self.sample_ms = sample_ms
        self._clock = QElapsedTimer()
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._last = 0.0  # time.monotonic() of the last tick, for the watchdog
        self._samples: list[str] = []  # stacks taken during the current gap
        self._gui_thread = threading.get_ident()
        self._watching = False
        self._watchdog: threading.Thread | None = None

    def start(self) -> StallMeter:
        self.max_gap_ms, self.ticks, self.worst_phase, self.worst_stack, self.gaps, self.stalls = 0, 0, "", "", {}, []
        self.worst_cpu_ms, self._cpu = 0.0, time.thread_time()
        self._clock.start()
        self._last, self._samples = time.monotonic(), []
        self._timer.start()
        if self.sample_ms is not None and self._watchdog is None:
            self._watching = True
            self._watchdog = threading.Thread(target=self._watch, name="stall-watchdog", daemon=True)
            self._watchdog.start()
        return self

    def exclude(self) -> None:
        """Do not count the time since the last tick: the caller just did something that is not the app's
        (a screenshot of the X screen blocks for tens of ms)."""
        self._clock.restart()
        self._last, self._samples, self._cpu = time.monotonic(), [], time.thread_time()

    def stop(self) -> int:
        """Stop measuring; returns the longest gap between ticks in milliseconds."""
        self._timer.stop()
        self._watching = False
        if self._watchdog is not None:
            self._watchdog.join(1.0)
            self._watchdog = None
        return self.max_gap_ms

    def report(self) -> str:
        """The longest gap, the phase it fell in, and each phase's longest gap."""
        phases = ", ".join(f"{phase or '-'} {ms}" for phase, ms in self.gaps.items())
        return (
            f"longest stall {self.max_gap_ms} ms in {self.worst_phase or '-'}, the GUI thread running {self.worst_cpu_ms:.0f} ms"
            f" of it (per phase, ms: {phases})"
        )

    def _tick(self) -> None:
        gap = self._clock.restart()
        samples, self._samples = self._samples, []
        self._last = time.monotonic()
        cpu, self._cpu = self._cpu, time.thread_time()
        cpu_ms = (self._cpu - cpu) * 1000
        self.ticks += 1
        self.gaps[self.phase] = max(self.gaps.get(self.phase, 0), gap)
        stack = ""
        if samples:
            common, count = Counter(samples).most_common(1)[0]
            stack = f"{count} of {len(samples)} samples in the gap:\n{common}"
        if self.sample_ms is not None and gap > TICK_MS + self.sample_ms:
            self.stalls.append((gap, f"{self.phase} (GUI thread running {cpu_ms:.0f} ms)", stack))
        if gap > self.max_gap_ms:
            self.max_gap_ms, self.worst_phase, self.worst_stack, self.worst_cpu_ms = gap, self.phase, stack, cpu_ms

    def _watch(self) -> None:
        """Off the GUI thread: while the GUI thread has not ticked for over `sample_ms`, take its stack
        every few ms; the tick that ends the gap keeps the stack seen most often."""
        assert self.sample_ms is not None
        limit = (TICK_MS + self.sample_ms) / 1000.0
        while self._watching:
            time.sleep(_WATCH_S)
            if time.monotonic() - self._last > limit:
                stack = _stack_of(self._gui_thread)
                if stack:
                    self._samples.append(stack)


def _stack_of(thread_id: int, depth: int = 12) -> str:
    """The innermost `depth` Python frames of a running thread, as `faulthandler` writes them (it reads
    the frames without touching their objects, safe while that thread runs), then the innermost frame of
    each other thread but the caller (a thread holding the GIL in C code shows there)."""
    with tempfile.TemporaryFile("w+") as out:
        faulthandler.dump_traceback(out, all_threads=True)
        out.seek(0)
        text = out.read()
    header = f"Thread 0x{thread_id:016x}"
    mine, others = "", []
    for block in text.split("\n\n"):
        lines = block.strip().splitlines()
        if not lines or lines[0].startswith("Current thread"):
            continue
        if lines[0].startswith(header):
            mine = "\n".join(lines[1 : depth + 1])
        else:
            others.append(f"  [{lines[0].split()[1]}] {lines[1].strip() if len(lines) > 1 else '-'}")
    return mine + ("\n other threads:\n" + "\n".join(others) if mine and others else "")
