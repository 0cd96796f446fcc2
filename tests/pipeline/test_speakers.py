"""Who said it, through the real pipeline: two real recordings of the real test day (Sam and the wearer at
home; the wearer alone) and a silent one imported as sound recordings, transcribed and diarized by the
real models; the voices listed, named, merged and forgotten from the terminal, with the memories that show
a line's speaker following, and a forgotten person's name and voice print gone from every file."""

from __future__ import annotations

import json
import time

import pytest
from sqlalchemy import select, update

from egodesk.cli import main
from egodesk.core.manifest import ModelMissing, locate
from egodesk.memory.schema import Caption, Footage, Job, SpeechTurn, StaleMoment, TranscriptSegment, Unit, Voice, VoiceAppearance
from egodesk.pipeline.library import Library
from tests.badinput.support import snapshot
from tests.conftest import ffmpeg
from tests.pipeline.conftest import assert_no_file_holds

HOME = "20261130_074000"  # Sam and the wearer
ALONE = "20261130_130500"  # the wearer alone
NAME = "Zebedee Quill"


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    try:
        locate("voice")
    except ModelMissing:
        pytest.skip("the voice model is installed by ./setup.sh")
    from benchmarks.testday.make_day import make_day, plan_of

    plan = plan_of("real")
    paths = dict(zip((r.name for r in plan), make_day(plan=plan, log=lambda *_: None)))
    media = tmp_path_factory.mktemp("sound")
    for name in (HOME, ALONE):
        ffmpeg("-i", str(paths[name]), "-vn", "-c:a", "copy", str(media / f"{name}.m4a"))
    ffmpeg("-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono", "-t", "3", "-c:a", "aac", str(media / "20261130_200000.m4a"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EGODESK_ASR_MODEL", "asr-lite")  # the fast Whisper: what is tested here is who spoke
        library = Library(tmp_path_factory.mktemp("lib"))
        report = library.add(sorted(media.iterdir()))
        assert not report.errors
        seen: list = []
        started = time.perf_counter()
        library.process(progress=seen.append)
        print(f"3 sound recordings (63 s) indexed in {time.perf_counter() - started:.1f} s")
    ids = {f.title.split(".")[0]: f.id for f in library.footage()}
    yield library, ids, seen
    library.close()


def _voices(library) -> dict[int, Voice]:
    with library.store.session() as s:
        return {v.id: v for v in s.scalars(select(Voice))}


def _sam(library, ids) -> int:
    """The voice of the home recording that is not the wearer's."""
    with library.store.session() as s:
        heard = s.scalars(select(SpeechTurn.voice_id).where(SpeechTurn.footage_id == ids[HOME])).all()
    [sam] = {v for v in heard if v is not None and not _voices(library)[v].wearer}
    return sam


def _transcript_units(library, footage_id: int) -> dict[int, str]:
    with library.store.session() as s:
        return dict(s.execute(select(Unit.id, Unit.text).where(Unit.footage_id == footage_id, Unit.kind == "transcript")).all())


def _lines(library, footage_id: int) -> list[TranscriptSegment]:
    with library.store.session() as s:
        return list(
            s.scalars(select(TranscriptSegment).where(TranscriptSegment.footage_id == footage_id).order_by(TranscriptSegment.idx))
        )


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def home(imported, monkeypatch):
    library, ids, _ = imported
    monkeypatch.setenv("EGODESK_HOME", str(library.paths.root))
    return library, ids


def test_the_speakers_stage_runs_after_asr_and_finds_me(imported):
    library, ids, seen = imported
    assert all(f.state == "indexed" for f in library.footage())
    order = [p.stage for p in seen if p.message == "started" and p.footage_id == ids[HOME]]
    assert order.index("speakers") == order.index("asr") + 1
    with library.store.session() as s:
        turns = s.execute(select(SpeechTurn.footage_id, SpeechTurn.voice_id)).all()
        lines = s.scalars(select(TranscriptSegment).where(TranscriptSegment.footage_id == ids[HOME])).all()
        silent = s.scalar(select(Job.done).where(Job.footage_id == ids["20261130_200000"], Job.stage == "speakers"))
    voices = _voices(library)
    [me] = [v for v in voices.values() if v.wearer]
    assert {f for f, v in turns if v == me.id} == {ids[HOME], ids[ALONE]} and me.count == 2  # one voice in both
    assert silent == 0 and not [f for f, _ in turns if f == ids["20261130_200000"]]  # silence: done, no turns
    assert {line.speaker for line in lines} == {""}  # the wearer found is a guess: no line says "me" yet
    assert library.claim_voice(me.id).me_said  # the person says it is theirs...
    with library.store.session() as s:
        lines = s.scalars(select(TranscriptSegment).where(TranscriptSegment.footage_id == ids[HOME])).all()
    assert {line.speaker for line in lines} == {"me", ""}  # ...and the wearer's lines say so; Sam's has no name yet
    said_me = lambda: any(text.startswith("me: ") or "\nme: " in text for text in _transcript_units(library, ids[HOME]).values())  # noqa: E731
    with library.store.session() as s:
        marked = s.scalars(select(StaleMoment.footage_id)).all()
    assert set(marked) == {ids[HOME], ids[ALONE]} and not said_me()  # the memories follow after, not in the change
    assert library.process()["failed"] == 0  # any run of the stages (a resume, the next import) brings them
    assert said_me()
    with library.store.session() as s:
        assert not s.scalars(select(StaleMoment)).all()
    assert not list((library.paths.cache / "audio").glob("*.wav"))  # each WAV deleted once diarized


def test_a_footage_without_a_sound_track_is_done_with_no_turns(imported):
    library, _, _ = imported
    with library.store.session() as s:
        footage = Footage(content_hash="mute".ljust(64, "0"), path="/nowhere/mute.mp4", title="mute", has_audio=False, duration=5)
        s.add(footage)
        s.flush()
        s.add(Job(footage_id=footage.id, stage="speakers", state="pending"))
        mute = footage.id
    assert library.process()["failed"] == 0
    with library.store.session() as s:
        assert s.scalar(select(Job.state).where(Job.footage_id == mute, Job.stage == "speakers")) == "done"
        assert not s.scalars(select(SpeechTurn).where(SpeechTurn.footage_id == mute)).all()
        s.execute(Footage.__table__.delete().where(Footage.id == mute))


def test_people_list_and_refusals_from_the_terminal(home, capsys):
    library, ids = home
    code, out, _ = _cli(capsys, "people", "list", "--json")
    rows = json.loads(out)
    assert code == 0 and rows[0]["me"] and rows[0]["footage"] == 2 and rows[0]["seconds"] > 5
    assert {r["label"] for r in rows[1:]} == {f"Voice {r['id']}" for r in rows[1:]}
    sam = _sam(library, ids)
    line = str(_lines(library, ids[HOME])[0].id)
    before = snapshot(library.store)
    for args, reason in [
        (("name", "999", "Ann"), "no voice 999"),
        (("name", str(sam), "  "), "cannot be empty"),
        (("name", "x1", "Ann"), "not a voice id"),
        (("merge", str(sam), str(sam)), "with itself"),
        (("merge", str(sam), "999"), "no voice 999"),
        (("forget", "999"), "no voice 999"),
        (("split", str(sam), str(ids[ALONE])), "not heard in footage"),
        (("split", str(sam), "f1"), "not a footage id"),
        (("split", str(sam)), "which voice and footage"),
        (("said", "999999", str(sam)), "no line 999999"),
        (("said", line, "999"), "no voice 999"),
        (("said", "x1", str(sam)), "not a line id"),
        (("said", line, "F1"), "is a face"),
        (("said", line), "which line and whose voice"),
    ]:
        code, _, err = _cli(capsys, "people", *args)
        assert code == 2 and reason in err, (args, err)
    assert snapshot(library.store) == before


def test_naming_a_voice_relabels_lines_captions_and_memory_only_where_it_spoke(home, capsys):
    library, ids = home
    sam = _sam(library, ids)
    alone = _transcript_units(library, ids[ALONE])
    started = time.perf_counter()
    code, out, err = _cli(capsys, "people", "name", str(sam), *NAME.split())
    print(f"named in {time.perf_counter() - started:.2f} s (a Library opened, its embedder loaded)")
    assert code == 0 and NAME in out, err
    with library.store.session() as s:
        said = s.scalars(select(TranscriptSegment.speaker).where(TranscriptSegment.voice_id == sam)).all()
        captions = s.scalars(select(Caption.text).where(Caption.footage_id == ids[HOME])).all()
    assert said and set(said) == {NAME}
    assert any(f"{NAME}: " in text for text in _transcript_units(library, ids[HOME]).values())
    assert any(NAME in caption for caption in captions)  # a caption quotes who said what
    assert _transcript_units(library, ids[ALONE]) == alone  # nothing of the other footage was rebuilt

    with library.store.session() as s:  # a rerun of the footage's stage keeps the voice and its name
        s.execute(update(Job).where(Job.footage_id == ids[HOME], Job.stage == "speakers").values(state="pending"))
    library.process()
    assert _sam(library, ids) == sam and _voices(library)[sam].name == NAME


def test_who_said_one_line_from_the_terminal_kept_through_a_rerun(home, capsys):
    """One of the wearer's lines was Sam's: `egodesk clips` shows its id, `egodesk people said` gives it to
    Sam's voice; the line and that moment's memory say Sam's name at once, and still do after the audio,
    ASR and speakers stages of the footage run again; "none" then leaves it naming nobody."""
    library, ids = home
    sam, me = _sam(library, ids), next(v.id for v in _voices(library).values() if v.wearer)
    line = max((x for x in _lines(library, ids[HOME]) if x.voice_id == me), key=lambda x: x.end_ts - x.start_ts)
    code, out, _ = _cli(capsys, "clips", str(ids[HOME]))
    assert code == 0 and f"#{line.id} me: {line.text}" in out  # the id a person needs, on the line it names
    assert any(f"me: {line.text}" in text for text in _transcript_units(library, ids[HOME]).values())
    alone = _transcript_units(library, ids[ALONE])

    started = time.perf_counter()
    code, out, err = _cli(capsys, "people", "said", str(line.id), str(sam))
    print(f"said by Sam in {time.perf_counter() - started:.2f} s (a Library opened, its embedder loaded)")
    assert code == 0 and out.startswith(f"#{line.id} ") and f"{NAME}: {line.text}" in out, err
    units = _transcript_units(library, ids[HOME]).values()
    assert any(f"{NAME}: {line.text}" in text for text in units) and not any(f"me: {line.text}" in t for t in units)
    assert _transcript_units(library, ids[ALONE]) == alone  # nothing of the other footage was rebuilt

    with library.store.session() as s:  # the ASR deletes and rewrites every line of the footage; the stage reruns
        stages = ("audio", "asr", "speakers")
        s.execute(update(Job).where(Job.footage_id == ids[HOME], Job.stage.in_(stages)).values(state="pending"))
    library.process()
    again = min(_lines(library, ids[HOME]), key=lambda x: abs(x.start_ts - line.start_ts))
    assert (again.speaker, again.voice_id) == (NAME, sam)
    assert any(x.voice_id == me for x in _lines(library, ids[HOME]))  # the wearer's other lines are still theirs

    code, out, err = _cli(capsys, "people", "said", str(again.id), "none")
    assert code == 0 and "someone else: " in out, err
    with library.store.session() as s:
        assert (s.get_one(TranscriptSegment, again.id).speaker, s.get_one(TranscriptSegment, again.id).voice_id) == ("", None)


def test_a_footage_split_off_a_voice_and_merged_back_from_the_terminal(home, capsys):
    library, ids = home
    me = next(v.id for v in _voices(library).values() if v.wearer)
    code, out, err = _cli(capsys, "people", "split", str(me), str(ids[ALONE]))  # "that was not me there"
    assert code == 0, err
    new = int(out.split()[0])
    with library.store.session() as s:
        alone = s.scalars(select(TranscriptSegment.voice_id).where(TranscriptSegment.footage_id == ids[ALONE])).all()
    assert new != me and set(alone) - {None} == {new}
    assert (_voices(library)[me].count, _voices(library)[new].count) == (1, 1)
    code, out, err = _cli(capsys, "people", "merge", str(me), str(new))  # it was after all: undone
    assert code == 0, err
    assert new not in _voices(library) and _voices(library)[me].count == 2


def test_forgetting_a_person_leaves_no_name_or_voice_print_in_any_file(home, capsys):
    library, ids = home
    sam = _sam(library, ids)
    me = next(v.id for v in _voices(library).values() if v.wearer)
    with library.store.session() as s:
        prints = [v.centroid for v in s.scalars(select(Voice).where(Voice.id.in_((sam, me))))]
        prints += [a.centroid for a in s.scalars(select(VoiceAppearance).where(VoiceAppearance.voice_id.in_((sam, me))))]
        words = s.scalars(select(TranscriptSegment.text).where(TranscriptSegment.voice_id == sam)).all()
    from egodesk.retrieval.base import Memory

    memory = Memory(library.store, library.index_manager, None)
    for kinds in (["transcript"], ["subchunk"], ["caption"]):
        memory.lexical(kinds)  # the BM25 indices retrieval saves beside the vector indices
    held = [p for p in library.paths.root.rglob("*") if p.is_file() and b"zebedee" in p.read_bytes().lower()]
    assert any("lexical" in p.parts for p in held), held  # the name is in an index file before...
    assert any(p.name.startswith("library.sqlite") for p in held), held
    code, out, err = _cli(capsys, "people", "merge", str(me), str(sam))  # one person heard as two: the print is both
    assert code == 0 and NAME in out and "me" in out, err
    code, out, err = _cli(capsys, "people", "forget", str(me))
    assert code == 0 and "forgotten" in out, err

    with library.store.session() as s:
        assert s.scalars(select(Voice)).all() == [] and s.scalars(select(VoiceAppearance)).all() == []
        kept = s.execute(select(TranscriptSegment.text, TranscriptSegment.speaker, TranscriptSegment.voice_id)).all()
    assert set(words) <= {text for text, _, _ in kept}  # their words stay...
    assert {(speaker, voice) for _, speaker, voice in kept} == {("", None)}  # ...as unnamed speech
    assert_no_file_holds(library, b"zebedee", prints)  # ...and in no file after
