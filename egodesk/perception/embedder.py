"""Text embeddings: all-MiniLM-L6-v2 (int8 ONNX) through onnxruntime, 384-d, L2-normalised.

Mean pooling over the attention mask, as sentence-transformers does for this model. Texts are
batched by similar length so padding stays small; the tokenizer truncates at 256 word pieces
(the model was trained on 256).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np

MAX_TOKENS = 256
BATCH = 32


class TextEmbedder(Protocol):
    dim: int
    model_id: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


class MiniLMEmbedder:
    """The default embedder. `embed` returns float32 (n, 384) unit vectors; cosine = dot product."""

    dim = 384
    model_id = "all-MiniLM-L6-v2-int8"

    def __init__(self, model_dir: Path, threads: int = 1):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(model_dir / "model.onnx"), options, providers=["CPUExecutionProvider"])
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # The shipped tokenizer.json pads every input to 128: pad per batch instead.
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(MAX_TOKENS)

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch([t if t.strip() else " " for t in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), BATCH):
            chunk = order[start:start + BATCH]
            out[chunk] = self._embed_encoded([encodings[i] for i in chunk])
        return out

    def _embed_encoded(self, encodings) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        summed = (hidden * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


def make_embedder(threads: int = 1, user_models: Path | None = None) -> TextEmbedder:
    from egodesk.core.manifest import locate

    return MiniLMEmbedder(locate("embedder", user_models), threads=threads)
