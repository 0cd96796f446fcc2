"""The EfficientNet-Lite0 tagger on real frames of the walk video."""

from __future__ import annotations

import time

import cv2
import numpy as np
import pytest

from egodesk.core.settings import Settings
from egodesk.perception.tagger import BATCH, FrameTagger, make_tagger, preprocess
from tests.conftest import WALK_VIDEO

# ImageNet has no "sidewalk": these are the classes a sidewalk beside a building and a car park can
# honestly map to.
OUTDOOR = {
    "patio",
    "lakeshore",
    "mobile home",
    "greenhouse",
    "picket fence",
    "handrail / baluster",
    "street sign",
    "traffic light",
    "parking meter",
    "park bench",
    "flagpole",
    "lighthouse",
    "solar thermal collector",
    "chain-link fence",
    "split-rail fence",
    "maze",
    "pier",
    "boathouse",
    "moving van",
    "car mirror",
    "station wagon",
    "minivan",
    "sundial",
    "dam",
    "suspension bridge",
    "through arch bridge",
}


def walk_frames(indices) -> list[np.ndarray]:
    capture = cv2.VideoCapture(str(WALK_VIDEO))
    frames = []
    for index in indices:
        capture.set(cv2.CAP_PROP_POS_FRAMES, index)
        ok, frame = capture.read()
        assert ok, index
        frames.append(frame)
    capture.release()
    return frames


@pytest.fixture(scope="module")
def tagger() -> FrameTagger:
    return make_tagger(Settings(threads=2))


@pytest.fixture(scope="module")
def frames() -> list[np.ndarray]:
    return walk_frames(range(0, 315, 20))  # 16 frames: two full batches


def test_walk_frames_get_outdoor_tags_and_unit_features(tagger, frames):
    tagger.analyse(frames[:1])  # warm-up, so the timing below is steady-state
    started = time.perf_counter()
    result = tagger.analyse(frames)
    per_frame = (time.perf_counter() - started) / len(frames) * 1000
    print(f"\ntagger: {per_frame:.1f} ms/frame (batch {BATCH}, 2 threads, {len(frames)} frames of 848x480)")
    assert result.features.shape == (16, 1280) and result.features.dtype == np.float32
    assert result.probs.shape == (16, 1000) and result.probs.dtype == np.float32
    assert np.allclose(np.linalg.norm(result.features, axis=1), 1.0, atol=1e-5)
    assert np.allclose(result.probs.sum(axis=1), 1.0, atol=1e-4)
    for row in result.probs:
        top = tagger.top_labels(row, 5)
        assert len(top) == 5 and top == sorted(top, key=lambda t: -t[1])
        assert OUTDOOR & {label for label, _ in top}, top
    # Frames 20 apart in one walk look alike.
    assert float(result.features[0] @ result.features[1]) > 0.7


def test_batching_does_not_change_results(tagger, frames):
    one = tagger.analyse([frames[3]])
    many = tagger.analyse(frames[: BATCH + 2])
    assert np.allclose(one.features[0], many.features[3], atol=1e-4)
    assert np.allclose(one.probs[0], many.probs[3], atol=1e-4)


def test_labels_and_odd_inputs(tagger):
    assert len(tagger.labels) == 1000 and tagger.labels[0] == "tench"
    empty = tagger.analyse([])
    assert empty.features.shape == (0, 1280) and empty.probs.shape == (0, 1000)
    odd = tagger.analyse([np.zeros((40, 30), np.uint8), np.full((1080, 1920, 3), 200, np.uint8)])
    assert odd.features.shape == (2, 1280)


def test_preprocess_is_a_centre_crop_in_rgb_scaled_like_tflite():
    frame = np.zeros((480, 848, 3), np.uint8)
    frame[:, :, 0] = 255  # pure blue in BGR
    frame[:, :50] = 0  # the sides are cropped away
    x = preprocess(frame)
    assert x.shape == (3, 224, 224) and x.dtype == np.float32
    assert np.allclose(x[2], (255 - 127) / 128) and np.allclose(x[0], -127 / 128)
