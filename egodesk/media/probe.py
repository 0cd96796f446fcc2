"""What a footage file is: `probe` tells a video, a photo and a sound recording apart by their content
and proves each really decodes.

A photo (JPEG, PNG, HEIC) is recognised and read by `photo.py`. For the rest ffprobe tells duration,
rate, codecs and tags. A file with sound only (a voice note) is an audio footage. A video's first frame
must then decode in OpenCV (it is what reads frames later) and the last second of its video data must be
readable, so a truncated copy is refused at import instead of failing halfway through indexing.
"""

from __future__ import annotations

import codecs
import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path
from typing import Any

import cv2

from egodesk.core.types import FootageKind
from egodesk.media.errors import MediaError
from egodesk.media.photo import PHOTO_EXTENSIONS, photo_facts
from egodesk.media.tools import ffprobe, last_error_line, media_url

VIDEO_EXTENSIONS = frozenset({".mp4", ".mov", ".mkv", ".avi", ".m4v", ".webm", ".mts"})
AUDIO_EXTENSIONS = frozenset({".m4a", ".mp3", ".wav", ".opus", ".ogg", ".flac", ".aac"})
# What a folder import (and a watched folder) takes. A camera's sidecars are left out by their names:
# GoPro's .LRV (a low-resolution copy of the video) and .THM (its thumbnail, a JPEG) would be duplicates.
SUPPORTED_EXTENSIONS = VIDEO_EXTENSIONS | PHOTO_EXTENSIONS | AUDIO_EXTENSIONS

TAIL_TIMEOUT_S = 60.0  # a file without a seek index is read from the start

# ISO base media (MP4/MOV) files start with one of these boxes; used to tell "cut short" from "not video".
_ISO_BOXES = {b"ftyp", b"mdat", b"moov", b"free", b"skip", b"wide", b"pnot"}
# Text tracks ffprobe recognises by their content; egodesk imports these by their suffix.
_SUBTITLE_FORMATS = {"srt", "webvtt"}


@dataclass(frozen=True)
class MediaInfo:
    """Facts about one footage file. `width`/`height` are those of decoded frames (rotation applied);
    a photo has no duration, a sound recording no picture (0 for both of its sizes)."""

    kind: FootageKind
    path: Path
    duration: float
    fps: float
    width: int
    height: int
    frame_count: int
    has_video: bool
    has_audio: bool
    video_codec: str
    audio_codec: str | None
    creation_time: datetime | None
    size_bytes: int


def probe(path: str | os.PathLike) -> MediaInfo:
    """Describe a video, photo or sound file, or raise MediaError saying why it cannot be used."""
    path = Path(path)
    size, head = _read_head(path)
    photo = photo_facts(path)
    if photo is not None:
        return MediaInfo(
            kind=FootageKind.PHOTO,
            path=path,
            duration=0.0,
            fps=0.0,
            width=photo.width,
            height=photo.height,
            frame_count=1,
            has_video=False,
            has_audio=False,
            video_codec=photo.format.lower(),
            audio_codec=None,
            creation_time=photo.taken,
            size_bytes=size,
        )
    data = _ffprobe(path, head)
    streams = data.get("streams", [])
    fmt = data.get("format", {})
    # Cover art in audio files shows up as a one-picture video stream; it is not video.
    videos = [s for s in streams if s.get("codec_type") == "video" and not s.get("disposition", {}).get("attached_pic")]
    audios = [s for s in streams if s.get("codec_type") == "audio"]
    if not videos and not audios:
        kind = fmt.get("format_long_name") or fmt.get("format_name") or "unknown"
        hint = (
            "a subtitle file? give it an .srt or .vtt name to import it as a transcript"
            if fmt.get("format_name") in _SUBTITLE_FORMATS
            else "corrupt?"
        )
        raise MediaError(path, f"not a media file: no audio or video streams (format: {kind}; {hint})")
    if not videos:
        return _sound(path, fmt, audios[0], size)
    if _is_still_image(fmt.get("format_name", "")):
        raise MediaError(path, "an image egodesk does not read as a photo (a JPEG, PNG or HEIC is), or a corrupt one")
    video = videos[0]
    if _is_still_image(fmt.get("format_name", "")):
        raise MediaError(path, "a still image, not a video")
    codec = video.get("codec_name") or ""
    if not codec or codec == "none":
        raise MediaError(path, "unsupported video codec (ffmpeg has no decoder for it)")

    duration = _number(fmt.get("duration")) or _number(video.get("duration"))
    if not duration or duration <= 0:
        raise MediaError(
            path,
            "duration unknown: the recording may be incomplete (remuxing it with `ffmpeg -i IN -c copy OUT` often repairs it)",
        )
    width, height, cv_fps = _first_frame(path, codec)
    fps = _rate(video.get("avg_frame_rate")) or _rate(video.get("r_frame_rate")) or cv_fps
    nb_frames = _number(video.get("nb_frames"))
    frame_count = int(nb_frames) if nb_frames else round(duration * fps)
    _check_tail(
        path,
        start=_number(video.get("start_time")) or _number(fmt.get("start_time")) or 0.0,
        video_duration=_number(video.get("duration")) or duration,
    )
    return MediaInfo(
        kind=FootageKind.VIDEO,
        path=path,
        duration=duration,
        fps=fps,
        width=width,
        height=height,
        frame_count=frame_count,
        has_video=True,
        has_audio=bool(audios),
        video_codec=codec,
        audio_codec=(audios[0].get("codec_name") or None) if audios else None,
        creation_time=_creation_time([fmt, video]),
        size_bytes=size,
    )


