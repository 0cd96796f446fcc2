"""Relative dates in a memory, resolved against the moment it was said or seen.

"I went to the support group yesterday", said on 8 May 2023, is shown to the answerer as "... yesterday
[7 May 2023] ...": asked "when did I go?", a small model otherwise answers with the day the line was said
(LoCoMo, 200 questions: most temporal misses named the line's own date although the prompt said
"yesterday" is relative to it). Vague phrases ("recently", "the other day") are left as they are.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from egodesk.retrieval.timewindow import NUMBERS, WEEKDAYS

EXACT_NUMBERS = {word: n for word, n in NUMBERS.items() if word not in ("a few", "few", "several")}
_NUMBER = r"\d{1,3}|" + "|".join(sorted(EXACT_NUMBERS, key=len, reverse=True))
_WEEKDAY = "|".join(WEEKDAYS)

RELATIVE = re.compile(
    r"\b(?:(?P<shift>the\s+day\s+before\s+yesterday|the\s+day\s+after\s+tomorrow|yesterday|last\s+night|tomorrow)"
    rf"|(?P<dir>last|this\s+past|next|this\s+coming)\s+(?P<unit>{_WEEKDAY}|weekend|week|month|year)"
    rf"|(?P<count>{_NUMBER})\s+(?P<span>day|week|month|year)s?\s+ago)\b",
    re.IGNORECASE,
)
SHIFTS = {"the day before yesterday": -2, "yesterday": -1, "last night": -1, "tomorrow": 1, "the day after tomorrow": 2}


def _date(day: date) -> str:
    return f"{day.day} {day:%B %Y}"


def _month(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _resolve(match: re.Match, day: date) -> str:
    if match["shift"]:
        return _date(day + timedelta(days=SHIFTS[" ".join(match["shift"].lower().split())]))
    if match["count"]:
        count = EXACT_NUMBERS.get(" ".join(match["count"].lower().split())) or int(match["count"])
        span = match["span"].lower()
        if span == "day":
            return _date(day - timedelta(days=count))
        if span == "week":
            return f"about {_date(day - timedelta(weeks=count))}"
        if span == "month":
            return f"{_month(day, -count):%B %Y}"
        return str(day.year - count)
    back = not re.match(r"next|this\s+coming", match["dir"], re.IGNORECASE)
    unit = match["unit"].lower()
    if unit in WEEKDAYS:
        if back:
            return _date(day - timedelta(days=(day.weekday() - WEEKDAYS[unit]) % 7 or 7))
        return _date(day + timedelta(days=(WEEKDAYS[unit] - day.weekday()) % 7 or 7))
    if unit == "weekend":
        if back:
            sunday = day - timedelta(days=(day.weekday() + 1) % 7 or 7)
        else:
            sunday = day + timedelta(days=(6 - day.weekday()) or 7)
        saturday = sunday - timedelta(days=1)
        return f"{saturday.day}-{_date(sunday)}" if saturday.month == sunday.month else f"{_date(saturday)} - {_date(sunday)}"
    if unit == "week":
        return f"the week {'before' if back else 'after'} {_date(day)}"
    if unit == "month":
        return f"{_month(day, -1 if back else 1):%B %Y}"
    return str(day.year - 1 if back else day.year + 1)


def annotate(text: str, moment: datetime) -> str:
    """`text` with each relative date followed by the date it means, in brackets."""
    day = moment.date()
    return RELATIVE.sub(lambda match: f"{match[0]} [{_resolve(match, day)}]", text)
