"""The parent-retrieval paper's strategies: Flat, Subchunk, Parent, Hybrid and Parent-Time.

Flat searches whole captions/transcript groups; Subchunk searches the fine-grained children and hands
them on as they are; Parent searches children (3K of them: 36 for K=12) and hands on up to K unique
parents; Hybrid fuses dense and BM25 rankings of the children by reciprocal rank (k0=60) before the
same parent expansion; Parent-Time is Parent restricted to memory from before the question.
"""

from __future__ import annotations

from egodesk.core.types import Evidence
from egodesk.retrieval.base import Memory, Query, Strategy
from egodesk.retrieval.catalog import PARENT_KINDS
from egodesk.retrieval.fusion import Ranking, rank_map, rrf, to_parents

CHILD_SPACE = "subchunk"
CHILD_KIND = "subchunk"
PARENT_SPACES = PARENT_KINDS  # the spaces are named after the kinds they hold
POOL_FACTOR = 3  # children retrieved per parent handed on (36 for K=12)


def dense_children(memory: Memory, query: Query, count: int, before: float | None = None) -> Ranking:
    return memory.dense(CHILD_SPACE, memory.embed(query.text), count, memory.scope(query, [CHILD_KIND], before=before))


def lexical_children(memory: Memory, query: Query, count: int, before: float | None = None) -> Ranking:
    return memory.lexical([CHILD_KIND]).search(query.text, count, memory.scope(query, [CHILD_KIND], before=before))


def fused_children(memory: Memory, query: Query) -> tuple[Ranking, dict[str, Ranking]]:
    """Hybrid's candidate pool: the dense and BM25 rankings of 3K children fused by reciprocal rank,
    with the two rankings it came from."""
    pool = POOL_FACTOR * query.k
    dense = dense_children(memory, query, pool)
    lexical = lexical_children(memory, query, pool)
    return rrf([dense, lexical], k0=memory.settings.rrf_k0), {"dense": dense, "bm25": lexical}


def parents_evidence(memory: Memory, ranking: Ranking, k: int, strategy: str, signals: dict[str, Ranking]) -> list[Evidence]:
    """Expand a ranking of children to up to k parents, recording each signal's best child rank."""
    catalog = memory.catalog()
    ranks = {name: rank_map(r) for name, r in signals.items()}
    scores = {name: dict(r) for name, r in signals.items()}
    out = []
    for parent, score, children in to_parents(catalog, ranking, k):
        ev = catalog.evidence(parent, score, strategy)
        for name in signals:
            found = [ranks[name][c] for c in children if c in ranks[name]]
            if found:
                ev.ranks[name] = min(found)
                ev.scores[name] = max(scores[name][c] for c in children if c in scores[name])
        out.append(ev)
    return out


class Flat(Strategy):
    name = "flat"
    spaces = ()

    def available(self) -> bool:
        return any(self.memory.has(s) for s in PARENT_SPACES)

    def retrieve(self, query: Query) -> list[Evidence]:
        memory, catalog = self.memory, self.memory.catalog()
        vector, allowed = memory.embed(query.text), memory.scope(query, PARENT_KINDS)
        hits: Ranking = []
        for space in PARENT_SPACES:
            if memory.has(space):
                hits += memory.dense(space, vector, query.k, allowed)
        hits.sort(key=lambda h: -h[1])
        return [
            catalog.evidence(row, cos, self.name, ranks={"dense": i}, scores={"dense": cos})
            for i, (row, cos) in enumerate(hits[: query.k], start=1)
        ]


class Subchunk(Strategy):
    name = "subchunk"
    spaces = (CHILD_SPACE,)

    def retrieve(self, query: Query) -> list[Evidence]:
        catalog = self.memory.catalog()
        hits = dense_children(self.memory, query, query.k)
        return [
            catalog.evidence(row, cos, self.name, ranks={"dense": i}, scores={"dense": cos})
            for i, (row, cos) in enumerate(hits, start=1)
        ]


class Parent(Strategy):
    name = "parent"
    spaces = (CHILD_SPACE,)

    def cutoff(self, query: Query) -> float | None:
        return None

    def retrieve(self, query: Query) -> list[Evidence]:
        dense = dense_children(self.memory, query, POOL_FACTOR * query.k, self.cutoff(query))
        return parents_evidence(self.memory, dense, query.k, self.name, {"dense": dense})


class ParentTime(Parent):
    """Parent, using only memory from before the question (the strictly online setting)."""

    name = "parent-time"

    def cutoff(self, query: Query) -> float | None:
        times = [t for t in (query.cutoff, query.asked_at) if t is not None]
        return min(times) if times else None


class Hybrid(Strategy):
    name = "hybrid"
    spaces = (CHILD_SPACE,)

    def retrieve(self, query: Query) -> list[Evidence]:
        fused, signals = fused_children(self.memory, query)
        return parents_evidence(self.memory, fused, query.k, self.name, signals)