def _sound(path: Path, fmt: dict[str, Any], audio: dict[str, Any], size: int) -> MediaInfo:
    """A file with sound and no picture (a voice note): footage with speech only."""
    duration = _number(fmt.get("duration")) or _number(audio.get("duration"))
    if not duration or duration <= 0:
        raise MediaError(path, "duration unknown: the recording may be incomplete")
    return MediaInfo(
        kind=FootageKind.AUDIO,
        path=path,
        duration=duration,
        fps=0.0,
        width=0,
        height=0,
        frame_count=0,
        has_video=False,
        has_audio=True,
        video_codec="",
        audio_codec=audio.get("codec_name") or None,
        creation_time=_creation_time([fmt, audio]),
        size_bytes=size,
    )


def find_media(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Files to import: folders expand recursively to their videos, photos and sound recordings (sorted,
    hidden ones skipped);
    a file named explicitly is kept whatever its extension (probe decides); duplicates are dropped."""
    found: list[Path] = []
    seen: set[Path] = set()
    for item in map(Path, paths):
        batch = _walk(item) if item.is_dir() else [item]
        for file in batch:
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                found.append(file)
    return found


def _walk(folder: Path) -> list[Path]:
    files = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]  # pruning here keeps os.walk out of them
        files.extend(Path(root, n) for n in names if not n.startswith(".") and Path(n).suffix.lower() in SUPPORTED_EXTENSIONS)
    return sorted(files)


def _read_head(path: Path) -> tuple[int, bytes]:
    """Size and first bytes, failing early with the plain reason (ffprobe's would be vaguer)."""
    if not path.exists():
        raise MediaError(path, "file not found")
    if path.is_dir():
        raise MediaError(path, "is a folder, not a file")
    try:
        with open(path, "rb") as handle:
            head = handle.read(64)
    except PermissionError as exc:
        raise MediaError(path, "permission denied: cannot read the file") from exc
    except OSError as exc:
        raise MediaError(path, f"cannot read the file ({exc.strerror or exc})") from exc
    size = path.stat().st_size
    if size == 0:
        raise MediaError(path, "empty file (0 bytes)")
    return size, head


def _ffprobe(path: Path, head: bytes) -> dict[str, Any]:
    url = media_url(path)
    result = ffprobe(path, "reading the file's format")
    if result.returncode == 0:
        try:
            return json.loads(result.stdout)
        except json.JSONDecodeError as exc:
            raise MediaError(path, "ffprobe returned unreadable output") from exc
    message = result.stderr.decode("utf-8", "replace")
    if "moov atom not found" in message and head[4:8] in _ISO_BOXES:
        raise MediaError(
            path,
            "truncated or corrupt: the MP4/MOV index (moov atom) is missing, "
            "the recording was probably interrupted or the copy is incomplete",
        )
    if _looks_like_text(head):
        raise MediaError(path, "not a media file (it contains text)")
    raise MediaError(path, f"unknown or unsupported format ({last_error_line(result.stderr, url)})")


def _first_frame(path: Path, codec: str) -> tuple[int, int, float]:
    """Decode frame one with OpenCV (the reader used later); its size and OpenCV's frame rate."""
    capture = cv2.VideoCapture(media_url(path), cv2.CAP_FFMPEG)
    try:
        ok, frame = capture.read() if capture.isOpened() else (False, None)
        if not ok or frame is None:
            raise MediaError(path, f"no decodable video frames (corrupt, or the '{codec}' codec is unsupported)")
        return frame.shape[1], frame.shape[0], capture.get(cv2.CAP_PROP_FPS) or 0.0
    finally:
        capture.release()


def _check_tail(path: Path, start: float, video_duration: float) -> None:
    """Refuse a file whose video data stops well before its claimed end (a copy cut short).

    Reads packets (no decoding) from about one second before the end. This is sturdier than seeking
    a decoder there: OpenCV cannot seek MPEG-TS at all, and ffmpeg finds no frame to decode after a
    seek in streams with long keyframe intervals, both of which would refuse good files.
    """
    seek_to = start + max(0.0, video_duration - 1.0)
    result = ffprobe(
        path, "checking the end of the video", "packet=pts_time,dts_time", "v:0", f"{seek_to:.3f}%", "csv=p=0", TAIL_TIMEOUT_S
    )
    packets = [line.split(",") for line in result.stdout.decode("ascii", "replace").splitlines() if line.strip()]
    times = [t for fields in packets for t in map(_number, fields) if t is not None]
    # Two seconds of slack: audio can outlast video, and edit lists shift the last timestamps.
    if not packets or (times and max(times) < start + video_duration - 2.0):
        raise MediaError(
            path, f"truncated or corrupt: its video data stops before the end (the file claims {video_duration:.1f} s)"
        )


def _creation_time(tagged: list[dict[str, Any]]) -> datetime | None:
    """The container's, else the video stream's creation_time tag, as an aware datetime (UTC if unzoned)."""
    for item in tagged:
        value = {k.lower(): v for k, v in item.get("tags", {}).items()}.get("creation_time")
        if not value:
            continue
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            continue
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)  # MP4 stores UTC
    return None


def _is_still_image(format_name: str) -> bool:
    """ffprobe's single-picture demuxers ("image2", "png_pipe", ...): a photo is not footage."""
    return format_name == "image2" or format_name.endswith("_pipe")


def _looks_like_text(head: bytes) -> bool:
    try:  # an incremental decoder tolerates a character cut off at the end of `head`
        text = codecs.getincrementaldecoder("utf-8")().decode(head)
    except UnicodeDecodeError:
        return False
    return "\x00" not in text and all(c.isprintable() or c.isspace() for c in text)


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _rate(value: Any) -> float | None:
    """ffprobe's "30000/1001" as a float; "0/0" (unknown) as None."""
    try:
        rate = Fraction(str(value))
    except (ValueError, ZeroDivisionError):
        return None
    return float(rate) if rate > 0 else None
