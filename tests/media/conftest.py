"""Generated clips shared by the media tests (made once per session: encoding is the slow part)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.clips import FAST, pattern_clip
from tests.conftest import WALK_VIDEO, ffmpeg


@pytest.fixture(scope="session")
def huge_clip(tmp_path_factory) -> Path:
    """One second of 4096x2160 (at 5 fps: encoding 4K is slow on a shared machine)."""
    return pattern_clip(tmp_path_factory.mktemp("huge") / "huge.mp4", 1, *FAST, size="4096x2160", rate=5)


@pytest.fixture(scope="session")
def vfr_clip(tmp_path_factory) -> Path:
    """Three seconds at 25 fps with a half-second hole after frame 25 (frames at 0.96 s, then 1.48 s)."""
    hole = "setpts='N/(25*TB)+if(gte(N,25),0.5/TB,0)'"
    return pattern_clip(tmp_path_factory.mktemp("vfr") / "vfr.mp4", 3, "-vf", hole, "-fps_mode", "vfr")


@pytest.fixture(scope="session")
def cut_faststart_clip(tmp_path_factory) -> Path:
    """The walk video's picture track with its index up front, cut to the first 40% of its bytes:
    the container still claims 10.5 s, the data stops near 4 s."""
    folder = tmp_path_factory.mktemp("cut")
    fast = folder / "fast.mp4"
    ffmpeg("-i", str(WALK_VIDEO), "-map", "0:v:0", "-c", "copy", "-movflags", "+faststart", str(fast))
    data = fast.read_bytes()
    out = folder / "cutfast.mp4"
    out.write_bytes(data[: len(data) * 4 // 10])
    return out


@pytest.fixture(scope="session")
def long_gop_ts(tmp_path_factory) -> Path:
    """Three seconds of MPEG-TS with a single keyframe: seeking into it decodes nothing."""
    return pattern_clip(tmp_path_factory.mktemp("ts") / "cam.mts", 3, "-g", "250")


@pytest.fixture(scope="session")
def small_av_clip(tmp_path_factory) -> Path:
    """One second of small video with a tone: picture and sound, quick to copy and probe."""
    tone = ("-f", "lavfi", "-i", "sine=frequency=440")
    return pattern_clip(tmp_path_factory.mktemp("av") / "small.mp4", 1, "-c:a", "aac", inputs=tone)
