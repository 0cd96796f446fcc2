"""When a recording started, as local wall-clock seconds (see `egodesk.core.timeutil`), and how we know.

Sources, best first:
- "metadata": the container's creation_time (UTC), or a photo's EXIF time (`photo.py`), converted to this
  machine's local time; values from an unset camera clock (before 2000, e.g. the 1904/1970 epochs, or in
  the future) are ignored.
- "filename": a date and time in the name, taken as local time:
  `20240202-110250`, `20240202_110250`, `VID_20240202_110250`, `PXL_20240202_110250123` (milliseconds);
  EgoLife-style `DAY1_11094208` (11:09:42.08 on "day 1"). A day number is no calendar date, so the
  time of day comes from the name and the date from the file's modification time: the last such time
  of day not after it (a recording cannot start after its file was written: 11:09 named, written at
  00:30, is yesterday's 11:09).
  GoPro names (`GX010042`, `GOPR0042`) are counters, not times, and fall through.
- "mtime": the file's modification time less its duration, since a camera last writes a file when
  the recording stops (a photo has no duration: when it was written is when it was taken).
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timedelta
from pathlib import Path

from egodesk.core.timeutil import to_ts, utc_to_local_ts
from egodesk.media.probe import MediaInfo

_EARLIEST_YEAR = 2000
_DAY_NAME = re.compile(r"(?<![A-Za-z0-9])DAY(\d{1,3})_(\d{2})(\d{2})(\d{2})(\d{2})(?!\d)", re.IGNORECASE)
_DATE_TIME_NAME = re.compile(r"(?<!\d)(\d{4})(\d{2})(\d{2})[-_](\d{2})(\d{2})(\d{2})(\d{3})?(?!\d)")


def recording_start(path: str | os.PathLike, info: MediaInfo) -> tuple[float, str]:
    """(start as wall-clock seconds, source) where source is "metadata", "filename" or "mtime"."""
    path = Path(path)
    if info.creation_time is not None and _plausible(info.creation_time.replace(tzinfo=None)):
        return utc_to_local_ts(info.creation_time), "metadata"
    modified = datetime.fromtimestamp(path.stat().st_mtime)  # local wall clock
    named = start_from_name(path.name, modified)
    if named is not None:
        return to_ts(named), "filename"
    return to_ts(modified - timedelta(seconds=info.duration)), "mtime"


def start_from_name(name: str, written: datetime) -> datetime | None:
    """The local start time written in a file name, or None; `written` (when the file was last
    written) dates a `DAY<N>_` name: its time of day on that date, or the day before if later."""
    match = _DAY_NAME.search(name)
    if match:
        hour, minute, second, hundredths = (int(g) for g in match.groups()[1:])
        moment = _build(written.year, written.month, written.day, hour, minute, second, hundredths * 10_000)
        if moment is not None:
            return moment - timedelta(days=1) if moment > written else moment
    for match in _DATE_TIME_NAME.finditer(name):
        *fields, millis = match.groups()
        moment = _build(*(int(f) for f in fields), int(millis or 0) * 1000)
        if moment is not None and _plausible(moment):
            return moment
    return None


def _build(*fields: int) -> datetime | None:
    """A datetime, or None when the digits are no real date or time (month 13, 25 o'clock)."""
    try:
        return datetime(*fields)
    except ValueError:
        return None


def _plausible(moment: datetime) -> bool:
    """Not from an unset clock: on or after 2000 and not more than a day in the future."""
    return moment.year >= _EARLIEST_YEAR and moment <= datetime.now() + timedelta(days=1)
