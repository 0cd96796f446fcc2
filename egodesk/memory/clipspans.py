"""Which clip of a footage holds a moment: the one rule every writer and reader of lines and notes uses
to put a moment with its clip."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar


class Span(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def start_ts(self) -> float: ...
    @property
    def end_ts(self) -> float: ...


SpanT = TypeVar("SpanT", bound=Span)


def clip_holding(clips: Sequence[SpanT], ts: float) -> SpanT | None:
    """The clip whose span holds `ts` (clips in time order); a moment at or past the last clip's
    end belongs to the last clip, since a footage's final clip ends where its audio may run on."""
    for clip in clips:
        if clip.start_ts <= ts < clip.end_ts:
            return clip
    return clips[-1] if clips and ts >= clips[-1].start_ts else None
