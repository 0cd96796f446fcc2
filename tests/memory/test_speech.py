"""Each clip is told what was said during it, when a sentence runs across a clip boundary too; and
`memory.speech`'s rules directly: a segment's words go to the clip their middle falls in; a segment
within one clip, or without word timings, is one line of the clip it starts in (or its stored clip); a
moment at or past the last clip's end is the last clip's; "Speaker: words" names the speaker once."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from sqlalchemy import select

from egodesk.memory.clipspans import clip_holding
from egodesk.memory.llm_batches import footage_clips
from egodesk.memory.schema import Clip, TranscriptSegment
from egodesk.memory.speech import clip_speech, lines_between, segment_clip, transcript_line
from tests.memory.conftest import add_footage


def test_a_sentence_across_a_clip_boundary_is_heard_in_both_clips(store, make_video):
    footage = make_video([[("kitchen", 0.9)], [("hall", 0.9)], [("door", 0.9)]])
    with store.session() as s:
        first, second, third = s.scalars(select(Clip).where(Clip.footage_id == footage).order_by(Clip.idx))
        edge = second.start_ts
        words = [
            (" The", edge - 2.0),
            (" keys", edge - 1.5),
            (" are", edge - 0.4),
            (" in", edge + 0.5),
            (" the", edge + 1.0),
            (" bowl.", edge + 1.5),
        ]
        s.add(
            TranscriptSegment(
                footage_id=footage,
                clip_id=first.id,  # ingest stores a segment with the clip it starts in
                idx=9,
                start_ts=edge - 2.0,
                end_ts=edge + 2.0,
                text="The keys are in the bowl.",
                speaker="Tom",
                words=[[w, t, t + 0.4, 0.9] for w, t in words],
            )
        )
        s.add(  # imported subtitles have no word timings: the line stays whole with its first clip
            TranscriptSegment(
                footage_id=footage, clip_id=None, idx=10, start_ts=third.end_ts - 1, end_ts=third.end_ts + 5, text="Bye now."
            )
        )
    with store.session() as s:
        speech = {c.clip_id: c.speech for c in footage_clips(s, footage)}
    assert speech[first.id] == ["Alice: words number 0", "Tom: The keys are"]
    assert speech[second.id] == ["Tom: in the bowl.", "Alice: words number 1"]  # in the order they were said
    assert speech[third.id] == ["Alice: words number 2", "Bye now."]


@dataclass
class Span:
    id: int
    start_ts: float
    end_ts: float


CLIPS = [Span(1, 0.0, 15.0), Span(2, 15.0, 30.0), Span(3, 30.0, 45.0)]


def segment(start, end, text, words=None, speaker="", clip_id=None, idx=0, footage_id=1):
    return TranscriptSegment(
        footage_id=footage_id, idx=idx, start_ts=start, end_ts=end, text=text, words=words, speaker=speaker, clip_id=clip_id
    )


@pytest.mark.parametrize(
    ("ts", "clip"),
    [(0.0, 1), (14.999, 1), (15.0, 2), (44.9, 3), (45.0, 3), (90.0, 3), (-0.1, None)],
)
def test_a_moment_belongs_to_the_clip_whose_span_holds_it_and_the_end_to_the_last(ts, clip):
    found = clip_holding(CLIPS, ts)
    assert (found.id if found else None) == clip


def test_no_clips_hold_nothing():
    assert clip_holding([], 3.0) is None
    assert segment_clip(segment(3.0, 4.0, "hi"), []) is None


def test_a_segment_keeps_its_stored_clip_else_the_clip_of_its_start():
    assert segment_clip(segment(20.0, 40.0, "hi", clip_id=1), CLIPS) == 1
    assert segment_clip(segment(20.0, 40.0, "hi"), CLIPS) == 2


@pytest.mark.parametrize(
    ("speaker", "text", "part", "line"),
    [
        ("Ana", "  the keys are here ", None, "Ana: the keys are here"),
        ("Ana", "Ana: the keys are here", None, "Ana: the keys are here"),  # imported text carries it already
        ("", "the keys", None, "the keys"),
        ("Ana", "the keys are here", "are here", "Ana: are here"),
        ("Ana", "   ", None, ""),  # nothing said: no line, not "Ana: "
    ],
)
def test_a_line_names_its_speaker_once(speaker, text, part, line):
    assert transcript_line(segment(0.0, 1.0, text, speaker=speaker), part) == line


def test_a_sentence_running_past_its_clip_is_heard_by_both_clips_each_its_own_words():
    words = [[" I", 13.0, 13.5, 0.9], [" left", 13.5, 14.2, 0.9], [" the", 14.8, 15.4, 0.9], [" keys", 15.4, 16.0, 0.9]]
    said = clip_speech([segment(13.0, 16.0, "I left the keys", words, speaker="me")], list(reversed(CLIPS)))
    # " the" spans 14.8-15.4: its middle, 15.1, is in clip 2
    assert said == {1: ["me: I left"], 2: ["me: the keys"], 3: []}


def test_a_segment_within_one_clip_or_without_word_timings_is_one_line_of_its_clip():
    within = segment(16.0, 20.0, "whole line", [["whole", 16.0, 17.0, 1.0], ["line", 17.0, 20.0, 1.0]])
    subtitles = segment(14.0, 40.0, "imported subtitle")  # no words: stays whole with the clip it starts in
    stored = segment(31.0, 33.0, "stored", clip_id=1)
    assert clip_speech([within, subtitles, stored], CLIPS) == {1: ["imported subtitle", "stored"], 2: ["whole line"], 3: []}


def test_a_segment_outside_every_clip_and_an_empty_line_are_heard_by_none():
    early = segment(-5.0, -1.0, "before the footage")
    blank = segment(1.0, 2.0, "  ")
    assert clip_speech([early, blank], CLIPS) == {1: [], 2: [], 3: []}


def test_the_lines_overlapping_a_moment_in_time_order(store):
    footage = add_footage(store)
    other = add_footage(store, "other")
    with store.session() as s:
        s.add_all(
            [
                segment(20.0, 25.0, "second", speaker="Ben", idx=1, footage_id=footage),
                segment(10.0, 15.0, "first", speaker="Ana", idx=0, footage_id=footage),
                segment(30.0, 35.0, "after", idx=2, footage_id=footage),
                segment(26.0, 27.0, " ", idx=3, footage_id=footage),
                segment(12.0, 22.0, "elsewhere", idx=0, footage_id=other),
            ]
        )
    with store.session() as s:
        assert lines_between(s, footage, 14.0, 30.0) == [(10.0, 15.0, "Ana: first"), (20.0, 25.0, "Ben: second")]
        assert lines_between(s, footage, 15.0, 20.0) == []  # touching is not overlapping
