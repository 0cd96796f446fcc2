"""Exporting a moment of a footage file as an MP4 of its own, with what was said as a subtitle track.

The rules, and why:
- Stream copy when the cut starts on a keyframe (ffprobe lists the video's key packets around it): the
  picture is the original's, bit for bit, and the export takes a moment. A copy can only start on a
  keyframe (the frames after one depend on it), so a cut elsewhere is re-encoded (H.264 + AAC) to start
  exactly where asked rather than up to a GOP earlier. A copy ffmpeg refuses (an audio codec MP4 cannot
  hold) is re-encoded too, and the report says why.
- The subtitles are the transcript lines of the range, their times made relative to the cut and clipped
  to it, as an MP4 text track (mov_text), which players show and can switch off.
- Only the first video and audio streams are kept: camera metadata tracks (GoPro's telemetry, timecode)
  often cannot be muxed into a new MP4.
- The file appears under its name only when complete (written beside it, then renamed), an existing file
  is replaced only when asked, and the source is never written: a failed export leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from egodesk.media.errors import MediaError
from egodesk.media.tools import ffprobe, last_error_line, media_url, run_tool

KEYFRAME_TOLERANCE_S = 0.002  # a key packet this close to the cut starts it (timestamps are rounded)
KEYFRAME_WINDOW_S = 2.0
SUBTITLE_MIN_S = 0.05  # a transcript line with less than this left inside the cut is dropped


@dataclass
class ExportReport:
    path: Path
    copied: bool  # stream copy (else re-encoded)
    subtitles: int  # transcript lines in the subtitle track
    seconds: float  # how long the export took
    why: str = ""  # why it was re-encoded


def srt_time(seconds: float) -> str:
    millis = max(0, round(seconds * 1000))
    return f"{millis // 3_600_000:02d}:{millis // 60_000 % 60:02d}:{millis // 1000 % 60:02d},{millis % 1000:03d}"


def srt(lines: Sequence[tuple[float, float, str]], start: float, end: float) -> tuple[str, int]:
    """The SRT text of the lines (seconds into the file) that fall in [start, end], relative to `start`,
    and how many it holds."""
    cues: list[str] = []
    for a, b, words in sorted(lines):
        a, b, words = max(a, start), min(b, end), " ".join(words.split())
        if b - a >= SUBTITLE_MIN_S and words:
            cues.append(f"{len(cues) + 1}\n{srt_time(a - start)} --> {srt_time(b - start)}\n{words}\n")
    return "\n".join(cues), len(cues)


def starts_on_keyframe(path: str | os.PathLike, offset: float) -> bool:
    """Whether the first video stream has a key packet at `offset` seconds into the file. Only the packets
    within `KEYFRAME_WINDOW_S` of it are read (an hour of video has a hundred thousand); a file whose
    timestamps start so late that the window misses the cut is re-encoded, which is never wrong."""
    url = media_url(path)
    window = f"{max(0.0, offset - KEYFRAME_WINDOW_S):.6f}%{offset + KEYFRAME_WINDOW_S:.6f}"
    result = ffprobe(path, "reading the keyframes", "stream=start_time:packet=pts_time,flags", "v:0", window)
    if result.returncode != 0:
        raise MediaError(path, f"ffprobe could not read it: {last_error_line(result.stderr, url)}")
    data = json.loads(result.stdout or b"{}")
    streams = data.get("streams") or [{}]
    first = float(streams[0].get("start_time") or 0.0)
    return any(
        "K" in p.get("flags", "") and abs(float(p["pts_time"]) - first - offset) <= KEYFRAME_TOLERANCE_S
        for p in data.get("packets", [])
        if p.get("pts_time") not in (None, "N/A")
    )


def check_output(out: Path, source: Path, overwrite: bool) -> None:
    """Refuse an output that is not an .mp4, is the source itself, exists (unless `overwrite`) or lies
    in a folder that is missing or not writable."""
    if out.suffix.lower() != ".mp4":
        raise MediaError(out, "the export must be an .mp4 file")
    if out.exists() and source.exists() and out.resolve() == source.resolve():
        raise MediaError(out, "that is the footage file itself: choose another name")
    if out.exists() and not overwrite:
        raise MediaError(out, "a file of that name exists already (choose another name, or replace it)")
    folder = out.parent
    if not folder.is_dir():
        raise MediaError(out, f"the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise MediaError(out, f"the folder {folder} is not writable")


def export_range(
    source: str | os.PathLike,
    start: float,
    end: float,
    out: str | os.PathLike,
    lines: Sequence[tuple[float, float, str]] = (),
    overwrite: bool = False,
) -> ExportReport:
    """Write [start, end] (seconds into `source`) to `out` as an MP4 with `lines` (seconds into the file)
    as its subtitles; see the module's rules. Raises MediaError naming the file and the reason."""
    source, out = Path(source), Path(out).expanduser().absolute()
    if not source.is_file():
        raise MediaError(source, "the video file is missing (moved, renamed or on a drive not connected?)")
    if not os.access(source, os.R_OK):
        raise MediaError(source, "the video file cannot be read (permission denied)")
    if not 0 <= start < end:
        raise MediaError(source, f"nothing to export between {start:.2f} s and {end:.2f} s")
    check_output(out, source, overwrite)
    began = time.monotonic()
    text, count = srt(lines, start, end)
    copy = starts_on_keyframe(source, start)
    why = "" if copy else "the cut does not start on a keyframe"
    try:
        with tempfile.TemporaryDirectory(prefix=".egodesk-export-", dir=out.parent) as work:
            subtitles = Path(work) / "subtitles.srt"
            subtitles.write_text(text, encoding="utf-8")
            partial = Path(work) / "export.mp4"
            error = _ffmpeg(source, start, end, subtitles if count else None, partial, copy)
            if error and copy:
                why, copy = f"stream copy failed ({error})", False
                error = _ffmpeg(source, start, end, subtitles if count else None, partial, copy)
            if error:
                raise MediaError(source, f"ffmpeg could not export it: {error}")
            os.replace(partial, out)
    except OSError as exc:  # the folder refused the file (read-only, full, gone meanwhile)
        raise MediaError(out, f"cannot be written: {exc.strerror or exc}") from exc
    return ExportReport(out, copy, count, time.monotonic() - began, why)


def _ffmpeg(source: Path, start: float, end: float, subtitles: Path | None, out: Path, copy: bool) -> str:
    """Run one export; "" when it worked, else ffmpeg's last error line."""
    url = media_url(source)
    args = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", f"{start:.6f}", "-i", url]
    if subtitles is not None:
        args += ["-i", media_url(subtitles)]
    args += ["-t", f"{end - start:.6f}", "-map", "0:v:0", "-map", "0:a:0?"]
    if subtitles is not None:
        args += ["-map", "1:s:0", "-c:s", "mov_text", "-metadata:s:s:0", "language=und"]
    if copy:
        args += ["-c:v", "copy", "-c:a", "copy"]
    else:
        args += ["-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "160k"]
    args += ["-movflags", "+faststart", "-write_tmcd", "0", "-f", "mp4", media_url(out)]
    # Copying runs at disk speed; encoding on 2 cores at about real time: the limit only catches a hung ffmpeg.
    result = run_tool(args, source, 60.0 + 4 * (end - start), "exporting")
    return "" if result.returncode == 0 else last_error_line(result.stderr, url)
