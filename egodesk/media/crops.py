"""A region of a frame as a small square JPEG in memory (a face's picture for the People panel).

The rule: the box grown by `margin` of its size on every side (a face's box is tight: the hair and chin
make it recognisable), made square around its centre, clipped to the frame, shrunk to `side` pixels,
JPEG-encoded. Returned as bytes, never written: a face's picture is derived from the footage on demand,
so forgetting a face leaves no file of it behind.
"""

from __future__ import annotations

import cv2
import numpy as np


def square_crop_jpeg(
    frame: np.ndarray, box: tuple[int, int, int, int], side: int = 96, margin: float = 0.3, quality: int = 85
) -> bytes:
    """The JPEG of `box` (left, top, right, bottom) of a BGR `frame`, as described above."""
    left, top, right, bottom = box
    half = max(right - left, bottom - top) * (0.5 + margin)
    cx, cy = (left + right) / 2, (top + bottom) / 2
    height, width = frame.shape[:2]
    x0, y0 = max(0, round(cx - half)), max(0, round(cy - half))
    x1, y1 = min(width, round(cx + half)), min(height, round(cy + half))
    if x1 <= x0 or y1 <= y0:
        raise ValueError(f"the box {box} lies outside the {width}x{height} frame")
    region = cv2.resize(frame[y0:y1, x0:x1], (side, side), interpolation=cv2.INTER_AREA)
    ok, encoded = cv2.imencode(".jpg", region, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("the region could not be encoded as JPEG")
    return encoded.tobytes()
