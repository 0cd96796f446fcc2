"""Who said it: an answer that puts one person's words in another's mouth is not an answer.

Dialogue evidence reads "Ana: I adopted a cat." A question about Ben ("What did Ben adopt?") finds that
line, and a small model answers "a cat" from it. The check: when the question names exactly one of
the speakers in the lines the model was shown, take the cited line whose words the answer shares
most; if another speaker says it of themselves (I, my, me; not to the person asked about: no "you",
not naming them other than to call them, as in "Hey Ben, I ran a race"), the footage does not say it of the
person asked about. On LoCoMo's first 200 questions (recorded replies), this turned 8 of 47 questions about
things that never happened to the person named into abstentions and no answerable one.

A footage's line holds several turns ("Sam: The plumber is coming. me: Then I will work from home."), the
wearer's own labelled "me"; each turn counts. The wearer is someone else only to a question that does not
speak of them (no I, me, my): "What did Declan say?" is not answered with the wearer's "I will ...". The
person asked about may be one the footage shown never heard: the note of when each person the question
names was heard names them (`known`), so the answer cannot rest on another's words there either.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from egodesk.core.types import Evidence
from egodesk.memory.people import ME as WEARER
from egodesk.perception.prompts import VISIBLE_TEXT

_SPEAKER = re.compile(r"^\s*([A-Z][\w'-]{1,30}):\s+(.*)$", re.S)
# A line's turns: a capitalised name (or the wearer's label) and a colon, opening the line or its quote
# or after a sentence's or clause's end ("I hear: 'Tom: ..., me: ..."); a title's colon ("Counter-Strike:
# Global Offensive", after a plain word) and a sign's capitals ('DEPARTURES: DUBLIN') are no turns.
_TURN = re.compile(rf"(?:^\s*|(?<=')|(?<=[.!?,…]\s))([A-Z][a-z][\w'-]{{0,29}}|{WEARER}):\s+")
# Where a caption's quoted speech ends: the quote closed before its on-screen text or at its end.
_SPEECH_END = re.compile(rf"'\.?(?=\s+{re.escape(VISIBLE_TEXT)}|\s*$)")
_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|i'll|my|me|mine|myself)\b", re.I)
_SECOND_PERSON = re.compile(r"\b(you|your|you're|you've|yours)\b", re.I)
_WORD = re.compile(r"[a-z0-9']+")
# Words that call the listener before their name ("Hey Ben,", "Thanks, Ben!"): the line is said to them, not of them.
_CALLING = r"(?i:hey|hi|hello|thanks|thank you|wow|oh|aw+|yeah|yes|congrats|congratulations)"
_COMMON = {"the", "and", "for", "her", "his", "she", "they", "was", "with", "that", "this", "has", "have", "had"}


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2} - _COMMON


def _names_them(person: str, body: str) -> bool:
    """Whether the line speaks of `person`, not only calls them: an address ("Hey Ben,", "..., Ben!", a
    line opening "Ben, ...") is cut before looking for the name."""
    name = re.escape(person)
    address = rf"(?:^|[,.!?]\s*|\b{_CALLING},?\s+){name}\s*(?=[,.!?]|$)"
    return re.search(rf"\b{name}\b", re.sub(address, " ", body)) is not None


def turn(text: str) -> tuple[str, str] | None:
    """A dialogue line's speaker and words ("Ana: I adopted a cat." -> ("Ana", "I adopted a cat.")); None
    when it opens with no one's name ("I see a whiteboard. I hear: ...", "I read on screen: ...")."""
    m = _SPEAKER.match(text)
    return (m.group(1), m.group(2)) if m else None


def turns(text: str) -> list[tuple[str, str]]:
    """Every turn of a line, in order ("Sam: The plumber is coming. me: Ok." -> [("Sam", "The plumber is
    coming."), ("me", "Ok.")]); each turn's words end at the next turn or the end of its quote."""
    marks = list(_TURN.finditer(text))
    out = []
    for mark, after in zip(marks, [*marks[1:], None]):
        body = text[mark.end() : after.start() if after is not None else len(text)]
        out.append((mark.group(1), _SPEECH_END.split(body, maxsplit=1)[0].strip()))
    return out


def _spoken(lines: list[Evidence]) -> list[tuple[str, str]]:
    return [spoken for ev in lines for spoken in turns(ev.text)]


def misattributed(
    question: str, answer: str, cited: list[Evidence], shown: list[Evidence], known: Sequence[str] = ()
) -> str | None:
    """Why the answer rests on what someone other than the person asked about said of themselves,
    or None when it does not (or the lines are not dialogue, or the question names no one speaking
    in the lines `shown` to the model nor one of the `known` people)."""
    speakers = {name for name, _ in _spoken(shown)} | set(known)
    if _FIRST_PERSON.search(question):
        speakers.discard(WEARER)  # the wearer is asked about too
    spoken = [(name, body) for name, body in _spoken(cited) if name in speakers]
    named = [name for name in speakers if name != WEARER and re.search(rf"\b{re.escape(name)}\b", question)]
    if len(named) != 1:
        return None
    person = named[0]
    words = _content_words(answer) - {person.lower()}
    overlap = [len(words & _content_words(body)) for _, body in spoken]
    if not overlap or max(overlap) == 0:
        return None
    speaker, body = spoken[overlap.index(max(overlap))]
    if speaker == person or _names_them(person, body) or _SECOND_PERSON.search(body) or not _FIRST_PERSON.search(body):
        return None
    return f"{speaker} said this of themselves; the question asks about {person}"
