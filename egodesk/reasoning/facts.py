"""Facts a memory unit may have lost on the way from its clip: what was read on screen, the numbers and
times that were said, and what the people a question names said there.

Atomic statements and interaction records are written by a small LLM from a clip's caption; it keeps
the gist and often drops the exact text of a sign ("Bus 42 leaves 10:15") or a number said in passing,
so a question about the time on the sign was answered with the recording's start time. The caption
(the parent of the clip) still holds them: a unit built from a clip points back to it, and the
answerer is shown those facts beside the unit's own text, only the ones the text lacks. The statement
also loses who spoke ("Haniker and I talk about the exhibition", from Anika's voice): asked "When did I
last talk to Anika?", the model found no Anika and said so. The caption's lines carry their speaker, so
a named person's line in the clip is shown too.

Who was there is read from the voices as well as from the lines: a named person whose words the
recogniser lost (Declan across the meeting room, never transcribed) was still heard, so each unit is
shown the named voices heard during it that no line in its text names (`with_voices`): "Who was in the
quarterly review meeting?" is answered from who spoke, not only from whose words were recognised.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from egodesk.core.types import Evidence
from egodesk.perception.prompts import HEARD_PART, VISIBLE_TEXT, unquoted
from egodesk.retrieval.catalog import Catalog

CAPTION = "caption"
FACT_CHARS = 160  # the facts added to one unit at most: the prompt stays short
_VISIBLE = re.compile(re.escape(VISIBLE_TEXT) + r"(.+?)\.?$")
_SENTENCE = re.compile(r"[^.!?]*\d[^.!?]*[.!?]?")
_SPEAKER = re.compile(r"(?:^|(?<=\s))([A-Za-z][\w'-]{0,30}): ")  # "Anika: " opening a line of what was heard


def clip_facts(caption: str, people: Sequence[str] = ()) -> list[str]:
    """The on-screen text, the first line each of `people` said, and the spoken sentences holding a
    number, from a clip caption."""
    facts = []
    if m := _VISIBLE.search(caption):
        facts.append(f"on screen: {m[1].strip()}")
    if m := HEARD_PART.search(caption):
        speech = unquoted(m[1])
        said = speech[0] if speech else m[1]
        facts += [f"said: '{line}'" for line in first_lines(said, people)]
        facts += [f"said: '{s.strip()}'" for s in _SENTENCE.findall(said) if s.strip()]  # quoted whole, as heard
    return list(dict.fromkeys(facts))


def first_lines(said: str, people: Sequence[str]) -> list[str]:
    """The first line each of `people` speaks in what was heard ("Anika: ... me: ..."), with its speaker."""
    wanted = {name.lower() for name in people}
    starts = list(_SPEAKER.finditer(said))
    out: dict[str, str] = {}
    for m, after in zip(starts, [*starts[1:], None]):
        speaker = m[1].lower()
        if speaker in wanted and speaker not in out:
            out[speaker] = said[m.start() : after.start() if after else len(said)].strip(" …")
    return list(out.values())


def missing_from(text: str, facts: list[str]) -> list[str]:
    """The facts whose words (numbers included) the text does not already hold."""
    have = set(re.findall(r"\w+", text.lower()))
    out = []
    for fact in facts:
        words = set(re.findall(r"\w+", fact.split(": ", 1)[1].lower()))
        if words - have:
            out.append(fact)
    return out


def attach_facts(catalog: Catalog, evidence: list[Evidence], people: Sequence[str] = ()) -> list[Evidence]:
    """Set `facts` on each unit that is not itself its clip's caption: the caption's on-screen text,
    lines of `people` (the named people the question names) and spoken numbers its own text lacks.
    Returns the same list."""
    captions = catalog.mask(kinds=[CAPTION])
    for ev in evidence:
        row = catalog.row(ev.unit_id)
        if row is None or ev.kind == CAPTION or catalog.clip[row] < 0:
            continue
        found = np.flatnonzero(captions & (catalog.clip == catalog.clip[row]))
        if not len(found):
            continue
        facts = missing_from(ev.text, clip_facts(catalog.text[int(found[0])], people))
        text = "; ".join(facts)
        ev.facts = text if len(text) <= FACT_CHARS else text[: FACT_CHARS - 1] + "…"
    return evidence


def with_voices(evidence: list[Evidence], voices: Sequence[Sequence[str]]) -> list[Evidence]:
    """Add to each unit's facts the named voices heard during it (`voices`, one list per unit, from
    `retrieval.people.voices_during`) that no line of its text shows ("Name: ") and its facts do not
    name. Returns the same list."""
    for ev, names in zip(evidence, voices):
        text = ev.text.lower()
        unseen = [
            name
            for name in names
            if f"{name.lower()}: " not in text and not re.search(rf"\b{re.escape(name)}\b", ev.facts, re.IGNORECASE)
        ]
        if unseen:
            ev.facts = "; ".join(filter(None, [ev.facts, "voices heard: " + ", ".join(unseen)]))
    return evidence
