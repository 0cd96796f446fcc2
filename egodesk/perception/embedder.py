"""Text embeddings, L2-normalised float32 (cosine = dot product), from one of two manifest models:

- `embedder-nomic` (the default): nomic-embed-text-v1.5, f16 GGUF through llama.cpp, mean pooling.
  It was trained with task prefixes, so queries and documents are embedded differently
  (`search_query: ` / `search_document: `). Dense-only Hit@5 on LoCoMo ~0.68 against MiniLM's ~0.39.
- `embedder` (the fast tier, and the quick tests'): all-MiniLM-L6-v2 int8 ONNX through onnxruntime,
  384-d, symmetric (a query is embedded like a document); texts truncated at 256 word pieces.

Every vector space records the `model_id` that built it; a library opened with another embedder is
re-embedded (`egodesk.memory.reembed`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np

from egodesk.core.settings import Settings

MAX_TOKENS = 256
BATCH = 32


class TextEmbedder(Protocol):
    dim: int
    model_id: str

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """Vectors of texts to be stored and searched (memories, captions, tag lists)."""
        ...

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Vectors of texts that search (questions and the words drawn from them)."""
        ...


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32)


class MiniLMEmbedder:
    """The fast tier: float32 (n, 384) unit vectors."""

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

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch([t if t.strip() else " " for t in texts])
        # Batched by similar length so padding stays small.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), BATCH):
            chunk = order[start : start + BATCH]
            out[chunk] = self._embed_encoded([encodings[i] for i in chunk])
        return out

    embed_queries = embed_documents  # trained symmetric: no query form

    def _embed_encoded(self, encodings) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        summed = (hidden * mask[:, :, None]).sum(axis=1)
        return _unit_rows(summed / np.maximum(mask.sum(axis=1, keepdims=True), 1))


NOMIC_DIM = 768
NOMIC_QUERY, NOMIC_DOCUMENT = "search_query: ", "search_document: "
# Texts per llama.cpp call: 4-8 run at ~7 texts/s a core; one call with 100 texts fell to 2.3/s.
NOMIC_BATCH = 8
# Tokens a llama.cpp call holds (and a text is cut at): a 2048-token context ran 2-5x slower on
# the same short texts, and memories are sentences to a short paragraph.
NOMIC_CTX = 512


class NomicEmbedder:
    """nomic-embed-text-v1.5 in llama.cpp: mean pooling, unit vectors of `dim` (768, or a Matryoshka
    prefix: layer-normed, cut to `dim`, re-normalised, as nomic specifies)."""

    def __init__(self, model_path: Path, threads: int = 1, dim: int = NOMIC_DIM):
        from llama_cpp import LLAMA_POOLING_TYPE_MEAN, Llama

        if not 64 <= dim <= NOMIC_DIM:
            raise ValueError(f"nomic-embed-text-v1.5 gives 64 to {NOMIC_DIM} dimensions, not {dim}")
        self.dim = dim
        self.model_id = "nomic-embed-text-v1.5-f16" + ("" if dim == NOMIC_DIM else f"-{dim}d")
        self._llm = Llama(
            model_path=str(model_path),
            embedding=True,
            pooling_type=LLAMA_POOLING_TYPE_MEAN,
            n_ctx=NOMIC_CTX,
            n_batch=NOMIC_CTX,
            n_ubatch=NOMIC_CTX,
            n_threads=threads,
            n_threads_batch=threads,
            verbose=False,
        )

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._embed(NOMIC_DOCUMENT, texts)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._embed(NOMIC_QUERY, texts)

    def _embed(self, prefix: str, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), NOMIC_BATCH):
            chunk = order[start : start + NOMIC_BATCH]
            pooled = np.asarray(
                self._llm.embed([prefix + texts[i] for i in chunk], normalize=False, truncate=True), dtype=np.float32
            )
            out[chunk] = _unit_rows(self._matryoshka(pooled))
        return out

    def _matryoshka(self, pooled: np.ndarray) -> np.ndarray:
        if self.dim == NOMIC_DIM:
            return pooled
        centred = pooled - pooled.mean(axis=1, keepdims=True)
        return (centred / np.sqrt(centred.var(axis=1, keepdims=True) + 1e-5))[:, : self.dim]


DEFAULT_MODEL = Settings.model_fields["embedder_model"].default


def make_embedder(threads: int = 1, user_models: Path | None = None, model: str = DEFAULT_MODEL) -> TextEmbedder:
    """The embedder of manifest role `model` (Settings.embedder_model) from its verified files."""
    from egodesk.core.manifest import locate, locate_file

    if model == "embedder-nomic":
        return NomicEmbedder(locate_file(model, user_models), threads=threads)
    if model == "embedder":
        return MiniLMEmbedder(locate(model, user_models), threads=threads)
    raise ValueError(f"unknown embedder model {model!r} (embedder-nomic or embedder)")


# The model id each role's embedder stamps on the spaces it builds: a library's spaces name the role
# that can embed questions for them.
MODEL_ID_OF_ROLE = {"embedder-nomic": "nomic-embed-text-v1.5-f16", "embedder": MiniLMEmbedder.model_id}
ROLE_OF_MODEL_ID = {model_id: role for role, model_id in MODEL_ID_OF_ROLE.items()}
