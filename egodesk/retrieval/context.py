"""`context`: dense + BM25 over the parents, each unit's score lifted by its neighbours' scores.

A clip description or a conversation turn is rarely self-contained: "Yeah, I painted that last
year!" answers the turn before it, a photo is shared in one turn and named in the next. EgoCITE builds
self-contained units with an LLM at ingest; this is the cheap question-time counterpart: a unit whose
neighbours in time (same footage, up to two each side) also match the question gets a share of their
score, so the moment a topic is discussed outranks an isolated word match.

score(u) = base(u) + alpha * sum over neighbours n at distance d of base(n) / d,
base(u)  = cos(question, u) + w_lex * bm25(u) / max bm25 in scope.
Scored exactly over a candidate set (dense and BM25 top-N plus their neighbours), so the cost does
not grow with the library.
"""

from __future__ import annotations

import threading

import numpy as np

from egodesk.core.types import Evidence
from egodesk.retrieval.base import Memory, Query, Strategy
from egodesk.retrieval.catalog import PARENT_KINDS, Catalog

CANDIDATES = 48
ALPHA = 0.3
LEXICAL_WEIGHT = 0.5
REACH = 2  # neighbours each side


class Neighbours:
    """prev/next row of every unit of some kinds, in time order within its footage (-1: none)."""

    def __init__(self, catalog: Catalog, kinds: tuple[str, ...]):
        rows = np.flatnonzero(catalog.mask(kinds=kinds))
        order = rows[np.lexsort((catalog.ids[rows], catalog.start[rows], catalog.footage[rows]))]
        self.prev = np.full(len(catalog), -1, dtype=np.int64)
        self.next = np.full(len(catalog), -1, dtype=np.int64)
        same = catalog.footage[order[:-1]] == catalog.footage[order[1:]]
        self.next[order[:-1][same]] = order[1:][same]
        self.prev[order[1:][same]] = order[:-1][same]

    def around(self, row: int, reach: int) -> list[tuple[int, int]]:
        """(neighbour row, distance) up to `reach` steps each side."""
        out = []
        for links in (self.prev, self.next):
            current = row
            for distance in range(1, reach + 1):
                current = int(links[current])
                if current < 0:
                    break
                out.append((current, distance))
        return out


_NEIGHBOURS: dict[tuple, Neighbours] = {}
_LOCK = threading.Lock()


def neighbours(catalog: Catalog, kinds: tuple[str, ...]) -> Neighbours:
    key = (kinds, catalog.stamp)
    with _LOCK:
        if key not in _NEIGHBOURS:
            for old in [k for k in _NEIGHBOURS if k[1] != catalog.stamp]:
                del _NEIGHBOURS[old]
            _NEIGHBOURS[key] = Neighbours(catalog, kinds)
        return _NEIGHBOURS[key]


def context_ranking(
    memory: Memory, query: Query, kinds: tuple[str, ...] = PARENT_KINDS, text: str | None = None, scope: np.ndarray | None = None
) -> list[tuple[int, float]]:
    """(row, smoothed score) of the candidates, best first."""
    catalog = memory.catalog()
    text = text or query.text
    scope = memory.scope(query, kinds) if scope is None else scope
    if not scope.any():
        return []
    spaces = [k for k in kinds if memory.has(k)]
    vector = memory.embed(text)
    lexical = memory.lexical(kinds)
    lex = np.zeros(len(catalog), dtype=np.float32)
    lex[lexical.rows] = lexical.scores(text) if len(lexical.rows) else 0.0
    lex = np.where(scope, lex, 0.0)
    top_lex = float(lex.max()) or 1.0
    candidates = {r for space in spaces for r, _ in memory.dense(space, vector, CANDIDATES, scope)}
    candidates |= {r for r, _ in lexical.search(text, CANDIDATES, scope)}
    links = neighbours(catalog, tuple(kinds))
    around = {r: [(n, d) for n, d in links.around(r, REACH) if scope[n]] for r in candidates}
    needed = candidates | {n for near in around.values() for n, _ in near}
    allowed = np.zeros(len(catalog), dtype=bool)
    allowed[list(needed)] = True
    cos = np.zeros(len(catalog))
    for space in spaces:
        for r, c in memory.dense(space, vector, len(needed), allowed):
            cos[r] = c
    base = cos + LEXICAL_WEIGHT * lex / top_lex
    scored = [(r, float(base[r] + ALPHA * sum(base[n] / d for n, d in around[r]))) for r in candidates]
    return sorted(scored, key=lambda x: (-x[1], x[0]))


class Context(Strategy):
    name = "context"

    def available(self) -> bool:
        return any(self.memory.has(k) for k in PARENT_KINDS)

    def retrieve(self, query: Query) -> list[Evidence]:
        catalog = self.memory.catalog()
        return [
            catalog.evidence(row, score, self.name, ranks={"context": i})
            for i, (row, score) in enumerate(context_ranking(self.memory, query)[: query.k], start=1)
        ]
