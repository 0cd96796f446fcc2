"""Fixing what was misheard, on a real library: the composite clip (walk video + JFK's speech) imported
through the real stages, a transcript line corrected, and the correction found by search and by `ask` in
seconds, kept over `resume`, a rerun of ASR, a re-import of the same file and a rebuild of the indices
from SQLite, and taken back by undo."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from sqlalchemy import select, update

from egodesk.memory.corrections import TEXT_MAX_CHARS, CorrectionError, apply_corrections
from egodesk.memory.schema import Clip, Job, Keyframe, TranscriptSegment, Unit, Vector
from egodesk.perception import llm as llm_module
from egodesk.pipeline.library import Library
from tests.doubles import ScriptedLLM
from tests.memory.test_correct_llm_memories import BrokenLLM, SpeechReader

NEW_WORDS = "ask what the Zanzibar wombat can do for your country"


def _segments(library) -> list[tuple[float, float, str, object]]:
    with library.store.session() as s:
        rows = s.scalars(select(TranscriptSegment).order_by(TranscriptSegment.idx)).all()
        return [(r.start_ts, r.end_ts, r.text, r.words) for r in rows]


def _last_line(library) -> tuple[float, float, str, object]:
    return _segments(library)[-1]


@pytest.fixture
def corrected(composite_library):
    """The last line heard, corrected; undone (to what was heard) after the test."""
    library, footage = composite_library
    start, end, heard, _ = _last_line(library)
    yield library, footage, (start + end) / 2, heard
    while library.corrections():
        library.undo_correction(footage.id, (start + end) / 2)
    assert _last_line(library)[2] == heard


def _rerun(library, *stages: str) -> None:
    with library.store.session() as s:
        s.execute(update(Job).where(Job.stage.in_(stages)).values(state="pending"))
    library.process()


def test_a_corrected_line_is_found_by_search_and_ask_within_seconds(corrected):
    library, footage, at, heard = corrected
    assert library.search("wombat").hits == []
    library.engines.__dict__["llm"] = ScriptedLLM(
        {"evidence": ["E1"], "reasoning": "A speech.", "answer": "A speech"},
        {"evidence": ["E1"], "reasoning": "Said in the clip.", "answer": "The Zanzibar wombat"},
    )
    library.ask("What did I hear?")  # asked before: the models loaded and retrieval's caches filled, as in the app
    shown: list = []
    saved = time.perf_counter()
    line = library.correct_line(footage.id, at, f"  {NEW_WORDS}\n")
    hits = library.search("wombat").hits
    searched = time.perf_counter() - saved
    answer = library.ask("What can the Zanzibar wombat do?", on_evidence=shown.extend)
    asked = time.perf_counter() - saved
    print(f"saved -> found by search {searched:.2f} s, by ask {asked:.2f} s")

    assert (line.text, line.heard, line.corrected) == (NEW_WORDS, heard, True)
    assert [(h.kind, h.text) for h in hits if h.kind == "speech"] == [("speech", NEW_WORDS)]
    assert {h.kind for h in hits} == {"speech", "caption"}  # the clip is described again: its caption quoted the line
    assert any("Zanzibar wombat" in e.text for e in shown), [e.text for e in shown]
    assert answer.text == "The Zanzibar wombat" and answer.grounded
    assert searched < 5 and asked < 5
    with library.store.session() as s:  # the memory of that moment is rebuilt, and the word timings of the old words gone
        parents = s.scalars(select(Unit.text).where(Unit.kind.in_(("transcript", "caption")))).all()
    assert any(NEW_WORDS in t for t in parents) and not any(heard in t for t in parents)  # the caption quoted the line
    assert _last_line(library)[3] is None


def test_the_correction_survives_resume_a_rerun_of_asr_a_re_import_and_an_index_rebuild(corrected, composite_clip):
    library, footage, at, _heard = corrected
    library.correct_line(footage.id, at, NEW_WORDS)
    library.resume()
    _rerun(library, "audio", "asr")  # the ASR stage deletes and rewrites every line of the footage
    assert _last_line(library)[2] == NEW_WORDS
    report = library.add([composite_clip])  # the same file again: the same footage
    assert report.existing == [footage.id] and not report.added
    library.process()
    assert _last_line(library)[2] == NEW_WORDS

    again = Library(library.paths)  # another process: the indices rebuilt from SQLite
    try:
        for space in ("transcript", "subchunk"):
            again.index_manager.rebuild(space)
        assert [h.text for h in again.search("wombat").hits if h.kind == "speech"] == [NEW_WORDS]
        shown: list = []
        again.engines.__dict__["llm"] = ScriptedLLM({"evidence": ["E1"], "reasoning": "Said.", "answer": "Its country"})
        again.ask("What can the Zanzibar wombat do?", on_evidence=shown.extend)
        assert any("Zanzibar wombat" in e.text for e in shown)
    finally:
        again.close()


def test_undo_takes_back_one_correction_at_a_time(corrected):
    library, footage, at, heard = corrected
    _, _, _, words = _last_line(library)
    library.correct_line(footage.id, at, "first try")
    library.correct_line(footage.id, at, "second try")
    library.correct_line(footage.id, at, "second try")  # the text in force again: nothing new
    assert [c.text for c in library.corrections(footage.id)] == ["second try"]

    assert library.undo_correction(footage.id, at).text == "first try"
    assert [h.text for h in library.search("first").hits if h.kind == "speech"] == ["first try"]
    line = library.undo_correction(footage.id, at)
    assert (line.text, line.corrected) == (heard, False)
    assert _last_line(library)[2:] == (heard, words)  # what was heard, with its word timings
    assert library.search("first").hits == [] and library.corrections() == []
    with pytest.raises(CorrectionError, match="no correction to undo"):
        library.undo_correction(footage.id, at)


@pytest.mark.badinput
@pytest.mark.parametrize(
    ("offset", "text", "reason"),
    [
        (None, "", "needs some text"),
        (None, " \n\t ", "needs some text"),
        (None, "x" * (TEXT_MAX_CHARS + 1), "at most"),
        (-50.0, "words", "no line heard"),
        (10_000.0, "words", "no line heard"),
    ],
)
def test_bad_corrections_say_why_and_change_nothing(composite_library, offset, text, reason):
    library, footage = composite_library
    before = _segments(library)
    at = _last_line(library)[0] + 0.1 if offset is None else footage.start + offset
    with pytest.raises(CorrectionError, match=reason):
        library.correct_line(footage.id, at, text)
    assert _segments(library) == before and library.corrections() == []


@pytest.mark.badinput
def test_an_unknown_footage_or_kind_is_refused(composite_library):
    library, footage = composite_library
    with pytest.raises(CorrectionError, match="no footage 999"):
        library.correct_line(999, 0.0, "words")
    with pytest.raises(CorrectionError, match="not 'smell'"):
        library.correct_line(footage.id, footage.start + 1, "words", kind="smell")
    assert library.corrections() == []


def test_on_screen_text_is_corrected_kept_over_a_new_reading_and_undone(composite_library):
    library, footage = composite_library
    with library.store.session() as s:  # the sign OCR read in the first clip (the walk shows none)
        keyframe = s.scalars(select(Keyframe).join(Clip).where(Clip.footage_id == footage.id).order_by(Keyframe.ts)).first()
        keyframe.ocr_text, at = "EXTT ONLY", keyframe.ts
    try:
        line = library.correct_line(footage.id, at + 1, "EXIT ONLY", kind="screen")
        assert (line.kind, line.text, line.heard) == ("screen", "EXIT ONLY", "EXTT ONLY")
        hits = library.search("exit").hits
        assert [h.text for h in hits if h.kind == "screen"] == ["EXIT ONLY"] and {h.kind for h in hits} == {"screen", "caption"}
        with library.store.session() as s:  # OCR run again writes what it reads; the stage applies the correction over it
            s.get(Keyframe, keyframe.id).ocr_text = "EXTT ONLY"
            assert apply_corrections(s, footage.id) == 1
        assert [h.text for h in library.search("exit").hits if h.kind == "screen"] == ["EXIT ONLY"]
        assert library.undo_correction(footage.id, at, kind="screen").text == "EXTT ONLY"
    finally:
        with library.store.session() as s:
            s.get(Keyframe, keyframe.id).ocr_text = ""
    assert library.corrections() == []


class PromptSpy:
    """An LLM, with the prompts it was given kept."""

    def __init__(self, llm) -> None:
        self.llm, self.prompts = llm, []

    def chat(self, messages, *args, **kwargs):
        self.prompts.append(messages[-1]["content"])
        return self.llm.chat(messages, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.llm, name)


LLM_KINDS = ("record", "memory-entry", "atomic")


def _llm_memories(library) -> dict[int, tuple]:
    """Every record, memory entry and statement: id -> (footage, clip, kind, text, {space: vector bytes})."""
    with library.store.session() as s:
        units = s.scalars(select(Unit).where(Unit.kind.in_(LLM_KINDS))).all()
        vectors: dict[int, dict[str, bytes]] = {}
        for v in s.scalars(select(Vector).where(Vector.unit_id.in_([u.id for u in units]))):
            vectors.setdefault(v.unit_id, {})[v.space] = v.data
        return {u.id: (u.footage_id, u.clip_id, u.kind, u.text, vectors.get(u.id, {})) for u in units}


@pytest.fixture(scope="module")
def remembered(tmp_path_factory, composite_clip):
    """A library built with the LLM memories on (the app's default): the composite clip, and a narration
    as another footage. Their replies come from `SpeechReader` (a test double of the LLM's reply, kept
    as the library's LLM with its prompts seen): the tiny real llm-test loops on this speech in the
    atomic prompt now and then, failing the stage."""
    folder = tmp_path_factory.mktemp("remembered")
    day = folder / "morning.jsonl"
    entry = {"source": "morning", "start": "2024-05-06T08:00:00", "end": "2024-05-06T08:00:20", "kind": "narration"}
    day.write_text(json.dumps({**entry, "text": "I pour milk into a glass."}) + "\n")
    reader = PromptSpy(SpeechReader())
    with pytest.MonkeyPatch.context() as env:
        env.setenv("EGODESK_MEMORY_RECORDS", "true")
        env.setenv("EGODESK_MEMORY_ATOMIC", "true")
        env.setattr(llm_module, "make_llm", lambda *args, **kwargs: reader)
        library = Library(folder / "lib")
        assert not library.add([composite_clip, day]).errors
        assert library.process()["failed"] == 0, library.job_rows()
    library.engines.__dict__["llm"] = reader
    [footage] = [f for f in library.footage() if f.kind == "video"]
    yield library, footage
    library.close()


def test_the_llm_memories_of_a_corrected_moment_are_written_again_and_kept(remembered, composite_clip):
    library, footage = remembered
    start, end, heard, _ = _last_line(library)
    at = (start + end) / 2
    spy = library.engines.llm
    spy.prompts.clear()
    before = _llm_memories(library)
    assert {kind for _, _, kind, _, _ in before.values()} >= {"record", "atomic"}

    saved = time.perf_counter()
    line = library.correct_line(footage.id, at, NEW_WORDS, llm_memories=False)
    searchable = time.perf_counter() - saved
    assert [h.text for h in library.search("wombat").hits if h.kind == "speech"] == [NEW_WORDS] and not spy.prompts
    rebuilt = library.rebuild_llm_memories(line)
    relearned = time.perf_counter() - saved - searchable
    print(f"searchable {searchable:.2f} s, records and statements written again {relearned:.2f} s: {rebuilt}")

    assert set(rebuilt) == {"memory-records", "memory-atomic"} and all(r["clips"] == 1 for r in rebuilt.values())
    assert len(spy.prompts) >= 2 and all(NEW_WORDS in p and heard not in p for p in spy.prompts)
    after = _llm_memories(library)
    others = {uid: row for uid, row in before.items() if row[0] != footage.id}
    assert others and {uid: after.get(uid) for uid in others} == others  # the other footage's, rows and vectors
    for stage, kind in (("memory-records", "record"), ("memory-atomic", "atomic")):
        old = {uid for uid, row in before.items() if row[2] == kind and row[0] == footage.id}
        new = {uid for uid, row in after.items() if row[2] == kind and row[0] == footage.id}
        assert (not old & new) if rebuilt[stage]["changed"] else old == new, stage

    library.resume()  # nothing of it is redone: not by resume, a re-import of the same file, or a rebuild of the indices
    assert library.add([composite_clip]).existing == [footage.id]
    library.process()
    assert _llm_memories(library) == after
    again = Library(library.paths)
    try:
        for space in again.index_manager.spaces():
            again.index_manager.rebuild(space)
        for uid, (_, _, _, _, vectors) in after.items():
            for space, data in vectors.items():
                hits = again.index_manager.search(space, np.frombuffer(data, np.float32), 3)[0]
                assert uid in {hit for hit, _ in hits}, (uid, space)
    finally:
        again.close()

    spy.prompts.clear()
    line = library.undo_correction(footage.id, at)  # and undo writes them from the words heard
    assert line.text == heard and len(spy.prompts) >= 2 and all(heard in p and NEW_WORDS not in p for p in spy.prompts)
    undone = _llm_memories(library)
    assert {uid: undone.get(uid) for uid in others} == others


def test_a_failing_llm_leaves_the_moments_llm_memories_and_keeps_the_correction(remembered, caplog):
    library, footage = remembered
    start, end, heard, _ = _last_line(library)
    before, reader = _llm_memories(library), library.engines.llm
    library.engines.__dict__["llm"] = BrokenLLM()
    try:
        line = library.correct_line(footage.id, (start + end) / 2, NEW_WORDS)
        assert line.text == NEW_WORDS and _last_line(library)[2] == NEW_WORDS
        assert [h.text for h in library.search("wombat").hits if h.kind == "speech"] == [NEW_WORDS]
        assert _llm_memories(library) == before  # the records and statements as first heard, nothing half-written
        assert any("kept as first heard: the model is gone" in r.getMessage() for r in caplog.records)
        caplog.clear()
    finally:
        library.engines.__dict__["llm"] = reader
        library.undo_correction(footage.id, (start + end) / 2)
    assert _last_line(library)[2] == heard
