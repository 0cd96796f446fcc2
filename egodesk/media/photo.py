"""Photos: JPEG, PNG and HEIC/HEIF (Apple's, read through pillow-heif) become a moment of the timeline.

`photo_facts` says whether a file is a photo egodesk reads, by its content (a JPEG named .png is still a
JPEG), and proves the picture decodes, so a photo cut short by an interrupted copy is refused at import
with its reason, as a truncated video is. `read_photo` gives its pixels the way frames come from a
video (BGR, upright as the camera's orientation tag says), no larger than a 4K frame: the tagger and the
OCR read video frames of that size, and a 50-megapixel decode would only cost memory.

When it was taken: EXIF DateTimeOriginal (the shutter), else DateTime (last written by the camera), as
local wall-clock time, or at the zone its OffsetTimeOriginal tag names.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import numpy as np
from PIL import ExifTags, Image, ImageOps, UnidentifiedImageError
from pillow_heif import register_heif_opener

from egodesk.media.errors import MediaError

register_heif_opener()  # HEIC and HEIF for Image.open
# Pillow refuses pictures past ~179 megapixels as a guard against decompression bombs from the web; a
# person's own camera makes 200-megapixel photos. The limit stays, a little above them.
Image.MAX_IMAGE_PIXELS = 250_000_000

PHOTO_EXTENSIONS = frozenset({".jpg", ".jpeg", ".png", ".heic", ".heif"})
# Pillow's names for the formats taken as photos ("MPO": the multi-picture JPEG some phones write). Any
# other image Pillow knows (a GIF, a TIFF, an icon) is not a camera photo.
PHOTO_FORMATS = frozenset({"JPEG", "MPO", "PNG", "HEIF"})
MAX_SIDE = 3840

_EXIF_TIME = "%Y:%m:%d %H:%M:%S"


@dataclass(frozen=True)
class PhotoFacts:
    format: str  # Pillow's name: JPEG, MPO, PNG, HEIF
    width: int  # upright, as shown
    height: int
    taken: datetime | None  # aware (local zone unless the photo names its own); None when it does not say


def photo_facts(path: str | os.PathLike) -> PhotoFacts | None:
    """The photo's facts, None when the file is not a photo (a video, a sound); MediaError when it is a
    photo that cannot be read whole."""
    try:
        image = Image.open(path)
    except (UnidentifiedImageError, ValueError):
        return None
    except OSError as exc:
        raise MediaError(path, f"cannot read the file ({exc.strerror or exc})") from exc
    with image:
        if image.format not in PHOTO_FORMATS:
            return None
        exif = image.getexif()
        size = _upright_size(image.size, exif.get(ExifTags.Base.Orientation))
        try:
            image.draft("RGB", (MAX_SIDE, MAX_SIDE))  # JPEG decodes at a smaller scale: fast, and still whole
            image.load()
        except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
            raise MediaError(path, f"unreadable photo: truncated or corrupt ({exc})") from exc
        return PhotoFacts(image.format, size[0], size[1], _taken(exif))


def read_photo(path: str | os.PathLike) -> np.ndarray:
    """The photo's pixels as a BGR array, upright, at most MAX_SIDE on its long side."""
    try:
        with Image.open(path) as image:
            image.draft("RGB", (MAX_SIDE, MAX_SIDE))
            upright = ImageOps.exif_transpose(image.convert("RGB"))
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        raise MediaError(path, f"unreadable photo ({exc})") from exc
    upright.thumbnail((MAX_SIDE, MAX_SIDE))
    return np.ascontiguousarray(np.asarray(upright)[:, :, ::-1])


def _upright_size(size: tuple[int, int], orientation: object) -> tuple[int, int]:
    """EXIF orientations 5-8 turn the picture a quarter: width and height swap."""
    return (size[1], size[0]) if orientation in (5, 6, 7, 8) else size


def _taken(exif: Image.Exif) -> datetime | None:
    details = exif.get_ifd(ExifTags.IFD.Exif)
    for stamp, offset in (
        (details.get(ExifTags.Base.DateTimeOriginal), details.get(ExifTags.Base.OffsetTimeOriginal)),
        (exif.get(ExifTags.Base.DateTime), details.get(ExifTags.Base.OffsetTime)),
    ):
        try:
            moment = datetime.strptime(str(stamp).strip("\x00 "), _EXIF_TIME)
        except ValueError:
            continue  # absent (None), blank, or "0000:00:00 00:00:00" from an unset clock
        zone = _zone(offset)
        return moment.replace(tzinfo=zone) if zone is not None else moment.astimezone()  # naive = local time
    return None


def _zone(offset: object) -> timezone | None:
    """ "+02:00" as a zone; None when absent or malformed."""
    text = str(offset or "").strip("\x00 ")
    if len(text) != 6 or text[0] not in "+-" or text[3] != ":":
        return None
    try:
        delta = timedelta(hours=int(text[1:3]), minutes=int(text[4:6]))
    except ValueError:
        return None
    return timezone(delta if text[0] == "+" else -delta)
