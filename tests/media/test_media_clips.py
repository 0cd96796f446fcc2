"""plan_clips: contiguous, non-overlapping, whole-footage cover; short tails merge."""

import pytest

from egodesk.core.types import ClipSpan
from egodesk.media.clips import plan_clips


def spans(duration, clip):
    return [(c.index, c.offset, c.duration) for c in plan_clips(duration, clip)]


def test_exact_multiple():
    assert spans(45.0, 15.0) == [(0, 0.0, 15.0), (1, 15.0, 15.0), (2, 30.0, 15.0)]


def test_long_remainder_is_its_own_clip():
    assert spans(31.0, 15.0) == [(0, 0.0, 15.0), (1, 15.0, 15.0), (2, 30.0, 1.0)]


def test_short_remainder_joins_the_last_clip():
    assert spans(30.5, 15.0) == [(0, 0.0, 15.0), (1, 15.0, 15.5)]


def test_shorter_than_one_clip():
    assert spans(10.5, 15.0) == [(0, 0.0, 10.5)]
    assert spans(0.2, 15.0) == [(0, 0.0, 0.2)]
    assert spans(15.9, 15.0) == [(0, 0.0, 15.9)]


def test_no_footage():
    assert plan_clips(0.0, 15.0) == [] and plan_clips(-1.0, 15.0) == []


def test_bad_clip_length():
    with pytest.raises(ValueError):
        plan_clips(10.0, 0.0)


@pytest.mark.parametrize("duration", [0.5, 1.0, 14.999, 15.0, 29.9999999, 100.3, 3600.7])
def test_cover_is_exact(duration):
    clips = plan_clips(duration, 15.0)
    assert all(isinstance(c, ClipSpan) for c in clips)
    assert [c.index for c in clips] == list(range(len(clips)))
    assert clips[0].offset == 0.0
    for before, after in zip(clips, clips[1:]):
        assert before.offset + before.duration == pytest.approx(after.offset)
    assert clips[-1].offset + clips[-1].duration == pytest.approx(duration)
    assert all(c.duration >= min(1.0, duration) for c in clips)
