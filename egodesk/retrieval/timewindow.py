"""Time expressions in a question become a window of wall-clock time: clock times and ranges, parts of
a day, named and relative days, the library's own "day 2", spans ago and periods, resolved against the
moment the question is asked and the days the library has footage of.

Deterministic (regular expressions and word lists), like the rest of question analysis.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from egodesk.core.timeutil import from_ts, to_ts

MONTHS = {
    m: i
    for i, m in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
        1,
    )
}
MONTHS.update({m[:3]: i for m, i in list(MONTHS.items())})
MONTHS["sept"] = 9
WEEKDAYS = {d: i for i, d in enumerate(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])}
NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "a couple of": 2,
    "couple of": 2,
    "a few": 3,
    "few": 3,
    "several": 3,
}
# Hours of the day (fractional; > 24 runs into the next morning).
DAY_PARTS = {
    "morning": (5, 12),
    "noon": (11.5, 13),
    "midday": (11.5, 13),
    "afternoon": (12, 17),
    "evening": (17, 21),
    "night": (21, 29),
    "tonight": (18, 29),
    "breakfast": (6, 10),
    "lunch": (11.5, 14),
    "lunchtime": (11.5, 14),
    "dinner": (17.5, 21),
    "supper": (17.5, 21),
}
UNIT_SECONDS = {
    "second": 1,
    "minute": 60,
    "hour": 3600,
    "day": 86400,
    "week": 7 * 86400,
    "month": 30 * 86400,
    "year": 365 * 86400,
}


@dataclass(frozen=True)
class TimeWindow:
    """[start, end) in wall-clock seconds, with the phrase it came from."""

    start: float
    end: float
    label: str

    def contains(self, start: float, end: float) -> bool:
        return start < self.end and self.start <= end

    def distance(self, start: float, end: float) -> float:
        """Seconds between an interval and the window (0 when they meet)."""
        if self.contains(start, end):
            return 0.0
        return self.start - end if end < self.start else start - self.end


_NUMBER = r"(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a\s+couple\s+of|couple\s+of|a\s+few|few|several)"
_AGO = re.compile(_NUMBER + r"\s+(second|minute|hour|day|week|month|year)s?\s+ago\b")
_PAST_N = re.compile(
    r"\b(?:in\s+|over\s+|during\s+)?the\s+(?:past|last)\s+" + _NUMBER + r"?\s*(second|minute|hour|day|week|month|year)s?\b"
)
_CLOCK = r"(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?\s*(a\.?m\.?|p\.?m\.?)?"
_RANGE = re.compile(r"\b(?:from|between)\s+" + _CLOCK + r"\s+(?:to|and|until|till|-)\s+" + _CLOCK)
_AT = re.compile(r"\b(?:at|around|about|near)\s+" + _CLOCK + r"(?=\W|$)")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2}))?")
_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
_DMY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(" + _MONTH_NAMES + r")\.?,?(?:\s+(\d{4}))?\b")
_MDY = re.compile(r"\b(" + _MONTH_NAMES + r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b,?(?:\s+(\d{4}))?")
_MONTH_ONLY = re.compile(r"\bin\s+(" + _MONTH_NAMES + r")\b(?:\s+(\d{4}))?")
_YEAR = re.compile(r"\bin\s+(\d{4})\b")
_WEEKDAY = re.compile(r"\b(last\s+|this\s+|on\s+)?(" + "|".join(WEEKDAYS) + r")\b")
_RELDAY = re.compile(
    r"\b(yesterday|today|tonight|this\s+(?:morning|afternoon|evening)|earlier\s+today|last\s+night"
    r"|the\s+day\s+before\s+yesterday)\b"
)
_PERIOD = re.compile(r"\b(last|this|past)\s+(week|weekend|month|year)\b")
_DAYPART = re.compile(
    r"\b(before|after|during|at|around|about|in\s+the|this)?\s*(" + "|".join(sorted(DAY_PARTS, key=len, reverse=True)) + r")\b"
)
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "last": -1}
# "day 2", "on day two", "the second day", "the last day": days of the library's own footage, in order.
_DAY_N = re.compile(
    r"\b(?:on\s+)?(?:day\s+(\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten)\b|the\s+("
    + "|".join(_ORDINALS)
    + r")\s+day\b(?!\s+of\b))"
)


def _day_start(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _number(text: str | None) -> int:
    if not text:
        return 1
    text = " ".join(text.split())
    return int(text) if text.isdigit() else NUMBERS.get(text, 1)


def _clock(hour: str, minute: str | None, second: str | None, meridiem: str | None) -> float | None:
    h, m, s = int(hour), int(minute or 0), int(second or 0)
    if meridiem:
        pm = meridiem.lower().startswith("p")
        if h > 12:
            return None
        h = (h % 12) + (12 if pm else 0)
    elif minute is None:
        return None  # "at 3" alone is too ambiguous to be a time
    if h > 23 or m > 59 or s > 59:
        return None
    return h * 3600 + m * 60 + s


class PhraseFinder:
    """Finds temporal phrases in a lower-cased question and remembers the spans it consumed."""

    def __init__(self, text: str):
        self.text = text
        self.spans: list[tuple[int, int]] = []

    def search(self, pattern: re.Pattern) -> re.Match | None:
        return next((m for m in pattern.finditer(self.text) if self.take(m)), None)

    def take(self, match: re.Match) -> bool:
        if any(s < match.end() and match.start() < e for s, e in self.spans):
            return False
        self.spans.append(match.span())
        return True

    def remainder(self) -> str:
        out, last = [], 0
        for s, e in sorted(self.spans):
            out.append(self.text[last:s])
            last = max(last, e)
        out.append(self.text[last:])
        return " ".join("".join(out).split())


def resolve_window(f: PhraseFinder, now: datetime, days: Sequence[tuple[float, float]]) -> TimeWindow | None:
    """The time window the question's phrases name, relative to `now` (the moment it is asked) and to
    `days`, the library's days of footage: (first start, last end) per calendar day, in time order.
    A named day is looked for first, then a span; the finder takes each phrase it matches, so the
    order of the searches is part of the rule."""
    named = _named_day(f, now, days)
    if isinstance(named, TimeWindow):
        return named
    if named is None and (span := _named_span(f, now)) is not None:
        return span
    day, label = named or (None, "")
    if day is not None:
        return _within_day(f, day, label, explicit_day=True)
    window = _within_day(f, _day_start(now), label, explicit_day=False)
    return _latest_footage_day(window, now, days) if window is not None else None


def _named_day(
    f: PhraseFinder, now: datetime, days: Sequence[tuple[float, float]]
) -> TimeWindow | tuple[datetime | None, str] | None:
    """The day a phrase names ("day 3", "2024-03-14", "14 March", "yesterday", "on Tuesday") with its
    label, or the window itself where the phrase fixes it ("last night", "this evening", an ISO time);
    None when no phrase names a day."""
    day: datetime | None = None
    label = ""
    if (m := f.search(_DAY_N)) and days:
        n = _number(m[1]) if m[1] else _ORDINALS[m[2]]
        if -len(days) <= (n - 1 if n > 0 else n) < len(days):
            day, label = _day_start(from_ts(days[n - 1 if n > 0 else n][0])), m[0].strip()
        else:  # a day the library does not have: an empty window says so instead of another day's answer
            return TimeWindow(to_ts(now), to_ts(now), m[0].strip())
    elif m := f.search(_ISO):
        day = datetime(int(m[1]), int(m[2]), int(m[3]))
        if m[4]:
            at = day + timedelta(hours=int(m[4]), minutes=int(m[5]))
            return TimeWindow(to_ts(at - timedelta(minutes=30)), to_ts(at + timedelta(minutes=30)), m[0])
        label = m[0]
    elif (m := f.search(_DMY)) or (m := f.search(_MDY)):
        d, mon = (m[1], m[2]) if m.re is _DMY else (m[2], m[1])
        year = int(m[3]) if m[3] else now.year
        try:
            day = datetime(year, MONTHS[mon], int(d))
        except ValueError:
            day = None
        if day is not None and not m[3] and day > now:
            day = day.replace(year=year - 1)
        label = m[0]
    elif m := f.search(_RELDAY):
        word = " ".join(m[1].split())
        if word == "last night":
            start = _day_start(now) - timedelta(hours=6)
            return TimeWindow(to_ts(start), to_ts(start + timedelta(hours=11)), word)
        if word == "earlier today":
            return TimeWindow(to_ts(_day_start(now)), to_ts(now), word)
        back = {"yesterday": 1, "the day before yesterday": 2}.get(word, 0)
        day, label = _day_start(now) - timedelta(days=back), word
        if word.startswith("this ") or word == "tonight":
            part = DAY_PARTS[word.split()[-1]]
            return TimeWindow(to_ts(day + timedelta(hours=part[0])), to_ts(day + timedelta(hours=part[1])), word)
    elif m := f.search(_WEEKDAY):
        back = (now.weekday() - WEEKDAYS[m[2]]) % 7
        if back == 0 and (m[1] or "").strip() == "last":
            back = 7
        day, label = _day_start(now) - timedelta(days=back), m[0].strip()
    else:
        return None
    return day, label


def _named_span(f: PhraseFinder, now: datetime) -> TimeWindow | None:
    """The window a phrase naming a span of time gives ("2 hours ago", "in the past 3 days", "last
    week", "in March", "in 2023"); None when none does."""
    if m := f.search(_AGO):
        unit = UNIT_SECONDS[m[2]]
        span = _number(m[1]) * unit
        if unit >= 86400:
            day = _day_start(now - timedelta(seconds=span))
            width = timedelta(seconds=max(86400, unit))
            return TimeWindow(to_ts(day), to_ts(day + width), m[0])
        half = max(unit * 0.5, 120)
        centre = to_ts(now) - span
        return TimeWindow(centre - half, centre + half, m[0])
    elif m := f.search(_PAST_N):
        return TimeWindow(to_ts(now) - _number(m[1]) * UNIT_SECONDS[m[2]], to_ts(now), m[0])
    elif m := f.search(_PERIOD):
        which, unit = m[1], m[2]
        if unit in ("week", "weekend"):
            monday = _day_start(now) - timedelta(days=now.weekday())
            start = monday - timedelta(days=7) if which in ("last", "past") else monday
            if unit == "weekend":
                start += timedelta(days=5)
                return TimeWindow(to_ts(start), to_ts(start + timedelta(days=2)), m[0])
            return TimeWindow(to_ts(start), to_ts(start + timedelta(days=7)), m[0])
        if unit == "month":
            first = _day_start(now).replace(day=1)
            start = (first - timedelta(days=1)).replace(day=1) if which in ("last", "past") else first
            end = first if which in ("last", "past") else (first + timedelta(days=32)).replace(day=1)
            return TimeWindow(to_ts(start), to_ts(end), m[0])
        year = now.year - (1 if which in ("last", "past") else 0)
        return TimeWindow(to_ts(datetime(year, 1, 1)), to_ts(datetime(year + 1, 1, 1)), m[0])
    elif m := f.search(_MONTH_ONLY):
        year = int(m[2]) if m[2] else now.year
        start = datetime(year, MONTHS[m[1]], 1)
        if not m[2] and start > now:
            start = start.replace(year=year - 1)
        end = (start + timedelta(days=32)).replace(day=1)
        return TimeWindow(to_ts(start), to_ts(end), m[0])
    elif m := f.search(_YEAR):
        year = int(m[1])
        return TimeWindow(to_ts(datetime(year, 1, 1)), to_ts(datetime(year + 1, 1, 1)), m[0])
    return None


def _latest_footage_day(window: TimeWindow, now: datetime, days: Sequence[tuple[float, float]]) -> TimeWindow:
    """A time of day named without a day ("between 17:26 and 17:27", "around noon") means the latest
    day up to the question on which the library has footage at that time (today when none has)."""
    for first, last in reversed(days):
        shift = to_ts(_day_start(from_ts(first))) - to_ts(_day_start(now))
        if shift > 0 or window.start + shift >= to_ts(now):
            continue
        if first < window.end + shift and window.start + shift <= last:
            return TimeWindow(window.start + shift, window.end + shift, window.label)
    return window


def _within_day(f: PhraseFinder, day: datetime, label: str, explicit_day: bool) -> TimeWindow | None:
    """Narrow a day by a clock range, a clock time or a part of the day ("before lunch")."""
    base = to_ts(day)
    if m := f.search(_RANGE):
        a, b = _clock(*m.groups()[0:4]), _clock(*m.groups()[4:8])
        if a is not None and b is not None:
            return TimeWindow(base + a, base + max(b, a + 1), (label + " " + m[0]).strip())
    if m := f.search(_AT):
        at = _clock(*m.groups()[0:4])
        if at is not None:
            half = 600 if m[2] else 1800
            return TimeWindow(base + at - half, base + at + half, (label + " " + m[0]).strip())
    m = next((m for m in _DAYPART.finditer(f.text) if m[1] or explicit_day), None)
    if m is not None and f.take(m):  # a bare "lunch" names food, not a time: only "before lunch", "in the morning"
        lo, hi = DAY_PARTS[m[2]]
        prep = " ".join((m[1] or "").split())
        # A meal's hours are a guess at when it was: "after breakfast" starts where breakfast may
        # start (a 07:30 breakfast, then the bus at 08:15), "before lunch" ends where lunch may end.
        if prep == "before":
            lo = 0
        elif prep == "after":
            hi = max(hi, 24)
        return TimeWindow(base + lo * 3600, base + hi * 3600, (label + " " + m[0].strip()).strip())
    if explicit_day:
        return TimeWindow(base, base + 86400, label)
    return None
