"""Running ffmpeg and ffprobe: how a file is named to them, time limits, a missing binary."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from egodesk.media.errors import MediaError


def media_url(path: str | os.PathLike) -> str:
    """The name ffmpeg (and OpenCV's ffmpeg backend) should open.

    The `file:` prefix and an absolute path keep names that start with "-" from reading as options and
    names with a ":" ("clip 11:02.mp4") from reading as a protocol.
    """
    return "file:" + str(Path(path).absolute())


def run_tool(args: list[str], path: str | os.PathLike, timeout: float, what: str) -> subprocess.CompletedProcess:
    """Run ffmpeg/ffprobe on `path`; a missing binary or a time-out becomes a MediaError naming `what`.

    Output is returned as bytes (frames come back through stdout); the caller reads `returncode`.
    """
    try:
        return subprocess.run(args, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    except FileNotFoundError as exc:
        raise MediaError(path, f"{args[0]} is not installed or not on PATH (install ffmpeg)") from exc
    except subprocess.TimeoutExpired as exc:
        raise MediaError(path, f"{what} timed out after {timeout:.0f} s") from exc


PROBE_TIMEOUT_S = 30.0


def ffprobe(
    path: str | os.PathLike,
    what: str,
    entries: str = "",
    streams: str = "",
    intervals: str = "",
    output: str = "json",
    timeout: float = PROBE_TIMEOUT_S,
) -> subprocess.CompletedProcess:
    """ffprobe on `path`, saying only errors: the `entries` it shows (`-show_entries`; none: the whole
    format and streams), of the `streams` selected, the packets within `intervals` (`-read_intervals`),
    written as `output`. One place builds the command, so every probe names the file the same safe way
    (`media_url`)."""
    args = ["ffprobe", "-v", "error"]
    args += ["-select_streams", streams] if streams else []
    args += ["-read_intervals", intervals] if intervals else []
    args += ["-show_entries", entries] if entries else ["-show_format", "-show_streams"]
    return run_tool([*args, "-of", output, media_url(path)], path, timeout, what)


def last_error_line(stderr: bytes, url: str) -> str:
    """The last non-empty line ffmpeg wrote (usually the one that says what went wrong), without the
    input's name, which the MediaError already carries."""
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1].replace(f"{url}: ", "") if lines else "no error message"
