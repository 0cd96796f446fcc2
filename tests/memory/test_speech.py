"""Each clip is told what was said during it, when a sentence runs across a clip boundary too."""

from sqlalchemy import select

from egodesk.memory.llm_batches import footage_clips
from egodesk.memory.schema import Clip, TranscriptSegment


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
