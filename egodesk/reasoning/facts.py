"""Facts a memory unit may have lost on the way from its clip: what was read on screen, and the
numbers and times that were said.

Atomic statements and interaction records are written by a small LLM from a clip's caption; it keeps
the gist and often drops the exact text of a sign ("Bus 42 leaves 10:15") or a number said in passing,
so a question about the time on the sign was answered with the recording's start time. The caption
(the parent of the clip) still holds them: a unit built from a clip points back to it, and the
answerer is shown those facts beside the unit's own text, only the ones the text lacks.
"""

from __future__ import annotations

import re

import numpy as np

from egodesk.core.types import Evidence
from egodesk.perception.prompts import HEARD_PART, VISIBLE_TEXT, unquoted
from egodesk.retrieval.catalog import Catalog

CAPTION = "caption"
FACT_CHARS = 160  # the facts added to one unit at most: the prompt stays short
_VISIBLE = re.compile(re.escape(VISIBLE_TEXT) + r"(.+?)\.?$")
_SENTENCE = re.compile(r"[^.!?]*\d[^.!?]*[.!?]?")


def clip_facts(caption: str) -> list[str]:
    """The on-screen text and the spoken sentences holding a number, from a clip caption."""
    facts = []
    if m := _VISIBLE.search(caption):
        facts.append(f"on screen: {m[1].strip()}")
    if m := HEARD_PART.search(caption):
        speech = unquoted(m[1])
        said = speech[0] if speech else m[1]
        facts += [f"said: '{s.strip()}'" for s in _SENTENCE.findall(said) if s.strip()]  # quoted whole, as heard
    return facts


def missing_from(text: str, facts: list[str]) -> list[str]:
    """The facts whose words (numbers included) the text does not already hold."""
    have = set(re.findall(r"\w+", text.lower()))
    out = []
    for fact in facts:
        words = set(re.findall(r"\w+", fact.split(": ", 1)[1].lower()))
        if words - have:
            out.append(fact)
    return out


def attach_facts(catalog: Catalog, evidence: list[Evidence]) -> list[Evidence]:
    """Set `facts` on each unit that is not itself its clip's caption: the caption's on-screen text and
    spoken numbers its own text lacks. Returns the same list."""
    captions = catalog.mask(kinds=[CAPTION])
    for ev in evidence:
        row = catalog.row(ev.unit_id)
        if row is None or ev.kind == CAPTION or catalog.clip[row] < 0:
            continue
        found = np.flatnonzero(captions & (catalog.clip == catalog.clip[row]))
        if not len(found):
            continue
        facts = missing_from(ev.text, clip_facts(catalog.text[int(found[0])]))
        text = "; ".join(facts)
        ev.facts = text if len(text) <= FACT_CHARS else text[: FACT_CHARS - 1] + "…"
    return evidence
