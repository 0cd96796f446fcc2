"""Lexical search: BM25 (bm25s, Lucene variant) over the text of a family of units.

One index per unit family ("subchunk", the parents, an atomic view...), built from the catalog
snapshot on first use and kept until the snapshot changes. Words are lower-cased, English stop words
dropped and reduced by the same light lemmatiser the question analysis uses, so "took" in a question
meets "take" in a narration. A question's word that no unit holds also searches the words that sound or
are spelled alike (`core.soundalike`), and every question word the words of its kind the tagger uses
(`perception.label_kinds`: 'moped' for "motorbike"), at half weight: the recogniser wrote "pointment"
for "appointment" and "Decklan" for "Declan".

Building costs about 1.5 s of CPU per 50k units, which a library's first question would pay on every
start, so each index is also saved in the library's index folder under its family and snapshot and
loaded from there (milliseconds) until the units change. Like the hnswlib files these are caches:
a missing or unreadable one is built again.
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np

from egodesk.core.soundalike import alike
from egodesk.core.words import lemma
from egodesk.perception.label_kinds import same_kind
from egodesk.retrieval.catalog import Catalog

log = logging.getLogger(__name__)

ALIKE_WEIGHT = 0.5  # a word heard alike is weaker evidence than the word itself


def _stem(words: list[str]) -> list[str]:
    return [lemma(w) for w in words]


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    return bm25s.tokenize(list(texts), stopwords="english", stemmer=_stem, show_progress=False, return_ids=False)


def _save(index: bm25s.BM25, folder: Path) -> None:
    """Whole or not at all: written beside, then renamed; a failure only costs the next start a build."""
    partial = folder.with_name(folder.name + ".partial")
    try:
        shutil.rmtree(partial, ignore_errors=True)
        index.save(partial, show_progress=False)
        partial.rename(folder)
    except OSError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        log.info("the lexical index %s was not saved: %s", folder.name, exc)


class LexicalIndex:
    """BM25 over the catalog rows `rows` (positions into the catalog)."""

    def __init__(self, catalog: Catalog, rows: np.ndarray, saved: Path | None = None):
        self.rows = rows
        self._bm25: bm25s.BM25 | None = None
        self._alike_cache: dict[str, list[str]] = {}
        if not len(rows):
            return
        if saved is not None and saved.is_dir():
            try:
                self._bm25 = bm25s.BM25.load(saved, mmap=False, show_progress=False)
            except (OSError, ValueError, KeyError) as exc:
                log.info("rebuilding the lexical index %s: %s", saved.name, exc)
        if self._bm25 is None:
            tokens = bm25s.tokenize([catalog.text[i] for i in rows], stopwords="english", stemmer=_stem, show_progress=False)
            built = bm25s.BM25()
            built.index(tokens, show_progress=False)
            self._bm25 = built
            if saved is not None:
                _save(built, saved)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every row of this index for `query` (zeros when nothing matches); a query word
        the index lacks scores through the indexed words alike it, and every query word through the
        indexed words of its kind, at ALIKE_WEIGHT."""
        if self._bm25 is None:
            return np.zeros(0, dtype=np.float32)
        vocab = self._bm25.vocab_dict
        asked = tokenize([query])[0]
        words = [w for w in asked if w in vocab]
        similar = [v for w in dict.fromkeys(asked) for v in self._alike(w, vocab)]
        scores = np.zeros(len(self.rows), dtype=np.float32)
        if words:
            scores += np.asarray(self._bm25.get_scores(words), dtype=np.float32)
        if similar:
            scores += ALIKE_WEIGHT * np.asarray(self._bm25.get_scores(similar), dtype=np.float32)
        return scores

    def _alike(self, word: str, vocab: dict[str, int]) -> list[str]:
        """The indexed words (`vocab`) of `word`'s kind, and when the index lacks `word` itself those
        heard alike (kept per word: a library's questions repeat their words)."""
        if word not in self._alike_cache:
            kind = [m for m in same_kind(word) if m != word and m in vocab]
            heard = [] if word in vocab else [v for v in vocab if alike(word, v) and v not in kind]
            self._alike_cache[word] = kind + heard
        return self._alike_cache[word]

    def search(
        self, query: str, k: int, allowed: np.ndarray | None = None, tiebreak: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
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
    """The lexical index of each unit family, rebuilt when the catalog snapshot changes; saved in
    `folder` (when given) so that another process or a restart loads it instead."""

    def __init__(self, folder: Path | None = None):
        self.folder = folder
        self._indices: dict[tuple, LexicalIndex] = {}
        self._lock = threading.Lock()

    def _saved(self, kinds: Sequence[str], views: Sequence[str] | None, stamp: tuple[int, int]) -> Path | None:
        """This family's folder for this snapshot; older snapshots of the family are deleted."""
        if self.folder is None:
            return None
        family = f"{'+'.join(kinds)}.{'+'.join(views or ('all',))}"
        current = self.folder / f"{family}.{stamp[0]}-{stamp[1]}"
        if self.folder.is_dir():
            for old in self.folder.glob(f"{family}.*"):
                if old != current:
                    shutil.rmtree(old, ignore_errors=True)
        else:
            self.folder.mkdir(parents=True, exist_ok=True)
        return current

    def get(self, catalog: Catalog, kinds: Sequence[str], views: Sequence[str] | None = None) -> LexicalIndex:
        key = (tuple(kinds), tuple(views or ()), catalog.stamp)
        with self._lock:
            index = self._indices.get(key)
            if index is None:
                self._indices = {k: v for k, v in self._indices.items() if k[2] == catalog.stamp}
                index = self._indices[key] = LexicalIndex(
                    catalog, np.flatnonzero(catalog.mask(kinds=kinds, views=views)), self._saved(kinds, views, catalog.stamp)
                )
            return index
