"""select_keyframes (k-means, nearest-to-centroid, deterministic) and atomic thumbnails."""

from __future__ import annotations

import os

import cv2
import numpy as np
import pytest

from egodesk.media import keyframes as keyframes_module
from egodesk.media.keyframes import select_keyframes, write_thumbnail


def blobs(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Three tight, far-apart groups of five 8-d vectors, interleaved in time; and each row's group."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(3, 8)) * 20
    groups = np.tile(np.arange(3), 5)
    return (centres[groups] + rng.normal(scale=0.3, size=(15, 8))).astype(np.float32), groups


def test_one_keyframe_per_cluster_nearest_its_centroid():
    features, groups = blobs()
    chosen = select_keyframes(features, 3)
    assert chosen == sorted(chosen)
    assert sorted(groups[chosen]) == [0, 1, 2]
    for index in chosen:
        members = np.flatnonzero(groups == groups[index])
        centroid = features[members].mean(axis=0)
        nearest = members[np.argmin(np.linalg.norm(features[members] - centroid, axis=1))]
        assert index == nearest


def test_deterministic_whatever_the_rng_state():
    features = np.random.default_rng(7).normal(size=(15, 32)).astype(np.float32)  # no real clusters
    first = select_keyframes(features, 5)
    cv2.setRNGSeed(99)
    np.random.seed(3)
    assert select_keyframes(features, 5) == first
    assert len(first) == 5 and len(set(first)) == 5


def test_k_is_capped_by_frames_and_distinct_frames():
    features, _ = blobs()
    assert select_keyframes(features[:4], 10) == [0, 1, 2, 3]
    same = np.ones((6, 4), np.float32)
    assert len(select_keyframes(same, 5)) == 1
    two = np.array([[0, 0], [0, 0], [5, 5], [5, 5], [0, 0]], np.float32)
    assert len(select_keyframes(two, 5)) == 2


def test_degenerate_inputs():
    assert select_keyframes(np.zeros((0, 8), np.float32), 5) == []
    assert select_keyframes(blobs()[0], 0) == []
    assert select_keyframes(np.arange(8, dtype=np.float64).reshape(4, 2), 1) in ([1], [2])  # any dtype
    with pytest.raises(ValueError, match="2-D"):
        select_keyframes(np.zeros(8, np.float32), 2)
    with pytest.raises(ValueError, match="NaN"):
        select_keyframes(np.array([[0.0, np.nan], [1.0, 1.0]], np.float32), 2)


def frame() -> np.ndarray:
    image = np.zeros((480, 848, 3), np.uint8)
    image[:, :424] = (0, 0, 255)
    return image


def test_thumbnail_is_a_small_jpeg(tmp_path):
    path = write_thumbnail(frame(), tmp_path / "thumbs" / "clip 1 – ü.jpg")
    assert path.read_bytes()[:2] == b"\xff\xd8"
    image = cv2.imdecode(np.frombuffer(path.read_bytes(), np.uint8), cv2.IMREAD_COLOR)
    assert image.shape == (181, 320, 3)
    assert os.listdir(path.parent) == [path.name]  # no temp file left behind


def test_thumbnail_replaces_atomically(tmp_path, monkeypatch):
    path = tmp_path / "t.jpg"
    write_thumbnail(frame(), path, max_side=64)
    before = path.read_bytes()

    def crash(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(keyframes_module.os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        write_thumbnail(frame(), path, max_side=128, quality=95)
    assert path.read_bytes() == before  # the old thumbnail is intact
    assert os.listdir(tmp_path) == ["t.jpg"]
