"""Run a model the user is adding once, the way egodesk will use it, and say what it answered and how
fast (the model manager's "Probe" button; its op runs this in a worker process)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import cv2

from egodesk.perception.captioner import ClipContext, Keyframe, VlmCaptioner
from egodesk.perception.llm import LocalLLM, ServerLLM

PROBE_PROMPT = [{"role": "user", "content": "Reply with one short sentence: what is a camera for?"}]


def probe_llm(kind: str, path: str = "", url: str = "", model: str = "", threads: int = 2) -> str:
    """A local GGUF (`kind` "gguf") or an OpenAI-compatible server (`kind` "server") answers one prompt."""
    started = time.monotonic()
    llm: Any = ServerLLM(url, model, timeout=60.0) if kind == "server" else LocalLLM(Path(path), threads=threads, n_ctx=512)
    loaded = time.monotonic()
    text, prompt_tokens = llm.chat(PROBE_PROMPT, max_tokens=24)
    answered = time.monotonic()
    return (
        f"{llm.model_id} answered in {answered - loaded:.1f} s (loaded in {loaded - started:.1f} s, "
        f"{prompt_tokens} prompt tokens): {text.strip()[:200]!r}"
    )


def probe_vlm(model_path: str, mmproj_path: str, image_path: str, threads: int = 2) -> str:
    """A GGUF vision-language model and its projector caption one image, as they would a clip."""
    if not image_path or (image := cv2.imread(image_path)) is None:
        raise FileNotFoundError(f"the image file cannot be read: {image_path or '(none given)'}")
    started = time.monotonic()
    captioner = VlmCaptioner(model_path, mmproj_path, threads=threads, n_ctx=4096, max_tokens=60)
    text = captioner.caption(ClipContext(start=0.0, end=1.0, keyframes=[Keyframe(image=image)]))
    return f"{Path(model_path).name} described the test image in {time.monotonic() - started:.1f} s: {text[:200]!r}"
