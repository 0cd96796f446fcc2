"""Faces found and printed by the real dlib models: a real face (the NASA astronaut portrait skimage ships,
public domain) found again in other copies of the picture within the same-person distance, and none in
the walk footage, which has no people."""

from __future__ import annotations

import time

import cv2
import numpy as np
import pytest

from egodesk.core.manifest import ModelMissing, locate
from egodesk.core.types import ClipSpan
from egodesk.media.frames import sample_frames
from egodesk.perception.faces import DIMENSIONS, SAME_PERSON, FaceFinder, distance
from tests.conftest import MEDIA


@pytest.fixture(scope="module")
def finder() -> FaceFinder:
    try:
        return FaceFinder(locate("faces"))
    except ModelMissing:
        pytest.skip("the faces model is installed by ./setup.sh")


@pytest.fixture(scope="module")
def astronaut() -> np.ndarray:
    from skimage import data

    return data.astronaut()  # 512x512 RGB; Eileen Collins, NASA portrait (public domain)


def _dark_jpeg(rgb: np.ndarray) -> np.ndarray:
    ok, encoded = cv2.imencode(".jpg", (rgb * 0.6).astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 40])
    assert ok
    return cv2.imdecode(encoded, cv2.IMREAD_UNCHANGED)


def test_one_face_in_the_astronaut_portrait_with_a_128_d_print(finder, astronaut):
    [face] = finder.find(astronaut)
    left, top, right, bottom = face.box
    assert 150 < left < right < 300 and 60 < top < bottom < 200  # her face, not the flag or the suit
    assert face.vector.shape == (DIMENSIONS,) and face.vector.dtype == np.float32
    assert face.score > 1.0


@pytest.mark.parametrize(
    "copy",
    [
        pytest.param(lambda im: im[50:400, 100:450], id="crop"),
        pytest.param(lambda im: im[:, ::-1], id="mirror"),
        pytest.param(lambda im: cv2.resize(im, (256, 256), interpolation=cv2.INTER_AREA), id="half"),
        pytest.param(_dark_jpeg, id="dark-jpeg"),
        pytest.param(lambda im: cv2.resize(im, (2048, 2048), interpolation=cv2.INTER_CUBIC), id="4x-shrunk-first"),
    ],
)
def test_the_same_face_found_again_stays_within_the_same_person_distance(finder, astronaut, copy):
    [original] = finder.find(astronaut)
    faces = finder.find(np.ascontiguousarray(copy(astronaut)))
    assert faces, "the face was not found again"
    assert distance(faces[0].vector, original.vector) < SAME_PERSON / 2  # well inside: it is the same picture
    assert all(distance(f.vector, original.vector) >= SAME_PERSON for f in faces[1:])  # anything else is not her


def test_no_face_in_the_walk_footage_and_little_cost_per_frame(finder):
    frames = list(sample_frames(MEDIA / "gopro_max-heromode.mp4", [ClipSpan(0, 0.0, 10.0)], 10))
    assert len(frames) == 10
    started = time.process_time()
    found = [finder.find(np.ascontiguousarray(f.frame[:, :, ::-1])) for f in frames]
    per_frame = (time.process_time() - started) / len(frames)
    assert found == [[]] * len(frames)
    print(f"no face: {per_frame * 1000:.1f} ms of CPU a {frames[0].frame.shape[1]}x{frames[0].frame.shape[0]} frame")
    assert per_frame < 0.5  # about 30 ms here; a generous bound for a loaded machine


def test_a_picture_that_is_not_rgb_uint8_is_refused(finder, astronaut):
    with pytest.raises(ValueError, match="RGB uint8"):
        finder.find(astronaut.astype(np.float32))
    with pytest.raises(ValueError, match="RGB uint8"):
        finder.find(astronaut[:, :, 0])


def test_the_sentence_a_caption_starts_with_for_the_named_faces_seen():
    from egodesk.perception.captioner import in_view

    assert in_view([]) == ""
    assert in_view(["Ana"]) == "Ana is in view."
    assert in_view(["Ana", "Tom", "Sam"]) == "Ana, Tom and Sam are in view."
