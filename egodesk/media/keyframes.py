"""Keyframes (CARVE): the few frames of a clip that stand for the rest, and their thumbnails on disk."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import cv2
import numpy as np

from egodesk.media.frames import downscale

KMEANS_SEED = 1234  # fixed so that re-indexing the same clip picks the same keyframes
KMEANS_ATTEMPTS = 3
KMEANS_CRITERIA = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 100, 1e-4)


def select_keyframes(features: np.ndarray, k: int) -> list[int]:
    """Indices (ascending, i.e. in time order) of one frame per k-means cluster: the member nearest
    the cluster's centroid.

    `features` is one row per sampled frame. Euclidean k-means; for L2-normalised embeddings that ranks
    like cosine similarity. k is capped by the number of frames and of distinct rows, since identical
    frames cannot fill separate clusters. Deterministic for the same input (fixed seed).
    """
    data = np.ascontiguousarray(features, dtype=np.float32)
    if data.ndim != 2:
        raise ValueError(f"features must be a 2-D array (frames x dims), not shape {data.shape}")
    if not np.isfinite(data).all():
        raise ValueError("features contain NaN or infinite values")
    if len(data) == 0 or k < 1:
        return []
    k = min(k, len(np.unique(data, axis=0)))
    if k == 1:  # one cluster's centroid is the mean (and OpenCV reads a lone row, a photo's, as a column of samples)
        return [int(np.argmin(np.linalg.norm(data - data.mean(axis=0), axis=1)))]
    cv2.setRNGSeed(KMEANS_SEED)  # OpenCV's RNG drives the k-means++ seeding
    _, labels, centres = cv2.kmeans(data, k, None, KMEANS_CRITERIA, KMEANS_ATTEMPTS, cv2.KMEANS_PP_CENTERS)
    labels = labels.ravel()
    chosen = []
    for cluster, centre in enumerate(centres):
        members = np.flatnonzero(labels == cluster)
        if members.size:  # k-means can leave a cluster empty; it has no frame to give
            distances = np.linalg.norm(data[members] - centre, axis=1)
            chosen.append(int(members[np.argmin(distances)]))
    return sorted(chosen)


def write_thumbnail(frame: np.ndarray, path: str | os.PathLike, max_side: int = 320, quality: int = 80) -> Path:
    """Save a downscaled JPEG of `frame` at `path`, atomically: a reader never sees half a file."""
    path = Path(path)
    ok, encoded = cv2.imencode(".jpg", downscale(frame, max_side), [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError(f"{path}: the frame could not be encoded as JPEG")
    path.parent.mkdir(parents=True, exist_ok=True)
    # Same folder, so os.replace is a rename on one file system; encoding to bytes first also avoids
    # cv2.imwrite, which cannot open non-ASCII paths on Windows.
    handle, temp = tempfile.mkstemp(prefix=".thumb-", suffix=".tmp", dir=path.parent)  # short: long names fit
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(encoded.tobytes())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return path
