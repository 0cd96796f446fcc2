"""Faces in a picture: where they are and a 128-d print of each, with dlib (`dlib-bin`) and the `faces`
role of the model manifest (5-point landmarks, ResNet embedding). Offline; nothing is downloaded.

The rule: a picture (RGB uint8) is brought to at most `MAX_SIDE` on its longer side, dlib's HOG frontal
face detector runs on it at upsample 0 (a picture under `SMALL_SIDE` is looked at doubled, upsample 1,
so a face of 40 px in a small picture is still found), each box scoring `MIN_SCORE` or more gets its 5
landmarks and its embedding (no jitter), and boxes are given in the picture's own pixels. Why: HOG at
upsample 0 costs about 30-40 ms of CPU on an 848x480 keyframe, so a keyframe without a face costs little
(docs/faces.md); the CNN detector (2.3 s a frame) and upsample 1 on full frames (4x) do not fit ingest.
Two prints of one person are closer than `SAME_PERSON` (Euclidean distance).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

LANDMARKS = "shape_predictor_5_face_landmarks.dat"
EMBEDDING = "dlib_face_recognition_resnet_model_v1.dat"
DIMENSIONS = 128
MAX_SIDE = 960  # larger frames (4K cameras, photos) are shrunk first: HOG's cost grows with the pixels
SMALL_SIDE = 480  # under this, the picture is doubled for the detector (HOG's window is 80 px)
# Detector scores: the astronaut's face scores 1.18-1.53 in every copy the tests make of it (crop,
# mirror, half size, dark JPEG); the one spurious box seen (a patch of the dark copy's suit) 0.07.
MIN_SCORE = 0.5
# Same person when closer than this. docs/faces.md measured, on 19 faces: the same face re-cropped,
# at half size, mirrored or as a dark JPEG within 0.26 of itself; two different people at least 0.41
# apart, 0.6 % of 171 pairs under 0.5 and 5.3 % under dlib's own 0.6. Real re-sightings (another day,
# angle, light) sit further apart than those copies, so 0.5 keeps them while rarely joining strangers.
SAME_PERSON = 0.5


@dataclass(frozen=True)
class Face:
    """One face found: its box (left, top, right, bottom) in the picture's pixels, the detector's score
    and its print (128 float32)."""

    box: tuple[int, int, int, int]
    score: float
    vector: np.ndarray


def distance(a: np.ndarray, b: np.ndarray) -> float:
    """Euclidean distance between two prints (what `SAME_PERSON` is measured in)."""
    return float(np.linalg.norm(np.asarray(a, np.float32) - np.asarray(b, np.float32)))


class FaceFinder:
    """Detector, landmarks and embedding loaded once (0.6 s of CPU, about 70 MB); `find` per picture.
    dlib holds the GIL while it runs: use it in the worker process, like the other models."""

    def __init__(self, folder: Path):
        import dlib

        self._detector = dlib.get_frontal_face_detector()
        self._landmarks = dlib.shape_predictor(str(folder / LANDMARKS))
        self._embedding = dlib.face_recognition_model_v1(str(folder / EMBEDDING))
        self._rectangle = dlib.rectangle

    def find(self, rgb: np.ndarray) -> list[Face]:
        """Every face found in an RGB uint8 picture (H, W, 3), best score first."""
        if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
            raise ValueError(f"a face is looked for in an RGB uint8 picture, not {rgb.dtype} {rgb.shape}")
        height, width = rgb.shape[:2]
        scale = min(1.0, MAX_SIDE / max(height, width))
        picture = (
            rgb if scale == 1.0 else cv2.resize(rgb, (round(width * scale), round(height * scale)), interpolation=cv2.INTER_AREA)
        )
        picture = np.ascontiguousarray(picture)
        upsample = 1 if max(picture.shape[:2]) < SMALL_SIDE else 0
        boxes, scores, _ = self._detector.run(picture, upsample, 0.0)
        faces = []
        for box, score in sorted(zip(boxes, scores), key=lambda pair: -pair[1]):
            if score < MIN_SCORE:
                continue
            shape = self._landmarks(picture, box)
            vector = np.asarray(self._embedding.compute_face_descriptor(picture, shape, 0), np.float32)
            left, top = max(0, round(box.left() / scale)), max(0, round(box.top() / scale))
            right, bottom = min(width, round(box.right() / scale)), min(height, round(box.bottom() / scale))
            faces.append(Face((left, top, right, bottom), round(float(score), 4), vector))
        return faces
