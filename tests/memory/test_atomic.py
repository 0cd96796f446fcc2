"""EgoCITE atomic statements: windows, prompt and parsing logic, then a real build with llm-test."""

import json

from sqlalchemy import func, select

from egodesk.core.settings import Settings
from egodesk.memory.atomic import VIEWS, atomic_messages, atomic_schema, build_atomic, context_window, parse_statements, space
from egodesk.memory.indices import IndexManager
from egodesk.memory.llm_batches import ClipText
from egodesk.memory.store import Clip, Unit, Vector
from egodesk.pipeline.textimport import import_memory_jsonl

DIALOGUE = [
    "Katrina: Are all the packages outside?",
    "Jake: Yes.",
    "Jake: Today a few more arrived.",
    "Katrina: Great, I will open them after lunch.",
    "Jake: The housekeeper brings the rest later.",
]


def clips(n):
    return [ClipText(clip_id=100 + i, idx=i, start=10.0 * i, end=10.0 * i + 10, caption=f"caption {i}") for i in range(n)]


def test_context_window_is_two_before_and_one_after():
    all_clips = clips(8)
    before, after = context_window(all_clips[3:5], all_clips, 2, 1)
    assert [c.idx for c in before] == [1, 2] and [c.idx for c in after] == [5]
    before, after = context_window(all_clips[0:2], all_clips, 2, 1)
    assert before == [] and [c.idx for c in after] == [2]
    before, after = context_window(all_clips[6:8], all_clips, 2, 1)
    assert [c.idx for c in before] == [4, 5] and after == []


def test_prompt_shows_context_and_numbers_only_the_batch():
    all_clips = clips(6)
    all_clips[2].speech = ["Katrina: Are all the packages outside?", "Jake: Yes."]
    before, after = context_window(all_clips[2:4], all_clips, 2, 1)
    system, user = atomic_messages(all_clips[2:4], before, after, "Jake")
    assert "The camera wearer is Jake" in system["content"] and "I reply that the packages are outside" in system["content"]
    assert user["content"].splitlines() == [
        "Context before:",
        "- (wearer: Jake) caption 0",
        "- (wearer: Jake) caption 1",
        "Clips:",
        '1. (wearer: Jake) caption 2 Speech: "Katrina: Are all the packages outside?" "Jake: Yes."',
        "2. (wearer: Jake) caption 3",
        "Context after:",
        "- (wearer: Jake) caption 4",
    ]
    schema = atomic_schema(2)["properties"]["statements"]
    assert schema["items"]["properties"]["view"] == {"enum": list(VIEWS)} and schema["maxItems"] == 12


def test_parse_keeps_valid_statements_with_their_clip_spans():
    batch = clips(3)
    reply = {
        "statements": [
            {"view": "utterance", "ids": [1], "text": "I reply that the packages are outside."},
            {"view": "conversation", "ids": [3, 1], "text": "Katrina and I talk about the packages"},
            {"view": "utterance", "ids": [1], "text": "I reply that the packages are outside."},  # repeat
            {"view": "gossip", "ids": [1], "text": "not a view"},
            {"view": "action", "ids": [9], "text": "no such clip"},
            {"view": "action", "ids": [2], "text": "   "},
        ]
    }
    statements = parse_statements(reply, batch)
    assert [(s.view, s.text, [c.idx for c in s.clips], s.start, s.end) for s in statements] == [
        ("utterance", "I reply that the packages are outside.", [0], 0.0, 10.0),
        ("conversation", "Katrina and I talk about the packages", [0, 2], 0.0, 30.0),
    ]


def test_a_statement_is_pointed_at_the_clip_whose_words_it_repeats():
    batch = clips(3)
    batch[0].speech = ["Good morning.", "Have you seen my keys?"]
    batch[1].speech = ["Tom said the keys are in the bowl by the kitchen window.", "I will buy milk after work."]
    batch[2].screen = ["BUS 42 CITY CENTRE"]
    reply = {
        "statements": [
            # cites the clip before the one that said it: moved to clip 2
            {"view": "utterance", "ids": [1], "text": "Tom says the keys are in the bowl by the kitchen window"},
            # its own clip holds its words: stays
            {"view": "utterance", "ids": [2], "text": "I say I will buy milk after work"},
            # shares one word with another clip, not half of its words: stays
            {"view": "action", "ids": [1], "text": "I look for my keys in the hall"},
            # a summary over clips: no single clip holds it, stays
            {"view": "conversation", "ids": [1, 2], "text": "Maria and I talk about the morning"},
            {"view": "action", "ids": [1], "text": "I read the sign of bus 42 to the city centre"},  # clip 3's screen
        ]
    }
    assert [[c.idx for c in s.clips] for s in parse_statements(reply, batch)] == [[1], [1], [0], [0, 1], [2]]


