"""Interaction records: parsing and prompt logic, then a real build with the tiny llm-test model."""

import json
import logging

from sqlalchemy import func, select

from egodesk.core.settings import Settings
from egodesk.memory.indices import IndexManager
from egodesk.memory.llm_batches import ClipText
from egodesk.memory.record_compression import ACTION_SPACE, ENTRY, OBJECT_SPACE, RECORD, build_records, growth_report
from egodesk.memory.record_tables import BuildProgress, EventPrototype, MemoryEntryState
from egodesk.memory.records import (
    TOKENS_PER_CLIP,
    TOKENS_PER_SPOKEN_CLIP,
    extract_records,
    parse_records,
    record_budget,
    record_messages,
    record_schema,
)
from egodesk.memory.store import Unit, Vector
from egodesk.pipeline.textimport import import_memory_jsonl
from tests.doubles import ScriptedLLM

NARRATIONS = ["I take plate.", "I put down plate.", "I open fridge door.", "I wash cloth.", "I turn on tap.", "I pick up knife."]


def import_narrations(store, tmp_path, texts, source="kitchen") -> int:
    path = tmp_path / f"{source}.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"{source}_{i}",
                    "source": source,
                    "start": f"2020-01-01T09:00:{2 * i:02d}",
                    "end": f"2020-01-01T09:00:{2 * i + 1:02d}",
                    "kind": "narration",
                    "text": t,
                }
            )
            + "\n"
            for i, t in enumerate(texts)
        ),
        encoding="utf-8",
    )
    return import_memory_jsonl(store, path).footage_ids[0]


def clips(*texts):
    return [ClipText(clip_id=10 + i, idx=i, start=100.0 + i, end=101.0 + i, caption=t) for i, t in enumerate(texts)]


def test_wearer_is_prepended_to_every_entry():
    messages = record_messages(clips("I take plate.", "I open the door."), "Jake")
    assert "The camera wearer is Jake" in messages[0]["content"]
    assert messages[1]["content"].splitlines()[1:] == ["1. (wearer: Jake) I take plate.", "2. (wearer: Jake) I open the door."]


def test_schema_enumerates_the_batch_ids_and_caps_the_output():
    schema = record_schema(3)
    records = schema["properties"]["records"]
    assert records["items"]["properties"]["id"] == {"enum": [1, 2, 3]} and records["maxItems"] == 9
    assert set(records["items"]["required"]) == {"id", "action", "object"}  # no persons: the wearer alone


def test_a_cut_off_batch_is_halved_at_once_and_only_a_single_clip_gets_sampled_retries(caplog):
    cut = '{"records": [{"id": 1, "action": "take", "object": "pla'
    llm = ScriptedLLM(cut, {"records": [{"id": 1, "action": "take", "object": "plate"}]}, cut, cut, cut)
    failures = []
    records = extract_records(llm, clips("I take plate.", "I wash cloth."), "Ana", failures)
    # the pair once (no retry), the first clip alone, the second clip alone three times (two sampled retries)
    assert len(llm.sent) == 5 and [r.object for r in records] == ["plate"] and len(failures) == 1
    warned = [r.getMessage()[:37] for r in caplog.records if r.levelno >= logging.WARNING]
    assert warned == ["no interaction records for clip 11: s"]
    caplog.clear()


def test_clips_with_speech_get_room_for_their_quotes():
    spoken = [ClipText(1, 0, 0.0, 20.0, speech=["Ana: I adopted a cat."]), ClipText(2, 1, 20.0, 40.0, caption="I take plate.")]
    assert record_budget(spoken) == 48 + TOKENS_PER_SPOKEN_CLIP + TOKENS_PER_CLIP


def test_parse_maps_self_references_to_the_wearer_and_drops_invalid_items():
    batch = clips("I take plate.", "Tasha hands me the salt.")
    batch[1].speech = ["Tasha: here you go", "Jake: thanks"]
    reply = {
        "records": [
            {"id": 2, "persons": ["Tasha", "me"], "action": "Hand", "object": "salt", "said": 1},
            {"id": 1, "persons": ["I"], "action": "take", "object": "the plate."},
            {"id": 1, "persons": ["I"], "action": "take", "object": "the plate."},  # exact repeat
            {"id": 3, "persons": ["I"], "action": "open", "object": "door"},  # not an entry of this batch
            {"id": 1, "persons": [], "action": "  ", "object": "plate"},  # no action
        ]
    }
    records = parse_records(reply, batch, "Jake")
    assert [(r.clip_id, r.persons, r.action, r.object) for r in records] == [
        (10, ["Jake"], "take", "the plate"),
        (11, ["Tasha", "Jake"], "hand", "salt"),
    ]
    assert records[0].start == 100.0 and records[0].end == 101.0
    assert records[0].sentence() == "Jake take the plate"
    assert records[1].sentence() == 'Tasha and Jake hand salt: "Tasha: here you go"'


