"""Who said each transcript line (`memory.line_voices`): a line that holds two voices is cut where the
speaker changes, in a real store, through the writers the stages use."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import select, text

from egodesk.memory import corrections, people
from egodesk.memory.line_voices import MIN_PART_WORDS, voice_parts
from egodesk.memory.schema import Clip, SpeechTurn, TranscriptSegment, Voice
from egodesk.memory.speech import write_transcript
from egodesk.memory.textsearch import TABLE
from tests.memory.conftest import add_footage

T0 = 1_000_000.0
ME_SAYS = "I put my keys on the shelf by the front door."
MARIA_SAYS = "Do not forget it is recycling day today."


def _words(text: str, start: float, step: float = 0.3) -> list[list]:
    return [[word, start + i * step, start + i * step + 0.25, 0.9] for i, word in enumerate(text.split())]


def _timed(text: str, start: float) -> tuple[list[list], float]:
    words = _words(text, start)
    return words, words[-1][2]


@pytest.mark.parametrize(
    ("voices", "parts"),
    [
        ("AAAABBBB", ["AAAA", "BBBB"]),
        ("AAAABBAAA", ["AAAABBAAA"]),  # two words of B inside A's speech: the edge of a turn
        ("BBAAAA", ["BBAAAA"]),  # the first part too short: it joins the one after it
        ("-AAAA-BBB-", ["-AAAA-", "BBB-"]),  # words no turn holds go with the part before them
        ("AAABBBCCC", ["AAA", "BBB", "CCC"]),
        ("----", ["----"]),  # no turn at all: the line stays whole
    ],
)
def test_a_line_is_cut_where_its_voice_changes_for_at_least_a_few_words(voices, parts):
    assert MIN_PART_WORDS == 3
    words = [[voice, i, i + 0.5, 0.9] for i, voice in enumerate(voices)]
    turns = []
    for i, voice in enumerate(voices):
        if voice != "-":
            turns.append((i, i + 0.5, ord(voice)))
    got = ["".join(w[0] for w in part) for part in voice_parts(words, turns)]
    assert got == parts


@pytest.fixture
def two_voices(store):
    """A footage of two 15 s clips, the wearer's voice ("me") then Maria's, each with a turn."""
    footage_id = add_footage(store, "kitchen", start=T0, duration=30.0)
    me_words, me_end = _timed(ME_SAYS, T0 + 13.0)
    maria_words, maria_end = _timed(MARIA_SAYS, me_end + 0.2)
    with store.session() as s:
        clips = [
            Clip(footage_id=footage_id, idx=i, offset=15.0 * i, start_ts=T0 + 15 * i, end_ts=T0 + 15 * (i + 1)) for i in range(2)
        ]
        s.add_all(clips)
        voices = {
            name: Voice(name=name, centroid=np.ones(256, np.float32).tobytes(), seconds=5.0, count=1) for name in ("Me", "Maria")
        }
        s.add_all(voices.values())
        s.flush()
        people.claim(s, voices["Me"].id)
        for voice, words in ((voices["Me"], me_words), (voices["Maria"], maria_words)):
            s.add(
                SpeechTurn(
                    footage_id=footage_id,
                    voice_id=voice.id,
                    start_ts=words[0][1] - 0.1,
                    end_ts=words[-1][2] + 0.1,
                    level_db=-30.0,
                )
            )
        s.flush()
        line = {
            "start_ts": T0 + 12.9,
            "end_ts": maria_end + 0.3,
            "text": f"{ME_SAYS} {MARIA_SAYS}",
            "words": me_words + maria_words,
            "speaker": "",
        }
        before = {
            "start_ts": T0 + 2.0,
            "end_ts": T0 + 4.0,
            "text": "Good morning.",
            "words": _words("Good morning.", T0 + 2.0),
            "speaker": "",
        }
        write_transcript(s, footage_id, clips, [before, line])
        return footage_id, [c.id for c in clips], me_end


def _lines(store, footage_id):
    with store.session() as s:
        rows = s.scalars(
            select(TranscriptSegment).where(TranscriptSegment.footage_id == footage_id).order_by(TranscriptSegment.idx)
        )
        return [(row.idx, row.speaker, row.text, row.clip_id, row.start_ts, row.end_ts) for row in rows]


def test_a_line_two_people_said_becomes_one_line_each_with_its_speaker_and_clip(store, two_voices):
    footage_id, (first, second), me_end = two_voices
    lines = _lines(store, footage_id)
    assert [(idx, speaker, text) for idx, speaker, text, *_ in lines] == [
        (0, "", "Good morning."),  # no turn there: nobody's
        (1, "me", ME_SAYS),
        (2, "Maria", MARIA_SAYS),
    ]
    assert [clip for *_, clip, _, _ in lines] == [first, first, second]  # Maria's part starts in the second clip
    assert lines[1][4] == pytest.approx(T0 + 12.9) and lines[1][5] == pytest.approx(me_end)  # the line's edges kept
    with store.session() as s:  # the search index follows the cut
        found = s.execute(text(f"SELECT text FROM {TABLE} WHERE {TABLE} MATCH 'recycling' AND kind = 'speech'")).scalars().all()
    assert found == [MARIA_SAYS]


def test_a_part_a_person_corrected_stays_corrected_and_the_other_part_stays_through_a_rerun(store, two_voices):
    """The person corrects Maria's part; the ASR runs again (the whole line written again): it is cut again
    and the correction goes back over Maria's part alone."""
    footage_id, clip_ids, me_end = two_voices
    corrections.correct(store, footage_id, me_end + 1.0, "Do not forget it is recycling day today!")
    with store.session() as s:
        clips = s.scalars(select(Clip).where(Clip.footage_id == footage_id).order_by(Clip.start_ts)).all()
        me_words, _ = _timed(ME_SAYS, T0 + 13.0)
        maria_words, maria_end = _timed(MARIA_SAYS, me_end + 0.2)
        line = {
            "start_ts": T0 + 12.9,
            "end_ts": maria_end + 0.3,
            "text": f"{ME_SAYS} {MARIA_SAYS}",
            "words": me_words + maria_words,
        }
        write_transcript(s, footage_id, clips, [line])
    assert [(speaker, text) for _, speaker, text, *_ in _lines(store, footage_id)] == [
        ("me", ME_SAYS),
        ("Maria", "Do not forget it is recycling day today!"),
    ]


def test_a_line_without_word_timings_stays_whole(store, two_voices):
    footage_id, clip_ids, me_end = two_voices
    with store.session() as s:
        line = {"start_ts": T0 + 12.9, "end_ts": me_end + 4.0, "text": f"{ME_SAYS} {MARIA_SAYS}", "speaker": ""}
        write_transcript(s, footage_id, [], [line])
    assert [(speaker, text) for _, speaker, text, *_ in _lines(store, footage_id)] == [("me", f"{ME_SAYS} {MARIA_SAYS}")]
