"""The library's grouping of voices does not depend on the order footage's speakers stages run
(`people.regroup`), and leaves what a person decided as they made it. Synthetic voice prints: two similar
voices (cosine 0.88, above the library's 0.83) heard together in the oldest footage, then each alone."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import select

from egodesk.memory import people
from egodesk.memory.schema import SpeechTurn, TranscriptSegment, Voice, VoiceAppearance
from egodesk.perception import diarize as dz
from tests.memory.conftest import add_footage

BASE, SIDE = np.eye(256, dtype=np.float32)[0], np.eye(256, dtype=np.float32)[1]
ONE, TWO = BASE + 0.25 * SIDE, BASE - 0.25 * SIDE  # two people with alike voices
# name -> (start, voices speaking in turn): both speak first, then each is heard alone
DAY = {"both": (1_000_000.0, [ONE, TWO]), "one": (1_001_000.0, [ONE]), "two": (1_002_000.0, [TWO])}


def _heard(voices: list[np.ndarray]) -> dz.Diarization:
    """Each voice speaks one 5 s turn, in turn: a cluster each (kept apart within the footage)."""
    clusters = [dz.VoiceCluster(label, v / np.linalg.norm(v), 5.0, -30.0) for label, v in enumerate(voices)]
    turns = [dz.SpeechTurn(5.0 * label, 5.0 * label + 5.0, label, -30.0) for label in range(len(voices))]
    return dz.Diarization(turns, clusters)


def _store(store, name: str, ids: dict[str, int]) -> None:
    """A footage with one transcript line per turn (its words: who speaks, "one" or "two"), then its speakers stage."""
    start, voices = DAY[name]
    ids[name] = footage_id = add_footage(store, name, start=start, duration=30.0)
    with store.session() as s:
        for label, voice in enumerate(voices):
            who = "one" if voice is ONE else "two"
            s.add(
                TranscriptSegment(
                    footage_id=footage_id, idx=label, start_ts=start + 5 * label, end_ts=start + 5 * label + 5, text=who
                )
            )
        s.flush()
        people.store_footage(s, footage_id, _heard(voices))
        people.relabel(s)


def _who(store) -> dict[str, set[int]]:
    """Each person's voices, by the lines they said; checks each line has the voice of its turn."""
    with store.session() as s:
        turns = {t.start_ts: t.voice_id for t in s.scalars(select(SpeechTurn))}
        out: dict[str, set[int]] = {}
        for line in s.scalars(select(TranscriptSegment)):
            assert line.voice_id == turns[line.start_ts]
            out.setdefault(line.text, set()).add(line.voice_id)
    return out


@pytest.mark.parametrize("order", [("both", "one", "two"), ("two", "one", "both"), ("one", "both", "two")])
def test_the_grouping_is_the_same_whatever_order_footage_arrive_in(store, order):
    """Newest first (as the job queue runs) the two alone footage came first and were one voice; once the
    footage where both speak arrives, the library is regrouped as if built in the order recorded."""
    ids: dict[str, int] = {}
    for name in order:
        _store(store, name, ids)
    who = _who(store)
    assert len(who["one"]) == len(who["two"]) == 1 and who["one"] != who["two"]
    with store.session() as s:
        voices = s.scalars(select(Voice)).all()
        assert sorted(v.count for v in voices) == [2, 2]  # no voice left over, each print from its appearances
        assert s.scalar(select(VoiceAppearance.id).where(VoiceAppearance.voice_id.not_in([v.id for v in voices]))) is None
        assert sum(v.wearer for v in voices) == 1


def test_a_voice_a_person_named_is_not_regrouped(store):
    """The two alone footage, stored first, are one voice; the person names it "Sam". The footage where
    both speak does not take either back from Sam: the person's word stands, and their lines say "Sam"."""
    ids: dict[str, int] = {}
    for name in ("two", "one"):
        _store(store, name, ids)
    [sam] = _who(store)["one"]
    with store.session() as s:
        people.rename(s, sam, "Sam")
    _store(store, "both", ids)
    with store.session() as s:
        assert s.get_one(Voice, sam).name == "Sam"
        held = set(s.scalars(select(VoiceAppearance.footage_id).where(VoiceAppearance.voice_id == sam)))
        alone = s.scalars(select(TranscriptSegment).where(TranscriptSegment.footage_id.in_([ids["one"], ids["two"]])))
        assert {ids["one"], ids["two"]} <= held
        assert {(line.voice_id, line.speaker) for line in alone} == {(sam, "Sam")}
        both = s.scalars(select(TranscriptSegment).where(TranscriptSegment.footage_id == ids["both"])).all()
        assert len({line.voice_id for line in both}) == 2  # two people there: one may be Sam, never both


def test_a_split_a_person_made_is_not_joined_again(store):
    """Stored newest first without the footage where both speak, the two alone footage are one voice; the
    person splits one off. Storing a footage again regroups the library, and leaves their split."""
    ids: dict[str, int] = {}
    for name in ("two", "one"):
        _store(store, name, ids)
    [voice] = _who(store)["one"]
    with store.session() as s:
        new, _ = people.split(s, voice, ids["one"])
    _store(store, "both", ids)
    who = _who(store)
    assert (who["two"] & {voice, new}, who["one"] & {voice, new}) == ({voice}, {new})
