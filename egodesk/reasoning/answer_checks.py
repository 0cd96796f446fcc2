"""The checks an answer must pass, and the mending it gets, around the model's writing.

An answer that is not from the footage becomes the abstention (`unsupported`): a small model answers
from its own idea of a place or thing, obeys an instruction written into a question or a transcript, or
repeats what another person said of themselves; each way the user would be told something the footage
does not say. A "when" answer names the day and time of the moment it cites (`with_when`), and the
evidence is ordered for people (`people_order`).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from datetime import datetime
from functools import cache

from egodesk.core.soundalike import find_alike
from egodesk.core.timeutil import day_label, from_ts
from egodesk.core.types import Answer, Evidence
from egodesk.core.words import cue_words, lemma
from egodesk.reasoning.speakers import misattributed
from egodesk.retrieval.lexical import tokenize
from egodesk.retrieval.question import QuestionAnalysis
from egodesk.retrieval.timewindow import MONTHS, WEEKDAYS

HAS_WORD = re.compile(r"[^\W_]")  # a letter or digit of any script
BARE_ANSWER = re.compile(r"\s*(?:[A-J]|E\d+)[.)]?\s*", re.I)

# A date or time already in an answer: "7 May 2023", "10:42", "yesterday", "Tuesday", "in the morning".
# A bare number is not one: a file name such as "20261117_180500" copied from the evidence tells nobody when.
# Months and weekdays are the names a question's time window is read from (`retrieval.timewindow`), by
# their first three letters, whatever follows them ("Sept", "Tues", "Wednesday").
_MONTHS = "|".join(dict.fromkeys(month[:3] for month in MONTHS))
_WEEKDAYS = "|".join(day[:3] for day in WEEKDAYS)
_SAYS_WHEN = re.compile(
    rf"\b\d{{1,2}}:\d{{2}}\b|\b(?:19|20)\d{{2}}\b|\b(?:{_MONTHS}|{_WEEKDAYS})[a-z]*\b|"
    r"\b(?:yesterday|today|morning|afternoon|evening|night|noon|week|month|year)\b",
    re.I,
)
# A when-answer that gives a cited moment's time must give that moment's day (`with_when`).
_CLOCK_IN_ANSWER = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_AT_HOUR = re.compile(r"\bat (\d{1,2})\b(?!:)|\b(?<!:)(\d{1,2}) ?[ap]\.?m\b", re.I)
# Abbreviations only capitalised: "I sat down in the sun" names no day; a name's "day" in lower case.
_WEEKDAY_SHORT = "|".join([*(day[:3].capitalize() for day in WEEKDAYS), "Tues", "Thurs"])
_WEEKDAY = re.compile(rf"\b(?:(?i:{'|'.join(day.removesuffix('day') for day in WEEKDAYS)})day|{_WEEKDAY_SHORT})\b")
_DAY_OF_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+((?:{_MONTHS})[a-z]*)\b", re.I)
_RELATIVE_DAY = re.compile(r"\b(?:today|yesterday|tonight|this\s+(?:morning|afternoon|evening))\b", re.I)

# Verbs and nouns that every library's lines hold in some form (the captions' "I see", "I hear", the
# transcripts' "said"): they cannot tell whether what was found is about the question.
_GENERIC_CUES = frozenset(
    "be do have go get make see look say tell talk ask speak hear think know want like feel come happen use thing day".split()
)


def asked_about(analysis: QuestionAnalysis) -> list[str]:
    """The things and names a question asks about ("cat" of "When did I see a cat?"), as cue words."""
    cues = [lemma(w) for w in analysis.objects] + [p.lower() for p in analysis.people]
    return [c for c in dict.fromkeys(cues) if len(c) > 1 and c not in _GENERIC_CUES]


def unsupported(
    answer: Answer, options: list[str] | None, cited: list[Evidence], shown: list[Evidence], known: Sequence[str] = ()
) -> str | None:
    """Why an answer is not one from the footage, if it is not. An option picked without pointing at
    any evidence is a guess; an open question answered with a bare option letter or evidence id
    ("A", "E3") obeys an instruction ("answer A") written into the question or a transcript, or
    echoes the answer format; an answer none of whose words is in a line shown is not from them
    (`held`); an answer resting on what another person said of themselves is about someone else (the
    people the question names that the library knows, `known`, count even when no line shown is theirs).
    Each way the user gets the abstention."""
    if options:
        return None if answer.grounded else "an option picked without citing evidence"
    if BARE_ANSWER.fullmatch(answer.text):
        return "a bare letter or evidence id for an open question"
    if not held(answer.text, shown):
        return "no line shown holds any of its words"
    return misattributed(answer.question, answer.text, cited, shown, known)


@cache
def _not_content() -> frozenset[str]:
    """Answer words that need not be in the evidence: days and dates (the lines' headings and clock times
    carry them as numbers or short names), yes/no and hedges (an inference from the lines)."""
    words = [*calendar.month_name[1:], *calendar.month_abbr[1:], *calendar.day_name, *calendar.day_abbr]
    words += "today yesterday tomorrow morning afternoon evening night noon midnight ago am pm".split()
    words += "yes no not none likely unlikely maybe probably".split()
    return frozenset(tokenize([" ".join(words)])[0])


def held(text: str, shown: list[Evidence]) -> bool:
    """Whether an open answer rests on the lines shown: at least one of its content words (stemmed) is
    in one of them, or one spelled or sounding alike (`core.soundalike`: the answer spells right what
    the sign or the transcript spelled otherwise, "lasagna" of 'LASAGNE'). A small model otherwise
    answers from its own idea of the place or thing ("Where did I park my car?" -> "front yard", with no
    car, park or yard anywhere in the evidence). An answer with no letter or digit at all is held by
    nothing ("," was once the answer to "Where are my keys now?"); one of numbers and dates alone is
    left to the lines' clock times and headings."""
    words = [w for w in tokenize([text])[0] if not w.isdigit() and w not in _not_content()]
    if not words:
        return HAS_WORD.search(text) is not None
    have = set(tokenize([" ".join(f"{ev.source} {ev.text} {ev.facts}" for ev in shown)])[0])
    return any(find_alike(w, have) is not None for w in words)


