"""Footage made with ffmpeg for the benchmarks and the tests: the shared walk video spoken over with the
JFK speech, and generated test patterns. One recipe each, so a benchmark and the test that checks it
make the same clip."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

MEDIA = Path(os.environ.get("EGODESK_SHARED", Path(__file__).resolve().parents[2] / "shared")) / "media"
WALK_VIDEO = MEDIA / "gopro_max-heromode.mp4"
JFK_AUDIO = MEDIA / "whisper_jfk.flac"
H264 = ("-c:v", "libx264", "-pix_fmt", "yuv420p")
FAST = ("-preset", "ultrafast")  # encoding is the slow part on a shared machine
WHOLE_WALK_SPOKEN = ("-c:v", "copy", "-c:a", "aac", "-shortest")  # the picture as it is, for as long as the speech


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-v", "error", "-y", *args], check=True)


def speaking_walk(out: Path, *args: str, before: Sequence[str] = ()) -> Path:
    """The walk video's picture with the JFK speech as its sound, written to `out`; `before` goes ahead of
    the inputs (a seek), `args` after them (cut, scale, codecs)."""
    ffmpeg(*before, "-i", str(WALK_VIDEO), "-i", str(JFK_AUDIO), "-map", "0:v:0", "-map", "1:a:0", *args, str(out))
    return out


def pattern_clip(
    out: Path, seconds: float, *args: str, size: str = "160x120", rate: int = 25, inputs: Sequence[str] = ()
) -> Path:
    """`seconds` of ffmpeg's test pattern at `size` and `rate`, H.264 (`inputs`: more inputs, as a tone;
    `args`: filters and codec options before the H.264 ones)."""
    ffmpeg("-f", "lavfi", "-i", f"testsrc=size={size}:rate={rate}", *inputs, "-t", f"{seconds:g}", *args, *H264, str(out))
    return out
