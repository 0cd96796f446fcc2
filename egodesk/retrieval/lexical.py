"""Lexical search: BM25 (bm25s, Lucene variant) over the text of a family of units.

One index per unit family ("subchunk", the parents, an atomic view...), built from the catalog
snapshot on first use and kept until the snapshot changes (100k short units index in ~2 s). Words
are lower-cased, English stop words dropped and reduced by the same light lemmatiser the question
analysis uses, so "took" in a question meets "take" in a narration.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import bm25s
import numpy as np

from egodesk.retrieval.catalog import Catalog
from egodesk.retrieval.question import lemma


def _stem(words: list[str]) -> list[str]:
    return [lemma(w) for w in words]


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    return bm25s.tokenize(list(texts), stopwords="english", stemmer=_stem, show_progress=False, return_ids=False)


class LexicalIndex:
    """BM25 over the catalog rows `rows` (positions into the catalog)."""

    def __init__(self, catalog: Catalog, rows: np.ndarray):
        self.rows = rows
        self._bm25: bm25s.BM25 | None = None
        texts = [catalog.text[i] for i in rows]
        if texts:
            tokens = bm25s.tokenize(texts, stopwords="english", stemmer=_stem, show_progress=False)
            self._bm25 = bm25s.BM25()
            self._bm25.index(tokens, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every row of this index for `query` (zeros when nothing matches)."""
        if self._bm25 is None:
            return np.zeros(0, dtype=np.float32)
        vocab = self._bm25.vocab_dict
        words = [w for w in tokenize([query])[0] if w in vocab]
        if not words:
            return np.zeros(len(self.rows), dtype=np.float32)
        return np.asarray(self._bm25.get_scores(words), dtype=np.float32)

    def search(self, query: str, k: int, allowed: np.ndarray | None = None, tiebreak: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top-k (catalog row, score) with a positive score; `allowed` is a catalog-wide row mask;
        equal scores are ordered by `tiebreak` (catalog-wide, smaller first), else by row."""
        scores = self.scores(query)
        if not len(scores):
            return []
        if allowed is not None:
            scores = np.where(allowed[self.rows], scores, 0.0)
        positive = np.flatnonzero(scores > 0)
        if not len(positive):
            return []
        if tiebreak is None:
            k = min(k, len(positive))
            top = positive[np.argpartition(-scores[positive], k - 1)[:k]]
            top = top[np.lexsort((self.rows[top], -scores[top]))]
        else:
            top = positive[np.lexsort((self.rows[positive], tiebreak[self.rows[positive]], -scores[positive]))][:k]
        return [(int(self.rows[i]), float(scores[i])) for i in top]


class LexicalCache:
    """The lexical index of each unit family, rebuilt when the catalog snapshot changes."""

    def __init__(self):
        self._indices: dict[tuple, LexicalIndex] = {}
        self._lock = threading.Lock()

    def get(self, catalog: Catalog, kinds: Sequence[str], views: Sequence[str] | None = None) -> LexicalIndex:
        key = (tuple(kinds), tuple(views or ()), catalog.stamp)
        with self._lock:
            index = self._indices.get(key)
            if index is None:
                self._indices = {k: v for k, v in self._indices.items() if k[2] == catalog.stamp}
                index = self._indices[key] = LexicalIndex(catalog, np.flatnonzero(catalog.mask(kinds=kinds, views=views)))
            return index