def test_a_record_quotes_the_transcript_line_it_points_at_verbatim():
    batch = clips("I walk to the table.")
    batch[0].speech = ["Tasha: Pass me the salt, please.", "Jake: Sure, here it is!"]
    messages = record_messages(batch, "Jake")
    assert '[1] "Tasha: Pass me the salt, please." [2] "Jake: Sure, here it is!"' in messages[1]["content"]
    assert record_schema(1, 2)["properties"]["records"]["items"]["properties"]["said"] == {"enum": [1, 2]}
    assert "said" not in record_schema(1)["properties"]["records"]["items"]["properties"]  # no speech: nothing to point at
    reply = {
        "records": [
            {"id": 1, "persons": ["Jake"], "action": "hand", "object": "salt", "said": 2},
            {"id": 1, "persons": ["Tasha"], "action": "ask for", "object": "salt", "said": 3},  # no such line
            {"id": 1, "action": "walk to", "object": "table", "said": True},
        ]
    }
    assert [r.speech for r in parse_records(reply, batch, "Jake")] == ["Jake: Sure, here it is!", "", ""]


def test_a_record_whose_object_is_none_of_the_entrys_words_is_dropped():
    """The prompt's example ("Tasha ask for salt") copied into an entry that holds no salt is invented;
    an object in the entry's caption, speech or on-screen text, in another inflection too, is kept."""
    batch = clips("I walk into the cafe.")
    batch[0].speech = ["Caroline: Hey Mel! Good to see you!"]
    batch[0].screen = ["SOUP OF THE DAY: TOMATO"]
    reply = {
        "records": [
            {"id": 1, "persons": ["Tasha"], "action": "ask for", "object": "salt", "said": 1},
            {"id": 1, "action": "walk into", "object": "cafes"},
            {"id": 1, "action": "read", "object": "soup of the day"},
            {"id": 1, "persons": ["Caroline"], "action": "greet", "object": "Mel", "said": 1},
            {"id": 1, "action": "stand"},
        ]
    }
    assert [r.object for r in parse_records(reply, batch, "Jake")] == ["cafes", "soup of the day", "Mel", ""]


def test_build_stop_resume_with_the_test_model(store, lib_paths, tmp_path, embedder, tiny_llm):
    footage = import_narrations(store, tmp_path, NARRATIONS)
    indices = IndexManager(store, lib_paths.indices)
    settings = Settings(llm_model="llm-test", wearer_name="Jake", records_batch_size=3)
    events, asked = [], []
    first = build_records(
        store,
        indices,
        embedder,
        tiny_llm,
        footage,
        settings,
        progress=events.append,
        should_stop=lambda: asked.append(1) or len(asked) > 1,
    )  # cancel before the second batch
    assert first["stopped"] and (first["batches"], first["clips_done"]) == (1, 3)
    second = build_records(store, indices, embedder, tiny_llm, footage, settings, progress=events.append)
    assert not second["stopped"] and (second["clips_skipped"], second["clips_done"], second["clips"]) == (3, 3, 6)
    assert [(e.done, e.total) for e in events] == [(3, 6), (6, 6)]
    with store.session() as s:
        records = s.scalars(select(Unit).where(Unit.kind == RECORD).order_by(Unit.id)).all()
        entries = s.scalars(select(Unit).where(Unit.kind == ENTRY)).all()
        clip_times = {u.clip_id: (u.start_ts, u.end_ts) for u in records}
        assert records and first["records"] + second["records"] == len(records)
        assert [u.meta["seq"] for u in records] == list(range(1, len(records) + 1))  # no gap or repeat across the runs
        for unit in records:
            meta = unit.meta
            assert meta["action"] and meta["persons"] and "I" not in meta["persons"]  # self-references became "Jake"
            assert set(meta) >= {"object", "tool", "location", "speech", "attributes", "importance", "prototype", "kept"}
            assert unit.text.startswith(" and ".join(meta["persons"]))
            assert meta["kept"] == (meta["importance"] >= 0.2) and (unit.parent_id is not None) == meta["kept"]
        for entry in entries:
            members = entry.meta["members"]
            assert [m["start"] for m in members] == sorted(m["start"] for m in members)
            assert (entry.start_ts, entry.end_ts) == (members[0]["start"], max(m["end"] for m in members))
            assert all(s.get(Unit, m["record"]).parent_id == entry.id for m in members)
            assert clip_times[members[0]["clip"]][0] == members[0]["start"]
        kept = [u for u in records if u.meta["kept"]]
        assert sum(len(e.meta["members"]) for e in entries) == len(kept)
        for space in (OBJECT_SPACE, ACTION_SPACE):
            assert s.scalar(select(func.count()).select_from(Vector).where(Vector.space == space)) == len(records) + len(entries)
        assert s.scalar(select(func.count()).select_from(EventPrototype)) == max(u.meta["prototype"] for u in records) + 1
        assert s.scalar(select(func.count()).select_from(MemoryEntryState)) == len(entries)
        assert s.get(BuildProgress, (footage, "imprint")).batches == 2
    growth = growth_report(store, footage)
    assert (growth["raw_records"], growth["kept_records"], growth["memory_entries"]) == (len(records), len(kept), len(entries))
    assert growth["curve"][-1]["raw"] == len(records) and growth["curve"][-1]["entries"] == len(entries)
    # the object index answers with cosine similarities
    hits = indices.search(OBJECT_SPACE, embedder.embed_queries(["plate"]), k=3)[0]
    assert hits and all(-1.0 <= cos <= 1.0001 for _, cos in hits)
    # a finished build reruns as a no-op
    again = build_records(store, indices, embedder, tiny_llm, footage, settings)
    assert (again["clips_done"], again["records"], again["clips_skipped"]) == (0, 0, 6)
    with store.session() as s:
        assert s.scalar(select(func.count()).select_from(Unit).where(Unit.kind == RECORD)) == len(records)


