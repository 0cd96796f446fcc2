"""sample_frames (one pass, evenly spaced), read_frame_at (exact frame on demand), downscale."""

from __future__ import annotations

import numpy as np
import pytest

from egodesk.core.types import ClipSpan
from egodesk.media.clips import plan_clips
from egodesk.media.errors import MediaError
from egodesk.media.frames import downscale, keyframe_spacing, read_frame_at, sample_frames
from tests.conftest import WALK_VIDEO, ffmpeg

WALK_SECONDS = 10.5


@pytest.fixture(scope="module")
def walk_samples():
    spans = plan_clips(WALK_SECONDS, 4.0)
    return spans, list(sample_frames(WALK_VIDEO, spans, 3, keyframes_only=False))


def test_per_clip_frames_inside_their_clips(walk_samples):
    spans, samples = walk_samples
    assert [s.clip_index for s in samples] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    for sample in samples:
        span = spans[sample.clip_index]
        assert span.offset <= sample.offset < span.offset + span.duration
        assert sample.frame.shape == (480, 848, 3) and sample.frame.dtype == np.uint8
    # Centres of equal sub-intervals, to within one frame.
    expected = [s.offset + (i + 0.5) * s.duration / 3 for s in spans for i in range(3)]
    assert [s.offset for s in samples] == pytest.approx(expected, abs=1 / 29.97)
    offsets = [s.offset for s in samples]
    assert offsets == sorted(offsets)


def test_keyframe_sampling_is_near_the_centres_and_inside_the_clips():
    spans = plan_clips(WALK_SECONDS, 4.0)
    spacing = keyframe_spacing(WALK_VIDEO)
    assert 0 < spacing < 4.0 / 3  # the GoPro sample writes a keyframe every 0.33 s: auto mode uses them
    samples = list(sample_frames(WALK_VIDEO, spans, 3))
    assert [s.clip_index for s in samples] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    expected = [s.offset + (i + 0.5) * s.duration / 3 for s in spans for i in range(3)]
    for sample, centre in zip(samples, expected):
        span = spans[sample.clip_index]
        assert span.offset <= sample.offset < span.offset + span.duration
        assert abs(sample.offset - centre) <= spacing / 2 + 1e-6
        assert sample.frame.shape == (480, 848, 3)


def test_read_frame_at_matches_the_sampled_frame(walk_samples):
    _, samples = walk_samples
    for sample in samples[1::4]:
        frame = read_frame_at(WALK_VIDEO, round(sample.offset, 3))  # stored offsets are rounded
        assert frame.shape == sample.frame.shape
        assert np.abs(frame.astype(np.int16) - sample.frame).mean() < 1.0


def test_read_frame_past_the_end(long_gop_ts):
    with pytest.raises(MediaError, match="no frame at 30.00 s"):
        read_frame_at(long_gop_ts, 30.0)


def test_more_samples_than_frames_share_frames(tmp_path):
    clip = tmp_path / "slow.mp4"
    ffmpeg("-f", "lavfi", "-i", "testsrc=size=64x48:rate=2", "-t", "2", "-pix_fmt", "yuv420p", str(clip))
    samples = list(sample_frames(clip, [ClipSpan(0, 0.0, 2.0)], 8))
    assert len(samples) == 8
    assert len({round(s.offset, 3) for s in samples}) == 4  # four frames in the file


@pytest.mark.badinput
def test_truncated_file_stops_with_what_was_read(cut_faststart_clip):
    """Decoding that fails part-way ends the iteration; nothing is raised."""
    samples = list(sample_frames(cut_faststart_clip, plan_clips(WALK_SECONDS, 2.0), 2))
    assert 0 < len(samples) < 10
    assert max(s.offset for s in samples) < WALK_SECONDS * 0.6


def test_nothing_to_sample():
    assert list(sample_frames(WALK_VIDEO, [], 5)) == []
    with pytest.raises(ValueError, match="per_clip"):
        sample_frames(WALK_VIDEO, plan_clips(WALK_SECONDS, 5.0), 0)


@pytest.mark.badinput
def test_unopenable_file(tmp_path):
    path = tmp_path / "nothing.mp4"
    path.write_text("not a video")
    with pytest.raises(MediaError, match="cannot open"):
        list(sample_frames(path, [ClipSpan(0, 0.0, 1.0)], 1))


@pytest.mark.badinput
def test_variable_frame_rate_uses_real_frame_times(vfr_clip):
    # Target 1.2 s falls in the half-second hole (frames at 0.96 and 1.48): the frame after it is taken.
    [sample] = sample_frames(vfr_clip, [ClipSpan(0, 0.7, 1.0)], 1)
    assert sample.offset == pytest.approx(1.48, abs=0.005)


@pytest.mark.badinput
def test_huge_frames_sample_and_shrink(huge_clip):
    samples = list(sample_frames(huge_clip, plan_clips(1.0, 15.0), 2))
    assert len(samples) == 2 and samples[0].frame.shape == (2160, 4096, 3)
    assert downscale(samples[0].frame, 320).shape == (169, 320, 3)


def test_long_gop_mpegts_frame_on_demand(long_gop_ts):
    """One keyframe in the whole stream: a plain seek decodes nothing, the fallback must find the frame."""
    [sample] = sample_frames(long_gop_ts, [ClipSpan(0, 2.0, 0.2)], 1)
    frame = read_frame_at(long_gop_ts, sample.offset)
    assert np.abs(frame.astype(np.int16) - sample.frame).mean() < 1.0


def test_downscale():
    frame = np.zeros((480, 848, 3), np.uint8)
    assert downscale(frame, 1000) is frame
    assert downscale(frame, 212).shape == (120, 212, 3)
    assert downscale(np.zeros((4000, 2, 3), np.uint8), 100).shape == (100, 1, 3)
    with pytest.raises(ValueError):
        downscale(frame, 0)
