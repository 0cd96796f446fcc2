"""Cutting footage into the fixed-length clips every later stage works on."""

from __future__ import annotations

from egodesk.core.types import ClipSpan

MIN_TAIL_S = 1.0  # a shorter remainder is too little to caption; it joins the clip before it


def plan_clips(duration: float, clip_seconds: float) -> list[ClipSpan]:
    """Non-overlapping clips of `clip_seconds` covering [0, duration] exactly.

    The last clip absorbs a remainder shorter than MIN_TAIL_S; footage shorter than one clip is one
    clip; no footage (duration <= 0) is no clips.
    """
    if clip_seconds <= 0:
        raise ValueError(f"clip_seconds must be positive, not {clip_seconds}")
    if duration <= 0:
        return []
    count = max(1, int(duration // clip_seconds))
    if duration - count * clip_seconds >= MIN_TAIL_S:
        count += 1
    offsets = [i * clip_seconds for i in range(count)] + [duration]
    return [ClipSpan(index=i, offset=offsets[i], duration=offsets[i + 1] - offsets[i]) for i in range(count)]
