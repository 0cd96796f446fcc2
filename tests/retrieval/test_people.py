"""A question naming a named voice is searched where that voice was heard (`retrieval/people.py`)."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pytest

from egodesk.core.settings import Settings
from egodesk.memory.schema import SpeechTurn, Voice, VoiceAppearance
from egodesk.retrieval.auto import Auto
from egodesk.retrieval.base import Memory, Query
from egodesk.retrieval.people import People, meetings, named_people, named_voices, voices_during

from .conftest import build_library, entry

MORNING = datetime(2026, 11, 17, 8, 15)
OFFICE = datetime(2026, 11, 17, 10, 0)


def rows() -> list[dict]:
    # The name is never said: only the voice tells whose words these are.
    street = ["Good morning.", "The number forty two bus is late again.", "See you tonight."]
    office = ["What did you say about the bus? I said the bus was fine.", "I will print the report.", "Coffee is ready."]
    out = [entry("street", MORNING + timedelta(seconds=10 * i), 5, "transcript", t, i) for i, t in enumerate(street)]
    return out + [entry("office", OFFICE + timedelta(seconds=10 * i), 5, "transcript", t, i) for i, t in enumerate(office)]


@pytest.fixture(scope="module")
def library(tmp_path_factory, embedder):
    return build_library(tmp_path_factory.mktemp("people-library"), embedder, rows())


def hear(store, name: str | None, title: str) -> None:
    """A voice (named or not) heard in the footage called `title`."""
    from egodesk.memory.store import Footage

    with store.session() as session:
        footage_id = session.query(Footage.id).filter(Footage.title == title).scalar()
        print_ = np.ones(4, dtype=np.float32).tobytes()
        voice = Voice(name=name, centroid=print_, seconds=3.0, count=1)
        session.add(voice)
        session.flush()
        session.add(VoiceAppearance(voice_id=voice.id, footage_id=footage_id, centroid=print_, seconds=3.0, level_db=-20.0))
        start = session.query(Footage.start_ts).filter(Footage.id == footage_id).scalar()
        for at in (10.0, 20.0):  # two turns: one meeting
            session.add(SpeechTurn(footage_id=footage_id, voice_id=voice.id, start_ts=start + at, end_ts=start + at + 4.0))
        session.commit()


def test_a_named_voice_is_searched_where_it_was_heard_and_an_unknown_name_is_not(library, embedder):
    store, indices = library
    memory = Memory(store, indices, embedder, settings=Settings())
    question = Query("What did Tom say about the bus?", k=4)
    assert People(memory).retrieve(question) == []  # no voice is Tom yet: the words are searched as words
    assert Auto(memory).retrieve(question)[0].source == "office"  # the closer wording, by someone else
    hear(store, None, "office")  # an unnamed voice does not make a name
    hear(store, "Tom", "street")
    assert set(named_voices(store)) == {"tom"}
    found = People(memory).retrieve(Query("What did Tom say about the bus?", k=4))
    assert found and {ev.source for ev in found} == {"street"}
    assert "forty two bus" in found[0].text
    assert People(memory).retrieve(Query("What did Sara say about the bus?", k=4)) == []
    fused = Auto(memory).retrieve(Query("What did Tom say about the bus?", k=4))
    assert fused[0].source == "street" and "people" in fused[0].ranks


def test_when_a_named_person_was_heard_is_one_time_per_footage_inside_the_window_asked(library, embedder):
    store, _ = library
    if "tom" not in named_voices(store):
        hear(store, "Tom", "street")
    from egodesk.core.timeutil import to_ts

    [tom] = meetings(store, Query("How many times did I talk to Tom?"))
    assert tom.name == "Tom" and tom.starts == (to_ts(MORNING) + 10.0,)
    asked = Query("Did I talk to Tom this afternoon?", asked_at=to_ts(MORNING) + 8 * 3600)
    assert meetings(store, asked)[0].starts == ()  # not heard in the afternoon
    assert meetings(store, Query("How many times did I talk to Tom?", cutoff=to_ts(MORNING))) == [meetings(store, asked)[0]]


@pytest.mark.parametrize(
    ("question", "noted"),
    [
        ("How many times did I talk to Tom?", True),
        ("When did I last talk to Tom?", True),
        ("Did I talk to Tom today?", True),
        ("What did Tom say about the bus?", False),  # what he said, not when: the times only distract
        ("Who did Tom say was late?", False),
        ("What did Tom say this afternoon?", True),  # not heard then: that is worth knowing
    ],
)
def test_when_a_named_person_was_heard_is_noted_unless_the_question_asks_what_was_said(library, embedder, question, noted):
    from egodesk.pipeline.ask import Retrieval, prompt_inputs

    store, indices = library
    if "tom" not in named_voices(store):
        hear(store, "Tom", "street")
    from egodesk.core.timeutil import to_ts

    memory = Memory(store, indices, embedder, settings=Settings())
    asked = Query(question, asked_at=to_ts(MORNING) + 8 * 3600)  # Tom was heard that morning
    _, heard = prompt_inputs(memory, Retrieval(None, asked, [], 0.0))  # type: ignore[arg-type]
    assert [name for name, _ in heard] == (["Tom"] if noted else [])


def see(store, name: str, title: str) -> None:
    """A face called `name` seen once in the footage called `title` (its print: any 128 floats)."""
    from egodesk.memory.schema import Clip, Face, FaceSighting
    from egodesk.memory.store import Footage

    with store.session() as session:
        footage = session.query(Footage).filter(Footage.title == title).one()
        clip = session.query(Clip).filter(Clip.footage_id == footage.id).order_by(Clip.idx).first()
        print_ = np.full(128, 0.1, dtype=np.float32).tobytes()
        face = Face(name=name, centroid=print_, sightings=1, count=1)
        session.add(face)
        session.flush()
        session.add(
            FaceSighting(
                footage_id=footage.id,
                clip_id=clip.id,
                offset=1.0,
                ts=footage.start_ts + 1.0,
                left=10,
                top=10,
                right=110,
                bottom=110,
                frame_width=848,
                frame_height=480,
                score=1.2,
                vector=print_,
                face_id=face.id,
            )
        )
        session.commit()


def test_a_named_face_is_searched_where_it_was_seen_and_is_no_meeting(library, embedder):
    store, _ = library
    memory = Memory(store, library[1], embedder, settings=Settings())
    question = Query("What did Ana say about the report?", k=4)
    assert People(memory).retrieve(question) == []
    see(store, "Ana", "office")
    assert "ana" in named_people(store) and "ana" not in named_voices(store)
    found = People(memory).retrieve(question)
    assert found and {ev.source for ev in found} == {"office"}
    assert meetings(store, Query("When did I last talk to Ana?")) == []  # seen is not heard: no note


def test_the_last_talk_with_a_named_person_is_where_they_were_not_the_last_talk(tmp_path, embedder):
    from egodesk.core.timeutil import to_ts
    from egodesk.retrieval.timeaware import TimeAware

    talks = [
        entry("street", MORNING, 5, "transcript", "We talk about the late bus.", 0),
        entry("office", OFFICE, 5, "transcript", "Ana and I talk about the report.", 0),
    ]
    store, indices = build_library(tmp_path, embedder, talks)
    memory = Memory(store, indices, embedder, settings=Settings())
    asked = to_ts(OFFICE) + 3600

    def pinpointed() -> list[str]:
        query = Query("When did I last talk to Tom?", asked_at=asked, k=4, cutoff=asked)
        return [ev.source for ev in TimeAware(memory).retrieve(query) if ev.pinpointed]

    assert pinpointed() == ["office"]  # no voice is Tom: the last talk is the last talk
    hear(store, "Tom", "street")
    assert pinpointed() == ["street"]  # Tom was heard on the street, not in the office
    store.close()


def test_the_named_voices_heard_during_a_moment_are_read_from_the_turns(library):
    store, _ = library
    from egodesk.memory.store import Footage

    if "tom" not in named_voices(store):
        hear(store, "Tom", "street")
    hear(store, None, "street")  # unnamed: not a name to show
    with store.session() as session:
        footage_id, start = session.query(Footage.id, Footage.start_ts).filter(Footage.title == "street").one()
    during = voices_during(store, [(footage_id, start + 11.0, start + 12.0), (footage_id, start + 15.0, start + 19.0)])
    assert during == [["Tom"], []]  # his turns are 10-14 s and 20-24 s in
    assert voices_during(store, []) == []
