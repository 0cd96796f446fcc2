"""Memories built from a clip keep what it read on screen and the numbers said (`reasoning.facts`,
`memory.atomic.screen_statements`): the answerer is shown them."""

import json

from egodesk.core.settings import Settings
from egodesk.core.types import Evidence
from egodesk.memory.atomic import Statement, screen_statements
from egodesk.memory.llm_batches import ClipText
from egodesk.reasoning.facts import attach_facts, clip_facts, missing_from, with_voices
from egodesk.reasoning.prompt import build_prompt
from egodesk.retrieval.base import Memory
from tests.retrieval.conftest import build_library

CAPTION = (
    "I see a bus and a street sign. I hear: 'Tom said we should meet at 10:30. See you there.' "
    "Visible text: 'BUS 42 DEPARTS 10:15', 'PLATFORM 4'."
)


def test_a_caption_gives_its_on_screen_text_and_the_numbers_said():
    assert clip_facts(CAPTION) == ["on screen: 'BUS 42 DEPARTS 10:15', 'PLATFORM 4'", "said: 'Tom said we should meet at 10:30.'"]
    assert clip_facts("I see a cat.") == []
    assert missing_from("I read that bus 42 departs 10:15 from platform 4", clip_facts(CAPTION)) == [clip_facts(CAPTION)[1]]


def test_a_named_voice_heard_during_a_unit_is_a_fact_unless_its_text_or_facts_name_them():
    def unit(text, facts=""):
        return Evidence(1, 1, "office", 0.0, 10.0, text, 1.0, facts=facts)

    meeting, labelled, told = (
        unit("I see a whiteboard. I hear: 'Anika: Let us keep the launch in March.'", "on screen: 'Q3'"),
        unit("Anika: The launch stays in March. Declan: Fine."),
        unit("We talk about the launch.", "said: 'Declan: I will send the slides.'"),
    )
    with_voices([meeting, labelled, told], [["Anika", "Declan"], ["Anika", "Declan"], ["Declan"]])
    assert meeting.facts == "on screen: 'Q3'; voices heard: Declan"  # his words were lost, his voice was not
    assert (labelled.facts, told.facts) == ("", "said: 'Declan: I will send the slides.'")
    with_voices([meeting], [["Declan"]])
    assert meeting.facts == "on screen: 'Q3'; voices heard: Declan"  # told once, however often it is asked


def test_a_named_persons_line_is_a_fact_when_the_question_names_them():
    said = "I see a painting. I hear: 'Anika: The gallery closes at half past five. me: Thank you. Anika: Come on.'"
    assert clip_facts(said) == []
    assert clip_facts(said, ["anika"]) == ["said: 'Anika: The gallery closes at half past five.'"]  # her first line
    assert clip_facts(said, ["Tom"]) == []
    assert missing_from("Anika and I talk about the gallery", clip_facts(said, ["Anika"])) == clip_facts(said, ["Anika"])


def test_the_answerer_is_shown_the_facts_a_statement_dropped(tmp_path, embedder):
    rows = [
        {
            "id": "c1",
            "source": "walk",
            "start": "2024-03-13T09:00:00",
            "end": "2024-03-13T09:00:15",
            "kind": "caption",
            "text": CAPTION,
        }
    ]
    store, indices = build_library(tmp_path, embedder, rows)
    memory = Memory(store, indices, embedder, settings=Settings())
    catalog = memory.catalog()
    caption_row = int(next(r for r in range(len(catalog)) if catalog.kind[r] == "caption"))
    statement = catalog.evidence(caption_row, 1.0, "test")
    statement.unit_id, statement.kind, statement.text = int(catalog.ids[caption_row]), "atomic", "I wait at the bus stop."
    [shown] = attach_facts(catalog, [statement])
    assert "BUS 42 DEPARTS 10:15" in shown.facts and "10:30" in shown.facts
    prompt = build_prompt("What time does the bus leave?", [shown], None, None, 1500, lambda t: len(t.split()))
    assert "I wait at the bus stop. [on screen: 'BUS 42 DEPARTS 10:15'" in prompt.messages[1]["content"]
    caption = catalog.evidence(caption_row, 1.0, "test")
    assert attach_facts(catalog, [caption])[0].facts == ""  # the caption holds them itself
    store.close()


def test_atomic_statements_keep_the_on_screen_text_verbatim():
    sign = ClipText(1, 0, 0.0, 15.0, caption=CAPTION, screen=["BUS 42 DEPARTS 10:15", "PLATFORM 4"])
    plain = ClipText(2, 1, 15.0, 30.0, caption="I see a tree.")
    kept = ClipText(3, 2, 30.0, 45.0, caption="Visible text: 'EXIT'.", screen=["EXIT"])
    llm_said = [Statement("action", "I wait at the bus stop", [sign]), Statement("action", 'I walk to the "EXIT" door', [kept])]
    added = screen_statements([sign, plain, kept], llm_said)
    assert [(st.view, st.text, [c.clip_id for c in st.clips]) for st in added] == [
        ("action", 'I read on screen: "BUS 42 DEPARTS 10:15", "PLATFORM 4"', [1])
    ]
    assert json.dumps([st.text for st in added])  # plain text, storable
