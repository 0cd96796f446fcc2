"""Frame tags and frame features from EfficientNet-Lite0 (ONNX, onnxruntime on CPU).

One forward pass gives both: ImageNet-1k class probabilities (the tags a caption is written from) and
the 1280-d pooled features (CARVE's frame embeddings, used for keyframe clustering and visual memory).

Preprocessing follows the TF EfficientNet-Lite evaluation recipe the weights were trained with:
centre crop of 224/256 of the shorter side (same as "resize shorter side to 256, crop 224"), resize to
224x224, BGR -> RGB, then (x - 127) / 128 (constants in `tagger_export`). Checked once with torch on
walk-video frames: the stem convolution's outputs match the weights' batch-norm running statistics
for (x-127)/128 inputs (mean |z| 0.15, |log var ratio| 0.45) far better than for ImageNet mean/std
(0.36, 1.17) or [0, 1] inputs (0.47, 1.76), and RGB order fits better than BGR.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np

from egodesk.perception.tagger_export import INPUT_SIZE, PIXEL_MEAN, PIXEL_STD

if TYPE_CHECKING:
    from egodesk.core.settings import Settings

MODEL_FILE = "efficientnet-lite0.onnx"
LABELS_FILE = "labels.json"
CROP_FRACTION = 224 / 256
BATCH = 8


@dataclass(frozen=True)
class TagResult:
    features: np.ndarray  # float32 (n, 1280), each row L2-normalised
    probs: np.ndarray  # float32 (n, 1000), each row a softmax


def preprocess(frame: np.ndarray) -> np.ndarray:
    """One BGR uint8 frame (any size) -> float32 CHW 224x224 as the network expects."""
    if frame.ndim == 2:
        frame = cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    h, w = frame.shape[:2]
    side = max(1, round(min(h, w) * CROP_FRACTION))
    top, left = (h - side) // 2, (w - side) // 2
    crop = frame[top : top + side, left : left + side]
    # INTER_AREA when shrinking avoids aliasing; cubic when a small frame is enlarged.
    interp = cv2.INTER_AREA if side > INPUT_SIZE else cv2.INTER_CUBIC
    rgb = cv2.cvtColor(cv2.resize(crop, (INPUT_SIZE, INPUT_SIZE), interpolation=interp), cv2.COLOR_BGR2RGB)
    return ((rgb.astype(np.float32) - PIXEL_MEAN) / PIXEL_STD).transpose(2, 0, 1)


class FrameTagger:
    def __init__(self, model_dir: Path, threads: int = 2):
        import onnxruntime as ort

        model_dir = Path(model_dir)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(model_dir / MODEL_FILE), options, providers=["CPUExecutionProvider"])
        self.labels: list[str] = json.loads((model_dir / LABELS_FILE).read_text(encoding="utf-8"))
        if len(self.labels) != 1000:
            raise ValueError(f"{model_dir / LABELS_FILE}: expected 1000 ImageNet labels, found {len(self.labels)}")

    def analyse(self, frames: list[np.ndarray]) -> TagResult:
        logits, features = [], []
        for i in range(0, len(frames), BATCH):
            batch = np.stack([preprocess(f) for f in frames[i : i + BATCH]])
            out_logits, out_features = self._session.run(["logits", "features"], {"images": batch})
            logits.append(out_logits)
            features.append(out_features)
        if not frames:
            return TagResult(np.zeros((0, 1280), np.float32), np.zeros((0, 1000), np.float32))
        return TagResult(_l2_normalise(np.concatenate(features)), _softmax(np.concatenate(logits)))

    def top_labels(self, probs_row: np.ndarray, k: int = 5) -> list[tuple[str, float]]:
        order = np.argsort(-probs_row, kind="stable")[:k]
        return [(self.labels[i], float(probs_row[i])) for i in order]


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (shifted / shifted.sum(axis=1, keepdims=True)).astype(np.float32)


def _l2_normalise(x: np.ndarray) -> np.ndarray:
    return (x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)).astype(np.float32)


def make_tagger(settings: Settings, user_models: Path | None = None) -> FrameTagger:
    from egodesk.core.manifest import locate

    return FrameTagger(locate("tagger", user_models), threads=settings.threads)
