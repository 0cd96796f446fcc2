"""CARVE: parallel retrieval over several representations of each chunk, chunk-adaptive re-scoring.

Representations (modality x granularity) and their retrievers here:
- text-clip: the clip's caption or transcript, dense search in spaces "caption"/"transcript";
- text-frame: the keyframes' text (tag names, on-screen text), BM25 over the frame units;
- visual-clip / visual-frame: the clip's / keyframe's tagger features, reached from a text query
  through the tag vocabulary (`memory.visual.LabelIndex`: there is no CLIP offline).
Each retriever contributes its top candidates to one pool; every candidate is re-scored under the
representation that retrieved it, each chunk (clip) keeps its best-scoring representation and is
handed on in that one (`Evidence.view`).

The paper's re-scorer is a multimodal cross-encoder. The slot takes any `Reranker` (the LLM's
yes-probability when one is given); without one, the re-scorer is the text embedder: the cosine
between the question and the candidate's text in its representation (a caption, a tag list), one
scale for all representations, as the paper's raw cross-encoder scores are. Tag lists are embedded
when the visual memory is built (space "visual-text"), not per question.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from egodesk.core.types import Evidence
from egodesk.memory.vectors import load_vectors
from egodesk.memory.visual import TEXT_SPACE, LabelIndex
from egodesk.retrieval.base import Memory, Query, Strategy
from egodesk.retrieval.catalog import PARENT_KINDS
from egodesk.retrieval.rerank import Reranker

PER_REPRESENTATION = 5  # the paper's top-k per retriever
FRAME_KIND, VISUAL_CLIP_KIND = "frame", "visual-clip"

Retriever = Callable[[Memory, Query, np.ndarray, int], list[tuple[int, float]]]


def _text_clip(memory: Memory, query: Query, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
    allowed = memory.scope(query, PARENT_KINDS)
    hits = [h for space in PARENT_KINDS if memory.has(space) for h in memory.dense(space, vector, k, allowed)]
    return sorted(hits, key=lambda h: -h[1])[:k]


def _text_frame(memory: Memory, query: Query, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
    return memory.lexical([FRAME_KIND]).search(query.text, k, memory.scope(query, [FRAME_KIND]))


def _labels(kind: str) -> Retriever:
    def search(memory: Memory, query: Query, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        index = memory.cached(
            f"labels:{kind}", lambda: LabelIndex.load(memory.store, memory.embedder, memory.indices.dir, kind=kind)
        )
        catalog = memory.catalog()
        allowed = catalog.ids[memory.scope(query, [kind])]
        hits = index.search(vector, k, allowed_ids=allowed.tolist())
        rows = dict(zip(catalog.ids[catalog.rows(u for u, _ in hits)].tolist(), catalog.rows(u for u, _ in hits).tolist()))
        return [(rows[u], s) for u, s in hits if u in rows]

    return search


REPRESENTATIONS: dict[str, tuple[tuple[str, ...], Retriever]] = {
    "text-clip": (PARENT_KINDS, _text_clip),
    "text-frame": ((FRAME_KIND,), _text_frame),
    "visual-clip": ((VISUAL_CLIP_KIND,), _labels(VISUAL_CLIP_KIND)),
    "visual-frame": ((FRAME_KIND,), _labels(FRAME_KIND)),
}


class Carve(Strategy):
    name = "carve"

    def __init__(self, memory, reranker: Reranker | None = None):
        super().__init__(memory)
        self.reranker = reranker

    def searchable(self) -> list[str]:
        catalog = self.memory.catalog()
        return [rep for rep, (kinds, _) in REPRESENTATIONS.items() if catalog.mask(kinds=list(kinds)).any()]

    def available(self) -> bool:
        return bool(self.searchable())

    def rescore(self, question: str, pool: list[tuple[str, int, float]]) -> list[float]:
        """One score scale for every candidate: the reranker's, else the question's cosine to the
        candidate's text (text-clip candidates already carry it from their dense search)."""
        if self.reranker is not None:
            return list(self.reranker.score(question, [self.memory.catalog().text[row] for _, row, _ in pool]))
        todo = [i for i, (rep, _, _) in enumerate(pool) if rep != "text-clip"]
        scores = [score for _, _, score in pool]
        if todo:
            cosines = self.text_vectors([pool[i][1] for i in todo]) @ self.memory.embed(question)
            for i, cos in zip(todo, cosines.tolist()):
                scores[i] = cos
        return scores

    def text_vectors(self, rows: list[int]) -> np.ndarray:
        """The text embeddings of catalog rows: those the visual builder stored (TEXT_SPACE), the
        rest (a library built before that space, another embedder's vectors) embedded now."""
        memory, catalog = self.memory, self.memory.catalog()
        out = np.zeros((len(rows), memory.embedder.dim), dtype=np.float32)
        stored: dict[int, np.ndarray] = {}
        if memory.has(TEXT_SPACE) and memory.indices.model_id(TEXT_SPACE) == memory.embedder.model_id:
            with memory.store.session() as s:
                ids, matrix = load_vectors(s, TEXT_SPACE, catalog.ids[rows].tolist())
            stored = dict(zip(ids.tolist(), matrix))
        todo = []
        for i, row in enumerate(rows):
            vector = stored.get(int(catalog.ids[row]))
            if vector is None:
                todo.append(i)
            else:
                out[i] = vector
        if todo:
            out[todo] = memory.embedder.embed_documents([catalog.text[rows[i]] for i in todo])
        return out

    def retrieve(self, query: Query) -> list[Evidence]:
        memory, catalog = self.memory, self.memory.catalog()
        vector = memory.embed(query.text)
        per_rep = max(PER_REPRESENTATION, query.k)
        pool = [
            (rep, row, score)
            for rep in self.searchable()
            for row, score in REPRESENTATIONS[rep][1](memory, query, vector, per_rep)
        ]
        scores = self.rescore(query.text, pool)
        best: dict[int, tuple[float, str, int]] = {}
        for (rep, row, _), score in zip(pool, scores):
            chunk = int(catalog.clip[row]) if catalog.clip[row] >= 0 else -int(catalog.ids[row])
            if chunk not in best or score > best[chunk][0]:
                best[chunk] = (score, rep, row)
        ranked = sorted(best.values(), key=lambda b: (-b[0], b[2]))[: query.k]
        out = []
        for rank, (score, rep, row) in enumerate(ranked, start=1):
            ev = catalog.evidence(row, score, self.name, ranks={"carve": rank}, scores={rep: score})
            ev.view = rep
            out.append(ev)
        return out
