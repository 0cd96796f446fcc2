"""Who said it: an answer that puts one person's words in another's mouth is not an answer.

Dialogue evidence reads "Ana: I adopted a cat." A question about Ben ("What did Ben adopt?") finds that
line, and a small model answers "a cat" from it. The check: when the question names exactly one of
the speakers in the lines the model was shown, take the cited line whose words the answer shares
most; if another speaker says it of themselves (I, my, me; not to the person asked about: no "you",
not naming them other than to call them, as in "Hey Ben, I ran a race"), the footage does not say it of the
person asked about. On LoCoMo's first 200 questions (recorded replies), this turned 8 of 47 questions about
things that never happened to the person named into abstentions and no answerable one.
"""

from __future__ import annotations

import re

from egodesk.core.types import Evidence

_SPEAKER = re.compile(r"^\s*([A-Z][\w'-]{1,30}):\s+(.*)$", re.S)
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


def _spoken(lines: list[Evidence]) -> list[tuple[str, str]]:
    return [spoken for ev in lines if (spoken := turn(ev.text))]


def misattributed(question: str, answer: str, cited: list[Evidence], shown: list[Evidence]) -> str | None:
    """Why the answer rests on what someone other than the person asked about said of themselves,
    or None when it does not (or the lines are not dialogue, or the question names no one speaking
    in the lines `shown` to the model)."""
    spoken = _spoken(cited)
    speakers = {name for name, _ in _spoken(shown)}
    named = [name for name in speakers if re.search(rf"\b{re.escape(name)}\b", question)]
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