def test_build_stop_resume_with_the_test_model(store, lib_paths, tmp_path, embedder, tiny_llm):
    path = tmp_path / "talk.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "id": str(i),
                    "source": "talk",
                    "start": f"2023-05-08T13:56:{10 * i:02d}",
                    "end": f"2023-05-08T13:56:{10 * i + 9:02d}",
                    "kind": "transcript",
                    "text": t,
                }
            )
            + "\n"
            for i, t in enumerate(DIALOGUE[:4])
        ),
        encoding="utf-8",
    )
    footage = import_memory_jsonl(store, path).footage_ids[0]
    indices = IndexManager(store, lib_paths.indices)
    settings = Settings(llm_model="llm-test", wearer_name="Jake", atomic_batch_size=2)
    asked = []
    first = build_atomic(
        store, indices, embedder, tiny_llm, footage, settings, should_stop=lambda: asked.append(1) or len(asked) > 1
    )
    assert first["stopped"] and first["clips_done"] == 2
    second = build_atomic(store, indices, embedder, tiny_llm, footage, settings)
    assert not second["stopped"] and (second["clips_skipped"], second["clips_done"]) == (2, 2)
    assert build_atomic(store, indices, embedder, tiny_llm, footage, settings)["clips_done"] == 0  # finished: a no-op
    with store.session() as s:
        clip_span = {c.id: (c.start_ts, c.end_ts) for c in s.scalars(select(Clip).where(Clip.footage_id == footage))}
        units = s.scalars(select(Unit).where(Unit.kind == "atomic")).all()
        assert len(units) == first["statements"] + second["statements"] > 0
        for unit in units:
            assert unit.view in VIEWS and unit.text and unit.builder == "egocite"
            cited = unit.meta["clips"]
            assert unit.clip_id == cited[0] and set(cited) <= set(clip_span)
            assert (unit.start_ts, unit.end_ts) == (min(clip_span[c][0] for c in cited), max(clip_span[c][1] for c in cited))
            assert (
                s.scalar(
                    select(func.count()).select_from(Vector).where(Vector.unit_id == unit.id, Vector.space == space(unit.view))
                )
                == 1
            )
    hits = indices.search(space(units[0].view), embedder.embed_documents([units[0].text]), k=1)[0]
    with store.session() as s:
        assert hits[0][1] > 0.99 and s.get(Unit, hits[0][0]).text == units[0].text  # (the tiny model repeats itself)


def test_a_build_keeps_what_each_clip_read_on_screen(store, lib_paths, make_video, embedder):
    """The LLM's statements drop the sign's exact text; the build adds it verbatim from the keyframes' OCR."""
    from egodesk.memory.store import Keyframe
    from tests.doubles import ScriptedLLM

    footage = make_video([[["street sign", 0.9]], [["tree", 0.8]]])
    with store.session() as s:
        for frame in s.scalars(select(Keyframe).join(Clip).where(Clip.footage_id == footage, Clip.idx == 0)):
            frame.ocr_text = "BUS 42 DEPARTS 10:15\nPlatform 4" if frame.idx == 0 else "bus 42 departs 10:15"
    llm = ScriptedLLM(
        {
            "statements": [
                {"view": "action", "ids": [1], "text": "I wait at the bus stop"},
                {"view": "action", "ids": [2], "text": "I walk past a tree"},
            ]
        }
    )
    settings = Settings(atomic_batch_size=2)
    indices = IndexManager(store, lib_paths.indices)
    build_atomic(store, indices, embedder, llm, footage, settings)
    with store.session() as s:
        texts = s.scalars(select(Unit.text).where(Unit.footage_id == footage, Unit.kind == "atomic").order_by(Unit.id)).all()
    assert texts == ["I wait at the bus stop", "I walk past a tree", 'I read on screen: "BUS 42 DEPARTS 10:15", "Platform 4"']
