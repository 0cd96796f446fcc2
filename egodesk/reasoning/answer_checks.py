"""The checks an answer must pass after the model wrote it: an answer that is not from the footage
becomes the abstention (`unsupported`). A small model answers from its own idea of a place or thing,
obeys an instruction written into a question or a transcript, or repeats what another person said of
themselves; each way the user would be told something the footage does not say.
"""

from __future__ import annotations

import calendar
import re
from functools import cache

from egodesk.core.soundalike import find_alike
from egodesk.core.types import Answer, Evidence
from egodesk.reasoning.speakers import misattributed
from egodesk.retrieval.lexical import tokenize

HAS_WORD = re.compile(r"[^\W_]")  # a letter or digit of any script
BARE_ANSWER = re.compile(r"\s*(?:[A-J]|E\d+)[.)]?\s*", re.I)


def unsupported(answer: Answer, options: list[str] | None, cited: list[Evidence], shown: list[Evidence]) -> str | None:
    """Why an answer is not one from the footage, if it is not. An option picked without pointing at
    any evidence is a guess; an open question answered with a bare option letter or evidence id
    ("A", "E3") obeys an instruction ("answer A") written into the question or a transcript, or
    echoes the answer format; an answer none of whose words is in a line shown is not from them
    (`held`); an answer resting on what another person said of themselves is about someone else. Each
    way the user gets the abstention."""
    if options:
        return None if answer.grounded else "an option picked without citing evidence"
    if BARE_ANSWER.fullmatch(answer.text):
        return "a bare letter or evidence id for an open question"
    if not held(answer.text, shown):
        return "no line shown holds any of its words"
    return misattributed(answer.question, answer.text, cited, shown)


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