def test_migration_adds_the_record_tables_to_a_version_1_library(tmp_path):
    from sqlalchemy import inspect, text

    from egodesk.memory.migrations import MIGRATIONS
    from egodesk.memory.store import Base, Store, make_engine

    path = tmp_path / "old.sqlite"
    engine = make_engine(path)
    with engine.begin() as conn:  # a library as version 1 left it: the core tables only
        Base.metadata.create_all(
            conn,
            tables=[
                t
                for name, t in Base.metadata.tables.items()
                if name not in ("event_prototype", "memory_entry_state", "build_progress")
            ],
        )
        conn.execute(text("PRAGMA user_version=1"))
    engine.dispose()
    store = Store(path)
    names = set(inspect(store.engine).get_table_names())
    with store.engine.connect() as conn:
        assert conn.execute(text("PRAGMA user_version")).scalar_one() == len(MIGRATIONS)
    store.close()
    assert {"event_prototype", "memory_entry_state", "build_progress"} <= names


def test_the_builders_rules_are_evaluated_once_per_model_and_reused_across_builders(tiny_llm, monkeypatch):
    """Records then atomic statements then records again (the next footage): the second records prompt
    evaluates its entries, not the rules and example that every records prompt starts with."""
    from egodesk.memory.atomic import extract_statements

    evaluated: list[int] = []
    real_eval = tiny_llm._llama.eval
    monkeypatch.setattr(tiny_llm._llama, "eval", lambda tokens: (evaluated.append(len(tokens)), real_eval(tokens))[1])
    extract_records(tiny_llm, clips("I take plate."), "Jake")
    extract_statements(tiny_llm, clips("I open fridge door."), [], [], "Jake")
    evaluated.clear()
    extract_records(tiny_llm, clips("I wash cloth."), "Jake")
    whole = len(tiny_llm._tokens(tiny_llm._format(record_messages(clips("I wash cloth."), "Jake"))))
    assert whole > 300 and evaluated[0] < 40  # the prompt's own evaluation: its entry and the template's end


def test_a_spoken_clip_shows_its_words_once_and_keeps_what_was_read_on_screen():
    """A described caption quotes the transcript; beside the numbered speech lines that quote goes, the
    rest of the caption (what was seen, the visible text) stays. A clip without speech lines keeps it."""
    caption = "I see a kitchen. I hear: 'the keys are in the bowl'. Visible text: 'BUS 42 at 17:05'."
    spoken = ClipText(1, 0, 0.0, 10.0, caption=caption, speech=["Tom: the keys are in the bowl"])
    assert spoken.render("Jake", numbered=True) == (
        "(wearer: Jake) I see a kitchen. Visible text: 'BUS 42 at 17:05'. Speech: [1] \"Tom: the keys are in the bowl\""
    )
    assert ClipText(2, 1, 10.0, 20.0, caption=caption).render("Jake") == f"(wearer: Jake) {caption}"


def test_a_described_captions_guesses_are_not_shown_to_the_builders_and_a_clip_of_guesses_alone_is_skipped(store, tmp_path):
    from egodesk.memory.llm_batches import footage_clips
    from egodesk.memory.schema import Caption, Clip

    guessed = "I see a cup. There may also be a planetarium or a patio (low confidence)."
    assert ClipText(1, 0, 0.0, 10.0, caption=guessed).render("Jake") == "(wearer: Jake) I see a cup."
    footage = import_narrations(store, tmp_path, ["I take plate.", "I wash cloth."])
    with store.session() as s:
        first, second = s.scalars(select(Clip).where(Clip.footage_id == footage).order_by(Clip.idx))
        s.get(
            Caption, s.scalar(select(Caption.id).where(Caption.clip_id == second.id))
        ).text = "I see what looks like a patio and a planetarium (low confidence)."
    with store.session() as s:
        assert [c.clip_id for c in footage_clips(s, footage)] == [first.id]
