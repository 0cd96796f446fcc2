"""Small text and time helpers the views share (no Qt, so they are tested on their own)."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from datetime import date
from typing import Any

from egodesk.core.timeutil import from_ts

DAY = 86_400.0


def fmt_duration(seconds: float | None) -> str:
    """1:02:03, 2:03, 0:07 ('-' when unknown)."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return "-"
    total = int(round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def fmt_clock(ts: float, seconds: bool = True) -> str:
    return from_ts(ts).strftime("%H:%M:%S" if seconds else "%H:%M")


def fmt_moment(ts: float) -> str:
    """'Mon 18 Nov 14:03:12' for a chip or a tooltip."""
    return from_ts(ts).strftime("%a %d %b %H:%M:%S")


def day_of(ts: float) -> date:
    return from_ts(ts).date()


def day_label(day: date) -> str:
    return day.strftime("%a %d %b %Y")


def day_start(ts: float) -> float:
    return ts - (ts % DAY)  # wall-clock seconds: days start at multiples of DAY


def group_by_day(items: Iterable[Any]) -> list[tuple[date, list[Any]]]:
    """Items with a `.start` timestamp grouped by calendar day, newest day first, in time order within."""
    days: dict[date, list[Any]] = {}
    for item in sorted(items, key=lambda i: i.start):
        days.setdefault(day_of(item.start), []).append(item)
    return sorted(days.items(), key=lambda kv: kv[0], reverse=True)


def frame_center(seconds: float, fps: float) -> float:
    """The middle of the frame shown at `seconds`: seeking there can never land on the frame before."""
    if fps <= 0:
        return seconds
    return (math.floor(seconds * fps + 1e-6) + 0.5) / fps


def elide(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


class Eta:
    """Remaining time of one (stage) counter from its observed rate since it was first seen."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._first: tuple[float, int] | None = None
        self.done = 0
        self.total = 0

    def update(self, done: int, total: int) -> None:
        now = self._clock()
        if self._first is None or done < self._first[1]:
            self._first = (now, done)
        self.done, self.total = done, total

    def seconds_left(self) -> float | None:
        if self._first is None or self.total <= 0:
            return None
        if self.done >= self.total:
            return 0.0
        started, done0 = self._first
        elapsed = self._clock() - started
        if self.done <= done0 or elapsed <= 0:
            return None
        rate = (self.done - done0) / elapsed
        return (self.total - self.done) / rate
