"""What every strategy shares: the query, the memory it searches, and the registry that names them.

A strategy is a class with a `name` and `retrieve(query) -> list[Evidence]` (best first), constructed
with a `Memory`: the store, its vector indices, the text embedder and, for the strategies that reason
while retrieving, the LLM. `retrieval.registry.make_strategy("hybrid", memory)` gives one by name.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from egodesk.core.settings import Settings
from egodesk.core.types import Evidence
from egodesk.memory.indices import IndexManager
from egodesk.memory.store import Store
from egodesk.perception.embedder import TextEmbedder
from egodesk.perception.llm_base import LLM
from egodesk.retrieval.catalog import Catalog, CatalogCache
from egodesk.retrieval.lexical import LexicalCache, LexicalIndex
from egodesk.retrieval.question import QuestionAnalysis, analyze
from egodesk.retrieval.timewindow import TimeWindow

_EMBED_CACHE = 256
BROAD_FILTER = 20_000  # allowed units above which a dense search filters after the fact
OVERSAMPLE = 4


@dataclass
class Query:
    """A question to retrieve for. `cutoff`: memory starting at or after it is not used (the online
    setting); `sources`: footage titles or ids to search (None = the whole library); `days`: the
    library's days of footage (`Memory.days`), against which "day 2" or a bare clock time resolve."""

    question: str
    options: list[str] | None = None
    asked_at: float | None = None
    sources: Sequence[str | int] | None = None
    k: int = 12
    cutoff: float | None = None
    days: Sequence[tuple[float, float]] = ()
    windowed: bool = True  # False: ignore the time window the question names (the plain floors do)
    _analysis: QuestionAnalysis | None = field(default=None, repr=False, compare=False)

    @property
    def text(self) -> str:
        """The retrieval query: the question and all its options (parent-retrieval paper)."""
        return " ".join([self.question, *(self.options or [])])

    @property
    def analysis(self) -> QuestionAnalysis:
        if self._analysis is None:
            self._analysis = analyze(self.question, self.asked_at, self.days)
        return self._analysis

    @property
    def window(self) -> TimeWindow | None:
        """The time window the question names: every strategy searches only inside it."""
        return self.analysis.window if self.windowed else None


class Memory:
    """The searchable memory of one library, with the caches that keep a question under ~50 ms."""

    def __init__(
        self,
        store: Store,
        index_manager: IndexManager,
        embedder: TextEmbedder,
        llm: LLM | None = None,
        settings: Settings | None = None,
    ):
        self.store = store
        self.indices = index_manager
        self.embedder = embedder
        self.llm = llm
        self.settings = settings or Settings()
        self._catalogs = CatalogCache(store)
        self._lexical = LexicalCache(index_manager.lexical_dir)
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._objects: dict[str, tuple] = {}

    def catalog(self) -> Catalog:
        return self._catalogs.get()

    def units_changed(self) -> None:
        """This process changed the units: the next question reads the snapshot again if it moved."""
        self._catalogs.stale()

    def lexical(self, kinds: Sequence[str], views: Sequence[str] | None = None) -> LexicalIndex:
        return self._lexical.get(self.catalog(), kinds, views)

    def embed(self, text: str) -> np.ndarray:
        vector = self._vectors.get(text)
        if vector is None:
            vector = self._vectors[text] = self.embedder.embed_queries([text])[0]
            if len(self._vectors) > _EMBED_CACHE:
                self._vectors.popitem(last=False)
        return vector

    def cached(self, key: str, build):
        """A per-memory object built once per catalog snapshot (e.g. a label index)."""
        stamp = self.catalog().stamp
        hit = self._objects.get(key)
        if hit is None or hit[0] != stamp:
            hit = self._objects[key] = (stamp, build())
        return hit[1]

    def days(self) -> list[tuple[float, float]]:
        """(first start, last end) of the units of each calendar day, in time order."""
        return self.cached("days", lambda: _days(self.catalog()))

    def has(self, space: str) -> bool:
        return self.indices.has_vectors(space)

    def dense(self, space: str, vector: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top-k (catalog row, cosine) of a vector space, restricted to a catalog row mask."""
        catalog = self.catalog()
        if allowed is not None and not allowed.any():
            return []
        if allowed is None or allowed.all():
            return self._rows(catalog, self.indices.search(space, vector, k)[0], None)
        if int(allowed.sum()) > BROAD_FILTER:
            # A broad filter (most of a big library): an unfiltered graph search, oversampled and
            # filtered here, beats handing 50k ids to a filtered walk that calls back per node.
            hits = self.indices.search(space, vector, OVERSAMPLE * k)[0]
            kept = self._rows(catalog, hits, allowed)
            if len(kept) >= k or len(hits) < OVERSAMPLE * k:
                return kept[:k]
        return self._rows(catalog, self.indices.search(space, vector, k, allowed_ids=catalog.ids[allowed].tolist())[0], allowed)

    @staticmethod
    def _rows(catalog: Catalog, hits, allowed: np.ndarray | None) -> list[tuple[int, float]]:
        rows = catalog.rows(uid for uid, _ in hits)
        found = {int(catalog.ids[r]): int(r) for r in rows}
        return [(found[uid], cos) for uid, cos in hits if uid in found and (allowed is None or allowed[found[uid]])]

    def scope(
        self, query: Query, kinds: Sequence[str] | None = None, views: Sequence[str] | None = None, before: float | None = None
    ) -> np.ndarray:
        """The rows a query may use: its sources, its cutoff (or `before`), the time window it names,
        the given kinds/views."""
        catalog = self.catalog()
        cutoff = before if before is not None else query.cutoff
        keep = catalog.mask(kinds=kinds, views=views, footage=catalog.footage_ids(query.sources), before=cutoff)
        window = query.window
        if window is not None:
            keep &= (catalog.start < window.end) & (catalog.end >= window.start)
        return keep


def _days(catalog: Catalog) -> list[tuple[float, float]]:
    if not len(catalog):
        return []
    day = np.floor(catalog.start / 86400.0)
    out = []
    for value in np.unique(day):
        same = day == value
        out.append((float(catalog.start[same].min()), float(catalog.end[same].max())))
    return out


class Strategy:
    """Base class: subclasses set `name`, `spaces` (vector spaces they need) and implement retrieve."""

    name = ""
    spaces: tuple[str, ...] = ()
    needs_llm = False

    def __init__(self, memory: Memory):
        self.memory = memory

    def missing_spaces(self) -> list[str]:
        """The vector spaces it searches that the library has not built."""
        return [space for space in self.spaces if not self.memory.has(space)]

    def available(self) -> bool:
        return not self.missing_spaces() and (not self.needs_llm or self.memory.llm is not None)

    def retrieve(self, query: Query) -> list[Evidence]:
        raise NotImplementedError
