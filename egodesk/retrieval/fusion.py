"""Combining rankings: reciprocal rank fusion and parent expansion (parent-retrieval paper)."""

from __future__ import annotations

from collections.abc import Sequence

from egodesk.retrieval.catalog import Catalog

Ranking = list[tuple[int, float]]  # (catalog row, score), best first

RRF_K0 = 60


def rrf(rankings: Sequence[Ranking], k0: int = RRF_K0, weights: Sequence[float] | None = None) -> Ranking:
    """Reciprocal rank fusion: score(d) = sum_i w_i / (k0 + rank_i(d)), ranks from 1."""
    weights = weights or [1.0] * len(rankings)
    fused: dict[int, float] = {}
    for ranking, weight in zip(rankings, weights):
        for rank, (row, _) in enumerate(ranking, start=1):
            fused[row] = fused.get(row, 0.0) + weight / (k0 + rank)
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))


def to_parents(catalog: Catalog, ranking: Ranking, k: int) -> list[tuple[int, float, list[int]]]:
    """Map ranked children to their parents, keeping each parent's first (best) position:
    up to k (parent row, best child score, child rows) triples."""
    out: dict[int, tuple[float, list[int]]] = {}
    for row, score in ranking:
        parent = catalog.parent_row(row)
        if parent in out:
            out[parent][1].append(row)
        elif len(out) < k:
            out[parent] = (score, [row])
    return [(parent, score, children) for parent, (score, children) in out.items()]


def rank_map(ranking: Ranking) -> dict[int, int]:
    """row -> 1-based rank."""
    return {row: rank for rank, (row, _) in enumerate(ranking, start=1)}
