"""The model manager's probe, outside the GUI: what a person adding a VLM is told when a file is wrong
(no VLM weights exist offline; the LLM probe runs with the real test model in tests/gui/test_dialogs.py)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from egodesk.perception.captioner import CaptionerError
from egodesk.pipeline.model_probe import probe_vlm


def test_a_vlm_probe_names_the_file_that_is_missing_or_unreadable(tmp_path):
    image = tmp_path / "probe.jpg"
    cv2.imwrite(str(image), np.full((32, 32, 3), 128, dtype=np.uint8))
    with pytest.raises(CaptionerError, match=str(tmp_path / "vlm.gguf")):
        probe_vlm(str(tmp_path / "vlm.gguf"), str(tmp_path / "mmproj.gguf"), str(image))
    with pytest.raises(FileNotFoundError, match="cannot be read: .*nothing.jpg"):
        probe_vlm(str(tmp_path / "vlm.gguf"), str(tmp_path / "mmproj.gguf"), str(tmp_path / "nothing.jpg"))
