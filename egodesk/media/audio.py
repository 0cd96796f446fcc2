"""The soundtrack as speech recognisers want it: mono 16-bit PCM WAV at 16 kHz."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from egodesk.media.errors import MediaError
from egodesk.media.tools import ffprobe, last_error_line, media_url, run_tool


def extract_audio(path: str | os.PathLike, out_wav: str | os.PathLike, sample_rate: int = 16000) -> bool:
    """Write the first audio stream of `path` to `out_wav`; False (nothing written) if there is none.

    The WAV appears under its name only when complete (temp file + rename). Raises MediaError when
    ffmpeg cannot read or decode the file.
    """
    if sample_rate < 1:
        raise ValueError(f"sample_rate must be positive, not {sample_rate}")
    out_wav = Path(out_wav)
    duration = _audio_duration(path)
    if duration is None:
        return False
    out_wav.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=".audio-", suffix=".tmp", dir=out_wav.parent)
    os.close(handle)
    url = media_url(path)
    try:
        # Decoding runs at hundreds of times real time; the limit only catches a hung ffmpeg.
        result = run_tool(
            [
                "ffmpeg",
                "-nostdin",
                "-v",
                "error",
                "-y",
                "-i",
                url,
                "-map",
                "0:a:0",
                "-vn",
                "-ac",
                "1",
                "-ar",
                str(sample_rate),
                "-c:a",
                "pcm_s16le",
                "-f",
                "wav",
                media_url(temp),
            ],
            path,
            60.0 + duration / 4,
            "extracting the audio",
        )
        if result.returncode != 0:
            raise MediaError(path, f"audio extraction failed ({last_error_line(result.stderr, url)})")
        os.replace(temp, out_wav)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return True


def _audio_duration(path: str | os.PathLike) -> float | None:
    """Seconds of the container if it has an audio stream (0 when unknown), else None."""
    url = media_url(path)
    result = ffprobe(path, "looking for an audio stream", "format=duration:stream=codec_type", "a")
    if result.returncode != 0:
        raise MediaError(path, f"cannot read the file ({last_error_line(result.stderr, url)})")
    data = json.loads(result.stdout or b"{}")
    if not data.get("streams"):
        return None
    try:
        return max(0.0, float(data.get("format", {}).get("duration", 0.0)))
    except ValueError:  # "N/A"
        return 0.0
