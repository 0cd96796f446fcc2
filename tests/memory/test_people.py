"""The library's voices in SQLite (`memory.people`): real recordings of the real test day diarized by the
real voice encoder, stored in a real store; matching across footage, the wearer, each line's voice,
naming, merging, forgetting, and refusals that change nothing."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from sqlalchemy import create_engine, event, insert, select, text

from egodesk.core.manifest import ModelMissing, locate
from egodesk.memory import people
from egodesk.memory.migrations import MIGRATIONS, migrate
from egodesk.memory.people import PeopleError
from egodesk.memory.schema import Footage, Job, LineVoice, SpeechTurn, TranscriptSegment, Voice, VoiceAppearance
from egodesk.perception import diarize as dz
from tests.memory.conftest import add_footage

HOME = "20261130_074000"  # Sam and the wearer, at home
ALONE = "20261130_130500"  # the wearer alone
NEXT_DAY = "20261201_181500"  # Sam and the wearer again, the next evening


@pytest.fixture(scope="module")
def heard():
    """name -> (diarization, scripted turns) of three real-day recordings."""
    try:
        model = locate("voice")
    except ModelMissing:
        pytest.skip("the voice model is installed by ./setup.sh")
    from faster_whisper import decode_audio

    from benchmarks.testday.make_day import make_day, plan_of
    from benchmarks.testday.speakers import turns_of

    plan = plan_of("real")  # the whole day: its files are made once and shared with the benchmarks
    paths = make_day(plan=plan, log=lambda *_: None)
    diarizer = dz.Diarizer(dz.VoiceEncoder(model, threads=1))
    script = turns_of(plan)
    return {
        r.name: (diarizer.diarize(decode_audio(str(path), sampling_rate=dz.SAMPLE_RATE)), script[r.name])
        for r, path in zip(plan, paths)
        if r.name in (HOME, ALONE, NEXT_DAY)
    }


ORIGIN = {HOME: 1_000_000.0, ALONE: 1_010_000.0, NEXT_DAY: 1_090_000.0}


def _footage(store, heard, name: str, lines: bool = True) -> int:
    """A footage row for the recording, with one transcript line per scripted line (the words are the
    speaker's name: what the test reads back), then its diarization stored."""
    footage_id = add_footage(store, name, start=ORIGIN[name], duration=30.0)
    diarization, script = heard[name]
    with store.session() as s:
        if lines:
            for idx, turn in enumerate(script):
                s.add(
                    TranscriptSegment(
                        footage_id=footage_id,
                        idx=idx,
                        start_ts=ORIGIN[name] + turn.start,
                        end_ts=ORIGIN[name] + turn.end,
                        text=turn.speaker,
                    )
                )
            s.flush()
        people.store_footage(s, footage_id, diarization)
        people.relabel(s)
    return footage_id


@pytest.fixture
def day(store, heard):
    ids = {name: _footage(store, heard, name) for name in (NEXT_DAY, ALONE, HOME)}  # the order ingest runs: newest first
    return store, ids


def _voice_of_lines(store, footage_id: int) -> dict[str, int | None]:
    """Each person's voice in a footage: the one most of their lines got (the diarizer errs on a few)."""
    with store.session() as s:
        heard: dict[str, Counter] = {}
        for line in s.scalars(select(TranscriptSegment).where(TranscriptSegment.footage_id == footage_id)):
            heard.setdefault(line.text, Counter())[line.voice_id] += line.end_ts - line.start_ts
        return {person: votes.most_common(1)[0][0] for person, votes in heard.items()}


def _snapshot(store) -> tuple:
    with store.session() as s:
        return (
            s.execute(select(Voice.id, Voice.name, Voice.centroid, Voice.count, Voice.wearer).order_by(Voice.id)).all(),
            s.execute(select(VoiceAppearance.voice_id, VoiceAppearance.footage_id).order_by(VoiceAppearance.id)).all(),
            s.execute(select(SpeechTurn.footage_id, SpeechTurn.voice_id, SpeechTurn.start_ts).order_by(SpeechTurn.id)).all(),
            s.execute(select(TranscriptSegment.id, TranscriptSegment.voice_id, TranscriptSegment.speaker)).all(),
        )


def test_voices_are_matched_across_footage_and_the_wearer_is_me(day):
    store, ids = day
    home, alone, next_day = (_voice_of_lines(store, ids[n]) for n in (HOME, ALONE, NEXT_DAY))
    wearer, sam = home["wearer"], home["Sam"]
    assert wearer is not None and sam is not None and wearer != sam  # two people, two voices
    assert alone["wearer"] == wearer and next_day["wearer"] == wearer
    assert next_day["Sam"] == sam  # the next evening's Sam is the voice of the first morning
    with store.session() as s:
        voices = {v.id: v for v in s.scalars(select(Voice))}
        [me] = [v for v in voices.values() if v.wearer]
        assert me.id == wearer and me.count == 3
        assert voices[sam].count >= 2
        centroid = np.frombuffer(me.centroid, np.float32)
        assert centroid.shape == (256,) and np.linalg.norm(centroid) == pytest.approx(1.0, abs=1e-5)
        labels = {(line.voice_id, line.speaker) for line in s.scalars(select(TranscriptSegment))}
    # the wearer is the library's guess until the person says so: no voice's lines carry a label yet
    assert (wearer, "") in labels and (sam, "") in labels and all(label == "" for _, label in labels)


def test_the_voice_a_person_says_is_theirs_says_me(day):
    store, ids = day
    home = _voice_of_lines(store, ids[HOME])
    wearer, sam = home["wearer"], home["Sam"]
    with store.session() as s:
        [guess] = [v for v in people.voices(s) if v.me]
        assert (guess.id, guess.me_said) == (wearer, False)
        changed = people.claim(s, wearer)
    assert set(changed) == set(ids.values())  # every footage the wearer speaks in
    with store.session() as s:
        labels = {(line.voice_id, line.speaker) for line in s.scalars(select(TranscriptSegment))}
        assert all(label == ("me" if voice == wearer else "") for voice, label in labels)
        changed = people.claim(s, sam)  # said wrongly, then put right: the word of the person wins over the guess
        [me] = [v for v in people.voices(s) if v.me]
        assert (me.id, me.me_said) == (sam, True)
    assert set(changed) == set(ids.values())
    with store.session() as s:
        labels = {(line.voice_id, line.speaker) for line in s.scalars(select(TranscriptSegment))}
        assert all(label == ("me" if voice == sam else "") for voice, label in labels)


def test_storing_a_footage_again_replaces_its_turns(day, heard):
    store, ids = day
    before = _snapshot(store)
    with store.session() as s:
        people.store_footage(s, ids[HOME], heard[HOME][0])
        assert people.relabel(s) == {}
    after = _snapshot(store)
    assert [(v.id, v.name, v.count, v.wearer) for v in after[0]] == [(v.id, v.name, v.count, v.wearer) for v in before[0]]
    for new, old in zip(after[0], before[0]):  # the same sums in another order
        assert np.allclose(np.frombuffer(new.centroid, np.float32), np.frombuffer(old.centroid, np.float32), atol=1e-6)
    assert sorted(after[1]) == sorted(before[1]) and sorted(after[2]) == sorted(before[2]) and after[3] == before[3]


def test_naming_a_voice_labels_its_lines(day):
    store, ids = day
    sam = _voice_of_lines(store, ids[HOME])["Sam"]
    with store.session() as s:
        changed = people.rename(s, sam, "  Sam   Okafor ")
    assert set(changed) == {ids[HOME], ids[NEXT_DAY]}  # only the footage whose lines changed
    with store.session() as s:
        assert {line.speaker for line in s.scalars(select(TranscriptSegment).where(TranscriptSegment.text == "Sam"))} == {
            "Sam Okafor"
        }
        [info] = [v for v in people.voices(s) if v.id == sam]
    assert (info.label, info.me, info.footage) == ("Sam Okafor", False, 2) and info.seconds > 5


def test_refusals_change_nothing(day):
    store, ids = day
    sam = _voice_of_lines(store, ids[HOME])["Sam"]
    me = _voice_of_lines(store, ids[HOME])["wearer"]
    with store.session() as s:
        people.rename(s, me, "Alex")
    before = _snapshot(store)
    attempts = [
        (lambda s: people.rename(s, 9999, "Ann"), "no voice 9999"),
        (lambda s: people.rename(s, sam, "   "), "cannot be empty"),
        (lambda s: people.rename(s, sam, "Me"), "wearer"),
        (lambda s: people.rename(s, sam, "Sam: hi"), "colon"),
        (lambda s: people.rename(s, sam, "x" * 81), "at most 80"),
        (lambda s: people.rename(s, sam, "alex"), f"voice {me} is already called"),
        (lambda s: people.merge(s, sam, sam), "with itself"),
        (lambda s: people.merge(s, sam, 9999), "no voice 9999"),
        (lambda s: people.forget_voice(s, 9999), "no voice 9999"),
        (lambda s: people.split(s, 9999, ids[HOME]), "no voice 9999"),
        (lambda s: people.split(s, sam, ids[ALONE]), "not heard in footage"),
    ]
    for attempt, reason in attempts:
        with pytest.raises(PeopleError, match=reason):
            with store.session() as s:
                attempt(s)
    assert _snapshot(store) == before


def test_merging_moves_turns_lines_and_appearances(day):
    store, ids = day
    sam = _voice_of_lines(store, ids[HOME])["Sam"]
    me = _voice_of_lines(store, ids[HOME])["wearer"]
    with store.session() as s:
        people.claim(s, me)
        people.rename(s, sam, "Sam")
        changed = people.merge(s, me, sam)  # say the person says they are one voice
    assert set(changed) == {ids[HOME], ids[NEXT_DAY]}
    with store.session() as s:
        assert s.get(Voice, sam) is None
        keep = s.get_one(Voice, me)
        assert (keep.name, keep.count, keep.wearer, keep.wearer_said) == ("Sam", 3, True, True)
        assert not s.scalars(select(SpeechTurn).where(SpeechTurn.voice_id == sam)).all()
        appearances = s.execute(select(VoiceAppearance.footage_id).where(VoiceAppearance.voice_id == me)).scalars().all()
        assert sorted(appearances) == sorted(ids.values())  # one appearance per footage: two clusters combined
        assert not s.scalars(select(TranscriptSegment).where(TranscriptSegment.voice_id == sam)).all()
        assert {line.speaker for line in s.scalars(select(TranscriptSegment).where(TranscriptSegment.voice_id == me))} == {"me"}


def test_splitting_off_a_footage_makes_what_was_heard_there_a_voice_of_its_own(day):
    store, ids = day
    sam = _voice_of_lines(store, ids[HOME])["Sam"]
    with store.session() as s:
        people.rename(s, sam, "Sam")
        new, changed = people.split(s, sam, ids[NEXT_DAY])  # say the next evening's voice was someone else
    assert set(changed) == {ids[NEXT_DAY]}  # only that footage's lines lost the name
    with store.session() as s:
        kept, split_off = s.get_one(Voice, sam), s.get_one(Voice, new)
        assert (kept.name, kept.count, split_off.name, split_off.count) == ("Sam", 1, None, 1)
        appearance = s.scalars(select(VoiceAppearance).where(VoiceAppearance.voice_id == new)).one()
        assert appearance.footage_id == ids[NEXT_DAY]
        assert np.allclose(
            np.frombuffer(split_off.centroid, np.float32), np.frombuffer(appearance.centroid, np.float32), atol=1e-6
        )
        assert not s.scalars(select(SpeechTurn).where(SpeechTurn.voice_id == sam, SpeechTurn.footage_id == ids[NEXT_DAY])).all()
        moved = s.scalars(select(TranscriptSegment).where(TranscriptSegment.voice_id == new)).all()
        assert moved and {(line.footage_id, line.speaker) for line in moved} == {(ids[NEXT_DAY], "")}
        home = s.scalars(select(TranscriptSegment).where(TranscriptSegment.voice_id == sam)).all()
        assert home and {(line.footage_id, line.speaker) for line in home} == {(ids[HOME], "Sam")}
        with pytest.raises(PeopleError, match="alone"):  # heard in one footage now: nothing left to split from
            people.split(s, sam, ids[HOME])


def test_forgetting_a_voice_keeps_its_words_unattributed(day):
    store, ids = day
    sam = _voice_of_lines(store, ids[HOME])["Sam"]
    with store.session() as s:
        people.rename(s, sam, "Sam")
        turns = len(s.scalars(select(SpeechTurn).where(SpeechTurn.voice_id == sam)).all())
        changed = people.forget_voice(s, sam)
    assert set(changed) == {ids[HOME], ids[NEXT_DAY]}
    with store.session() as s:
        assert s.get(Voice, sam) is None
        assert not s.scalars(select(VoiceAppearance).where(VoiceAppearance.voice_id == sam)).all()
        assert len(s.scalars(select(SpeechTurn).where(SpeechTurn.voice_id.is_(None))).all()) == turns
        lines = s.scalars(select(TranscriptSegment).where(TranscriptSegment.text == "Sam")).all()
        assert lines and all((line.speaker, line.voice_id) == ("", None) for line in lines)


def test_a_footage_without_speech_has_no_turns_and_keeps_imported_speakers(store, heard):
    silence = dz.Diarizer(dz.VoiceEncoder(locate("voice"), threads=1)).diarize(np.zeros(dz.SAMPLE_RATE * 3, np.float32))
    assert silence.turns == [] and silence.clusters == []
    footage_id = add_footage(store, "quiet", start=ORIGIN[HOME], duration=3.0)
    with store.session() as s:
        s.add(
            TranscriptSegment(
                footage_id=footage_id, idx=0, start_ts=ORIGIN[HOME], end_ts=ORIGIN[HOME] + 2, text="Hi", speaker="Ana"
            )
        )
        s.flush()
        assert people.store_footage(s, footage_id, silence) == 0
        assert people.relabel(s) == {}
    with store.session() as s:
        assert s.scalars(select(Voice)).all() == []
        [line] = s.scalars(select(TranscriptSegment)).all()
        assert (line.speaker, line.voice_id) == ("Ana", None)  # an imported speaker is the file's, not a voice


def test_migration_6_adds_the_tables_and_a_speakers_job_for_transcribed_footage(tmp_path):
    engine = create_engine(f"sqlite:///{tmp_path / 'old.sqlite'}")
    event.listen(engine, "connect", lambda c, _r: c.execute("PRAGMA foreign_keys=ON"))
    with engine.begin() as conn:
        MIGRATIONS[0](conn)  # a version-5 library made before these tables existed
        table = conn.execute(text("SELECT sql FROM sqlite_master WHERE name = 'transcript_segment'")).scalar_one()
        lines = [line for line in table.split("\n") if "voice_id" not in line]
        lines[-2] = lines[-2].rstrip().rstrip(",")  # the constraint before the dropped lines ends the list
        for statement in ("DROP INDEX ix_transcript_segment_voice_id", "DROP TABLE transcript_segment", "\n".join(lines)):
            conn.execute(text(statement))
        conn.execute(text("CREATE INDEX ix_segment_time ON transcript_segment (start_ts, end_ts)"))
        for table in ("speech_turn", "voice_appearance", "voice"):
            conn.execute(text(f"DROP TABLE {table}"))
        for step in MIGRATIONS[1:5]:
            step(conn)
        conn.execute(text("PRAGMA user_version=5"))
        conn.execute(
            insert(Footage), [{"id": 1, "content_hash": "a", "path": "/a.mp4"}, {"id": 2, "content_hash": "b", "path": "/b.srt"}]
        )
        conn.execute(
            insert(Job), [{"footage_id": 1, "stage": "asr", "state": "done"}, {"footage_id": 2, "stage": "text", "state": "done"}]
        )
    assert migrate(engine) == len(MIGRATIONS) and migrate(engine) == len(MIGRATIONS)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT footage_id, state FROM job WHERE stage = 'speakers'")).all() == [(1, "pending")]
        assert "voice_id" in {row[1] for row in conn.execute(text("PRAGMA table_info(transcript_segment)"))}
        assert conn.execute(text("SELECT count(*) FROM voice")).scalar_one() == 0
    engine.dispose()


@pytest.mark.parametrize(
    "version, column, earlier",
    [(6, "wearer_said", ""), (10, "kept", ", wearer_said")],
    ids=["7: a person said a voice is theirs", "11: a person merged or split a voice"],
)
def test_migrations_7_and_11_add_a_persons_word_about_a_voice_as_false(tmp_path, version, column, earlier):
    """A library's voices gain the column, false: what the library found stays its guess (7: the wearer is
    not claimed; 11: what it grouped may be regrouped)."""
    engine = create_engine(f"sqlite:///{tmp_path / f'v{version}.sqlite'}")
    with engine.begin() as conn:
        MIGRATIONS[0](conn)
        for dropped in ("kept", "wearer_said")[: 2 if column == "wearer_said" else 1]:
            conn.execute(text(f"ALTER TABLE voice DROP COLUMN {dropped}"))  # as version `version` made it
        conn.execute(text(f"PRAGMA user_version={version}"))
        values = "1, NULL, x'00', 3.0, 1, 1" + (", 0" if earlier else "")
        conn.execute(text(f"INSERT INTO voice (id, name, centroid, seconds, count, wearer{earlier}) VALUES ({values})"))
    assert migrate(engine) == len(MIGRATIONS)
    with engine.connect() as conn:
        assert conn.execute(text(f"SELECT wearer, {column} FROM voice")).all() == [(1, 0)]
    engine.dispose()


def test_forgetting_footage_recomputes_the_voices_it_shaped(day, lib_paths):
    from egodesk.memory.forget import forget
    from egodesk.memory.indices import IndexManager

    store, ids = day
    sam = _voice_of_lines(store, ids[HOME])["Sam"]
    me = _voice_of_lines(store, ids[HOME])["wearer"]
    with store.session() as s:
        before = np.frombuffer(s.get_one(Voice, me).centroid, np.float32).copy()
    indices = IndexManager(store, lib_paths.indices)
    forget(store, indices, lib_paths, ids[HOME])
    with store.session() as s:
        wearer = s.get_one(Voice, me)
        assert (wearer.count, wearer.wearer, s.get_one(Voice, sam).count) == (2, True, 1)
        assert not np.allclose(np.frombuffer(wearer.centroid, np.float32), before)  # the print no longer holds that footage
    forget(store, indices, lib_paths, ids[NEXT_DAY])
    with store.session() as s:
        assert s.get(Voice, sam) is None  # an unnamed voice heard nowhere else goes with its footage
        assert s.get_one(Voice, me).count == 1


def _line_of(store, footage_id: int, person: str, voice: int) -> TranscriptSegment:
    """The longest of the footage's lines of `person` (by the script) that the turns gave to `voice`."""
    with store.session() as s:
        lines = s.scalars(
            select(TranscriptSegment).where(
                TranscriptSegment.footage_id == footage_id, TranscriptSegment.text == person, TranscriptSegment.voice_id == voice
            )
        ).all()
    return max(lines, key=lambda line: line.end_ts - line.start_ts)


def _said(store, line_id: int) -> tuple[str, int | None]:
    with store.session() as s:
        line = s.get_one(TranscriptSegment, line_id)
        return line.speaker, line.voice_id


def _rerun(store, heard, name: str, footage_id: int, shift: float = 0.0) -> int:
    """The ASR run again (its lines rewritten, each `shift` s later: a rerun cuts them a little
    differently), then the speakers stage, each as its stage writes them."""
    from egodesk.memory.speech import write_transcript

    with store.session() as s:
        old = s.scalars(
            select(TranscriptSegment).where(TranscriptSegment.footage_id == footage_id).order_by(TranscriptSegment.idx)
        )
        lines = [{"start_ts": t.start_ts + shift, "end_ts": t.end_ts + shift, "text": t.text} for t in old.all()]
        write_transcript(s, footage_id, [], lines)
        people.attach_lines(s, footage_id)
        people.relabel(s)
        people.store_footage(s, footage_id, heard[name][0])
        people.relabel(s)
    return footage_id


def _line_at(store, footage_id: int, start: float) -> int:
    with store.session() as s:
        rows = s.scalars(select(TranscriptSegment).where(TranscriptSegment.footage_id == footage_id)).all()
    return min(rows, key=lambda line: abs(line.start_ts - start)).id


def _claimed_named_and_a_wearer_line(store, ids) -> tuple[int, int, TranscriptSegment]:
    """The wearer's voice claimed ("me") and Sam's named, and a line the turns gave the wearer at home."""
    home = _voice_of_lines(store, ids[HOME])
    me, sam = home["wearer"], home["Sam"]
    with store.session() as s:
        people.claim(s, me)
        people.rename(s, sam, "Sam")
    return me, sam, _line_of(store, ids[HOME], "wearer", me)


def test_a_line_a_person_says_is_someone_elses_stays_so_through_reruns(day, heard):
    """The turns gave a line to the wearer; the person says Sam said it: it says Sam, and keeps saying so
    when the ASR (lines cut 0.2 s later) and the speakers stage run again."""
    store, ids = day
    me, sam, line = _claimed_named_and_a_wearer_line(store, ids)
    assert _said(store, line.id) == ("me", me)
    with store.session() as s:
        said, changed = people.set_line_voice(s, line.id, sam)
    assert (said.speaker, said.voice_id, said.text) == ("Sam", sam, "wearer")
    assert changed == {ids[HOME]: [(line.start_ts, line.end_ts)]}  # that one line, nothing else
    assert _said(store, line.id) == ("Sam", sam)
    _rerun(store, heard, HOME, ids[HOME], shift=0.2)
    again = _line_at(store, ids[HOME], line.start_ts + 0.2)
    assert _said(store, again) == ("Sam", sam)  # the rewritten line, the person's word on it
    with store.session() as s:
        others = s.execute(
            select(TranscriptSegment.voice_id, TranscriptSegment.speaker).where(TranscriptSegment.id != again)
        ).all()
    assert (me, "me") in others  # the other lines still follow the turns


def test_someone_else_leaves_the_line_with_no_voice_and_names_nobody(day, heard):
    store, ids = day
    me = _voice_of_lines(store, ids[HOME])["wearer"]
    with store.session() as s:
        people.claim(s, me)
    line = _line_of(store, ids[HOME], "wearer", me)
    with store.session() as s:
        said, changed = people.set_line_voice(s, line.id, None)
    assert (said.speaker, said.voice_id) == ("", None) and changed == {ids[HOME]: [(line.start_ts, line.end_ts)]}
    with store.session() as s:
        assert {v.id for v in s.scalars(select(Voice))} == {v.id for v in people.voices(s)}  # no voice made up for it
    _rerun(store, heard, HOME, ids[HOME])
    assert _said(store, _line_at(store, ids[HOME], line.start_ts)) == ("", None)


def test_the_voice_a_line_was_said_by_follows_a_rename_and_a_merge(day, heard):
    store, ids = day
    home = _voice_of_lines(store, ids[HOME])
    me, sam = home["wearer"], home["Sam"]
    line = _line_of(store, ids[HOME], "wearer", me)
    with store.session() as s:
        people.set_line_voice(s, line.id, sam)
        people.rename(s, me, "Alex")  # the voice the turns gave it: the line is not Alex's
        people.rename(s, sam, "Sam")
    assert _said(store, line.id) == ("Sam", sam)
    with store.session() as s:
        other = Voice(centroid=s.get_one(Voice, sam).centroid, seconds=1.0, count=0, name="Samuel")  # one person as two
        s.add(other)
        s.flush()
        people.set_line_voice(s, line.id, other.id)
        people.merge(s, sam, other.id)
    assert _said(store, line.id) == ("Sam", sam)
    _rerun(store, heard, HOME, ids[HOME])
    assert _said(store, _line_at(store, ids[HOME], line.start_ts)) == ("Sam", sam)  # the word followed the merge


def test_a_split_leaves_a_line_the_person_gave_that_voice(day):
    store, ids = day
    sam = _voice_of_lines(store, ids[HOME])["Sam"]
    line = _line_of(store, ids[NEXT_DAY], "Sam", sam)
    with store.session() as s:
        people.rename(s, sam, "Sam")
        people.set_line_voice(s, line.id, sam)  # "this line is Sam"
        new, _ = people.split(s, sam, ids[NEXT_DAY])  # "the rest of that morning is someone else"
        moved = s.scalars(select(TranscriptSegment).where(TranscriptSegment.voice_id == new)).all()
    assert moved and _said(store, line.id) == ("Sam", sam)


def test_forgetting_the_voice_a_line_was_said_by_leaves_it_unnamed_for_good(day, heard):
    store, ids = day
    me, sam, line = _claimed_named_and_a_wearer_line(store, ids)
    with store.session() as s:
        people.set_line_voice(s, line.id, sam)
        changed = people.forget_voice(s, sam)
    assert (line.start_ts, line.end_ts) in changed[ids[HOME]]
    assert _said(store, line.id) == ("", None)
    with store.session() as s:
        [word] = s.scalars(select(LineVoice)).all()
        assert word.voice_id is None  # the name went; the person's word that it was not the wearer stays
    _rerun(store, heard, HOME, ids[HOME])
    assert _said(store, _line_at(store, ids[HOME], line.start_ts)) == ("", None)  # not back to "me"


def test_an_unnamed_voice_a_line_was_given_outlives_a_rerun_of_its_footage(day, heard):
    """A voice heard in one footage, unnamed, is dropped when that footage's stage runs again (it may come
    back under a new id), unless a person said it spoke a line: then the line keeps it."""
    store, ids = day
    sam = _voice_of_lines(store, ids[HOME])["Sam"]
    with store.session() as s:
        new, _ = people.split(s, sam, ids[NEXT_DAY])
    line = _line_of(store, ids[HOME], "Sam", sam)
    with store.session() as s:
        people.set_line_voice(s, line.id, new)
        people.store_footage(s, ids[NEXT_DAY], heard[NEXT_DAY][0])
        people.relabel(s)
        assert s.get(Voice, new) is not None
    assert _said(store, line.id) == ("", new)


def test_who_said_a_line_refuses_unknown_ids_and_changes_nothing(day):
    store, ids = day
    sam = _voice_of_lines(store, ids[HOME])["Sam"]
    line = _line_of(store, ids[HOME], "Sam", sam)
    before = _snapshot(store)
    for line_id, voice_id, reason in [(999_999, sam, "no line 999999"), (line.id, 9999, "no voice 9999")]:
        with pytest.raises(PeopleError, match=reason):
            with store.session() as s:
                people.set_line_voice(s, line_id, voice_id)
    assert _snapshot(store) == before
    with store.session() as s:
        assert s.scalars(select(LineVoice)).all() == []


@pytest.mark.parametrize(
    ("version", "table", "columns"),
    [(9, "line_voice", {"footage_id", "start_ts", "voice_id"}), (10, "stale_moment", {"footage_id", "start_ts", "end_ts"})],
)
def test_migrations_9_and_10_add_who_said_a_line_and_the_moments_showing_old_names(tmp_path, version, table, columns):
    engine = create_engine(f"sqlite:///{tmp_path / 'before.sqlite'}")
    with engine.begin() as conn:
        MIGRATIONS[0](conn)
        conn.execute(text(f"DROP TABLE {table}"))  # as the version before made it
        conn.execute(text(f"PRAGMA user_version={version - 1}"))
    assert migrate(engine) == len(MIGRATIONS)
    with engine.connect() as conn:
        assert {row[1] for row in conn.execute(text(f"PRAGMA table_info({table})"))} >= columns
    engine.dispose()


def test_a_transcript_written_again_keeps_who_spoke(store):
    """Lines written anew (a rerun of the ASR, a subtitle file attached: both through `write_transcript`)
    get the voices of the turns already stored and their labels; a line with a speaker of its own keeps it."""
    from egodesk.memory.speech import write_transcript

    footage_id = add_footage(store, "again", start=1_000_000.0, duration=30.0)
    with store.session() as s:
        tom = Voice(name="Tom", centroid=np.ones(256, np.float32).tobytes(), seconds=5.0, count=1)
        s.add(tom)
        s.flush()
        s.add(SpeechTurn(footage_id=footage_id, voice_id=tom.id, start_ts=1_000_002.0, end_ts=1_000_006.0, level_db=-30.0))
        s.flush()
        lines = [
            {"start_ts": 1_000_002.5, "end_ts": 1_000_005.0, "text": "the bus leaves at six", "speaker": ""},
            {"start_ts": 1_000_010.0, "end_ts": 1_000_012.0, "text": "Ann: see you", "speaker": "Ann"},
        ]
        write_transcript(s, footage_id, [], lines)
        got = [(line.voice_id, line.speaker) for line in s.scalars(select(TranscriptSegment).order_by(TranscriptSegment.idx))]
    assert got == [(tom.id, "Tom"), (None, "Ann")]
