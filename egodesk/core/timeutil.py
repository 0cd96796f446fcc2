"""Absolute times.

egodesk stores every moment as float seconds of *local wall-clock time* since 1970-01-01 (a naive
timestamp, as the wearer experienced it: "yesterday at 3 pm" means 3 pm where they were). Benchmarks
use ISO-8601 local times without a zone, which map onto this directly. Container metadata in UTC is
converted to the machine's local time once, at import.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1)


def to_ts(moment: datetime) -> float:
    """A datetime as wall-clock seconds. Aware datetimes are first converted to local time."""
    if moment.tzinfo is not None:
        moment = moment.astimezone().replace(tzinfo=None)
    return (moment - _EPOCH).total_seconds()


def now_ts() -> float:
    """Now, as wall-clock seconds."""
    return to_ts(datetime.now())


def from_ts(ts: float) -> datetime:
    return _EPOCH + timedelta(seconds=ts)


def parse_iso(text: str) -> float:
    """ISO-8601 (with or without zone, 'Z' allowed) to wall-clock seconds."""
    value = text.strip()
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    return to_ts(datetime.fromisoformat(value))


def format_ts(ts: float, with_date: bool = True) -> str:
    moment = from_ts(ts)
    return moment.strftime("%Y-%m-%d %H:%M:%S" if with_date else "%H:%M:%S")


def clock(seconds: float) -> str:
    """Seconds into a file as h:mm:ss (whole seconds: how a person reads a player's position)."""
    whole = int(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def parse_clock(text: str) -> float:
    """Seconds into a file from "75", "75.5", "1:15" or "0:01:15.5"; ValueError naming the text otherwise."""
    parts = text.strip().split(":")
    try:
        values = [float(p) for p in parts] if len(parts) <= 3 else []
    except ValueError:
        values = []
    if not values or not all(0 <= v < float("inf") for v in values) or any(v >= 60 for v in values[1:]):
        raise ValueError(f"{text!r} is not a time into the footage (say 75, 1:15 or 0:01:15.5)")
    seconds = 0.0
    for value in values:
        seconds = seconds * 60 + value
    return seconds


def utc_to_local_ts(moment: datetime) -> float:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return to_ts(moment)


def day_label(moment: datetime) -> str:
    """A day as the answerer shows it and answers name it: Mon 8 May 2023 (no %-d: it is not portable)."""
    return f"{moment:%a} {moment.day} {moment:%B %Y}"
