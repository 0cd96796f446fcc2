"""`people`: the question's named people, found by their voices and faces.

A person named once in the People panel is known by their voice in every footage, said or not: "What did
Tom say about the brakes?" holds Tom's words even when the recogniser heard "Ride carefully, the break
is a bit soft" and never the name. A question naming a named voice ("Tom", "Anika's") is searched inside
the footage where that voice was heard, with the `context` ranking (dense + BM25 with neighbours), so
the member proposes the moments with that person that best match the rest of the question; `auto` fuses
it with the others. A name no voice carries leaves the member silent: the words are searched as words.

A named face counts the same way ("seen with whom"): "What did Ana show me?" is searched in the footage
where a face called Ana was seen, as well as where a voice called Ana was heard (one person: one name).
When they were met (`meetings`, the prompt's note) is read from the voices alone: a face seen across the
room is not a talk.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from sqlalchemy import func, select

from egodesk.core.types import Evidence
from egodesk.memory.schema import Face, FaceSighting, SpeechTurn, Voice, VoiceAppearance
from egodesk.memory.store import Store
from egodesk.retrieval.base import Query, Strategy
from egodesk.retrieval.context import Context


@dataclass(frozen=True)
class HeardPerson:
    """A named voice (or face) and the footage it was heard (or seen) in (ids, in no order)."""

    name: str
    footage: frozenset[int]


def named_voices(store: Store) -> dict[str, HeardPerson]:
    """Every named voice by its name in lower case; two voices with one name (not yet merged) are one person."""
    with store.session() as session:
        rows = session.execute(
            select(Voice.name, VoiceAppearance.footage_id).join(VoiceAppearance, VoiceAppearance.voice_id == Voice.id)
        ).all()
    footage: dict[str, set[int]] = {}
    names: dict[str, str] = {}
    for name, footage_id in rows:
        if name:
            footage.setdefault(name.lower(), set()).add(footage_id)
            names.setdefault(name.lower(), name)
    return {key: HeardPerson(names[key], frozenset(ids)) for key, ids in footage.items()}


def named_people(store: Store) -> dict[str, HeardPerson]:
    """Every named voice and named face by its name in lower case, with the footage where that name was
    heard or seen: a voice and a face with one name are one person."""
    people = named_voices(store)
    with store.session() as session:
        rows = session.execute(
            select(Face.name, FaceSighting.footage_id).join(FaceSighting, FaceSighting.face_id == Face.id).distinct()
        ).all()
    seen: dict[str, set[int]] = {}
    names: dict[str, str] = {}
    for name, footage_id in rows:
        if name:
            seen.setdefault(name.lower(), set()).add(footage_id)
            names.setdefault(name.lower(), name)
    for key, ids in seen.items():
        known = people.get(key)
        people[key] = HeardPerson(known.name if known else names[key], frozenset(ids) | (known.footage if known else frozenset()))
    return people


def footage_of(people: list[HeardPerson]) -> set[int]:
    """The footage where any of `people` was heard or seen."""
    return set().union(*(p.footage for p in people))


def people_asked_about(store: Store, query: Query) -> list[HeardPerson]:
    """The named people (voices, faces) the question names, in the question's order."""
    names = query.analysis.people
    if not names:
        return []
    people = named_people(store)
    return [people[n.lower()] for n in names if n.lower() in people]


@dataclass(frozen=True)
class Meetings:
    """When a named person was heard: the start of their first turn in each footage, in time order."""

    name: str
    starts: tuple[float, ...]


def meetings(store: Store, query: Query) -> list[Meetings]:
    """For each named voice the question names, the footage they were heard in, as the time their first
    turn there began; inside the question's time window and before its cutoff. A count or a "when did I
    last talk to Tom" is read from the voices, not from lines a small model must count."""
    out = []
    window = query.window
    voices = named_voices(store)
    for person in [voices[n.lower()] for n in query.analysis.people if n.lower() in voices]:  # not faces: see above
        with store.session() as session:
            rows = session.execute(
                select(SpeechTurn.footage_id, SpeechTurn.start_ts, SpeechTurn.end_ts)
                .join(Voice, Voice.id == SpeechTurn.voice_id)
                .where(func.lower(Voice.name) == person.name.lower())
                .order_by(SpeechTurn.start_ts)
            ).all()
        first: dict[int, float] = {}
        for footage_id, start, end in rows:
            if query.cutoff is not None and start >= query.cutoff:
                continue
            if window is not None and not window.contains(start, end):
                continue
            first.setdefault(footage_id, start)
        out.append(Meetings(person.name, tuple(sorted(first.values()))))
    return out


def voices_during(store: Store, moments: Sequence[tuple[int, float, float]]) -> list[list[str]]:
    """For each moment (footage id, wall-clock start, end): the names of the named voices whose turns
    overlap it, in the order they first spoke there; the wearer's own voice is not one of them."""
    footage = {footage_id for footage_id, _, _ in moments}
    if not footage:
        return []
    with store.session() as session:
        rows = session.execute(
            select(SpeechTurn.footage_id, SpeechTurn.start_ts, SpeechTurn.end_ts, Voice.name)
            .join(Voice, Voice.id == SpeechTurn.voice_id)
            .where(SpeechTurn.footage_id.in_(footage), Voice.name.is_not(None), Voice.wearer_said.is_(False))
            .order_by(SpeechTurn.start_ts)
        ).all()
    out = []
    for footage_id, start, end in moments:
        names = [name for f, a, b, name in rows if name and f == footage_id and a < end and b > start]
        out.append(list(dict.fromkeys(names)))
    return out


class People(Strategy):
    name = "people"

    def available(self) -> bool:
        return Context(self.memory).available()

    def retrieve(self, query: Query) -> list[Evidence]:
        people = people_asked_about(self.memory.store, query)
        if not people:
            return []
        heard = footage_of(people)
        asked_in = self.memory.catalog().footage_ids(query.sources)
        if asked_in is not None:
            heard &= asked_in
        if not heard:
            return []
        found = Context(self.memory).retrieve(replace(query, sources=sorted(heard), _analysis=query.analysis))
        for ev in found:
            ev.strategy = self.name
        return found