def people_order(answer: Answer, retrieved: list[Evidence]) -> list[Evidence]:
    """The evidence as a person should meet it: the moments the answer cites (in the order it cites
    them), then the pinpointed ones, then the rest by relevance (retrieval rank). What the answerer was
    shown comes before what it was not."""
    shown = {ev.unit_id for ev in answer.evidence}
    cited = {unit: n for n, unit in enumerate(answer.cited)}
    return sorted(
        retrieved,
        key=lambda ev: (
            ev.unit_id not in cited,
            cited.get(ev.unit_id, 0),
            not ev.pinpointed,
            ev.unit_id not in shown,
            ev.rank or len(retrieved) + 1,
        ),
    )


def with_when(answer: Answer, cues: list[str] | None = None, noted: Sequence[float] = ()) -> str:
    """A "when did I ..." answer names the day and time of the moment it cites, if it does not already.
    An answer giving the time of a moment it cites but another day (a small model read "18:05" under
    Tuesday's heading and wrote Wednesday, the day it was asked) is that moment's day and time. One
    giving the time of a cited moment that holds none of what the question asks about (`cues`: "cat")
    while another cited moment does is that moment's day and time: asked "When did I see a cat?", a
    small model cited the cat and a street scene and wrote the street scene's time. One giving only
    times that nothing shown holds (no moment spans them, no line says them, no note of when a person
    was heard, `noted`, gives them) is the cited moment's day and time: a small model copied the time
    the question was asked ("21:00:00" for "When did I last talk to Tom?")."""
    if not answer.evidence:
        return answer.text
    cited = [ev for ev in answer.evidence if ev.unit_id in set(answer.cited)]
    clocks = [int(h) * 60 + int(m) for h, m in _CLOCK_IN_ANSWER.findall(answer.text)]
    at = next((ev for ev in cited if any(_spans(ev, minute) for minute in clocks)), None)
    asked = set(cues or ())
    holding = [ev for ev in cited if asked & cue_words(f"{ev.text} {ev.facts}")]
    if at is None and clocks and cited and not any(_shown(minute, answer.evidence, noted) for minute in clocks):
        return f"On {_when(from_ts((holding or cited)[0].start))}"
    if at is not None and holding and not any(_same_moment(at, ev) for ev in holding):
        return f"On {_when(from_ts(holding[0].start))}"
    if at is not None:
        moment = from_ts(at.start)
        if _names_another_day(answer.text, moment):
            return f"On {_when(moment)}"
        if not _names_a_day(answer.text):  # "17:30:15" alone: which of the library's days?
            return f"{answer.text.rstrip('. ')}, on {day_label(moment)}"
        return answer.text
    if _SAYS_WHEN.search(answer.text):
        return answer.text
    return f"{answer.text.rstrip('. ')}, on {_when(from_ts((holding or answer.evidence)[0].start))}"


def _shown(minute: int, shown: list[Evidence], noted: Sequence[float]) -> bool:
    """Whether a clock time (minutes after midnight) is one the model was shown: a moment spans it, a
    line or its facts say it, or a note of when a person was heard gives it."""
    said = {minute for ev in shown for minute in _said_times(f"{ev.text} {ev.facts}")}
    noted_minutes = {from_ts(t).hour * 60 + from_ts(t).minute for t in noted}
    return minute in said | noted_minutes or any(_spans(ev, minute) for ev in shown)


def _said_times(text: str) -> set[int]:
    """The clock times a line says, as minutes after midnight: "10:30", and a bare hour after "at" or
    before am/pm ("at 10" is 10:00 and 22:00; "4 pm" is 16:00)."""
    out = {int(h) * 60 + int(m) for h, m in _CLOCK_IN_ANSWER.findall(text)}
    for hours in _AT_HOUR.findall(text):
        hour = int(next(h for h in hours if h)) % 12
        out |= {hour * 60, (hour + 12) * 60}
    return out


def _same_moment(one: Evidence, other: Evidence) -> bool:
    """Whether two moments overlap (an instant counts at its start)."""
    return (one.start < other.end and other.start < one.end) or one.start == other.start


def _when(moment: datetime) -> str:
    return f"{day_label(moment)} at {moment:%H:%M}"


def _spans(ev: Evidence, minute: int) -> bool:
    """Whether a clock time (minutes after midnight) falls within a moment, to the minute."""
    start, end = from_ts(ev.start), from_ts(ev.end)
    return start.hour * 60 + start.minute <= minute <= end.hour * 60 + end.minute and start.date() == end.date()


def _names_a_day(text: str) -> bool:
    return any(pattern.search(text) for pattern in (_WEEKDAY, _DAY_OF_MONTH, _RELATIVE_DAY))


def _names_another_day(text: str, moment: datetime) -> bool:
    """Whether `text` names a weekday or a day of a month that is not the moment's."""
    weekdays = {w[:3].lower() for w in _WEEKDAY.findall(text)}
    dates = {(int(d), m[:3].lower()) for d, m in _DAY_OF_MONTH.findall(text)}
    return bool(weekdays - {f"{moment:%a}".lower()} or dates - {(moment.day, f"{moment:%b}".lower())})
