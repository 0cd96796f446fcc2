"""Scores, as the parent-retrieval paper and the benchmark format define them.

Retrieved units and evidence are time intervals of a source. Two intervals overlap when they share a
stretch of time; a zero-length interval (an instantaneous narration) overlaps what contains it, ends
included, because otherwise a point could never be hit.

- Hit@K: one of the top-K units overlaps an evidence window of the same source.
- Recall@K: the share of the evidence's duration (union of windows) covered by the union of the top-K
  units; evidence made only of points counts the share of points covered.
- nDCG@K: graded relevance = the share of the evidence a unit newly covers (so a repeated moment earns
  nothing twice); the ideal ranking is the evidence windows themselves, largest first; capped at 1.
- Answers: accuracy (multiple choice), SQuAD token F1 (open), abstention precision/recall against
  `unanswerable`, grounded share, tokens, latency percentiles; all of it per category too.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

Span = tuple[str, float, float]  # (source, start, end)


def overlaps(a_start: float, a_end: float, b_start: float, b_end: float, touching: bool = False) -> bool:
    """Shared time; `touching` also counts intervals that only meet at an end (a looser reading some
    reference numbers use: with back-to-back 20 s turns it credits the turn next to the evidence)."""
    lo, hi = max(a_start, b_start), min(a_end, b_end)
    return lo < hi or (lo == hi and (touching or a_start == a_end or b_start == b_end))


def _union(intervals: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[list[float]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def _covered(target: Sequence[tuple[float, float]], cover: Sequence[tuple[float, float]]) -> float:
    """Seconds of the (merged) target intervals covered by the (merged) cover intervals."""
    total = 0.0
    for ts, te in target:
        for cs, ce in cover:
            total += max(0.0, min(te, ce) - max(ts, cs))
    return total


def hit_at_k(retrieved: Sequence[Span], evidence: Sequence[Span], k: int, touching: bool = False) -> float:
    return float(
        any(src == e_src and overlaps(s, e, es, ee, touching) for src, s, e in retrieved[:k] for e_src, es, ee in evidence)
    )


def _evidence_parts(evidence: Sequence[Span]) -> tuple[dict[str, list[tuple[float, float]]], list[Span], float]:
    """Merged evidence stretches per source, the point windows, and the total evidence duration."""
    by_source: dict[str, list[tuple[float, float]]] = {}
    points = []
    for src, s, e in evidence:
        if e > s:
            by_source.setdefault(src, []).append((s, e))
        else:
            points.append((src, s, e))
    merged = {src: _union(spans) for src, spans in by_source.items()}
    return merged, points, sum(e - s for spans in merged.values() for s, e in spans)


def recall_at_k(retrieved: Sequence[Span], evidence: Sequence[Span], k: int) -> float:
    if not evidence:
        return 0.0
    merged, points, total = _evidence_parts(evidence)
    top = retrieved[:k]
    if total > 0:
        covered = sum(_covered(spans, _union((s, e) for r, s, e in top if r == src)) for src, spans in merged.items())
        return covered / total
    return sum(hit_at_k(top, [p], k) for p in points) / len(points)


def _gains(retrieved: Sequence[Span], evidence: Sequence[Span]) -> list[float]:
    """Per rank, the share of the evidence newly covered (points: share of points newly hit)."""
    merged, points, total = _evidence_parts(evidence)
    gains, seen_cover, hit_points = [], {}, set()
    for src, s, e in retrieved:
        if total > 0:
            spans = merged.get(src, [])
            before = _covered(spans, _union(seen_cover.get(src, [])))
            seen_cover.setdefault(src, []).append((s, e))
            gains.append((_covered(spans, _union(seen_cover[src])) - before) / total)
        else:
            new = {i for i, (p_src, ps, pe) in enumerate(points) if p_src == src and overlaps(s, e, ps, pe)} - hit_points
            hit_points |= new
            gains.append(len(new) / len(points))
    return gains


def ndcg_at_k(retrieved: Sequence[Span], evidence: Sequence[Span], k: int) -> float:
    if not evidence:
        return 0.0
    dcg = sum(g / math.log2(rank + 2) for rank, g in enumerate(_gains(retrieved[:k], evidence)))
    merged, points, total = _evidence_parts(evidence)
    if total > 0:
        ideal_gains = sorted(((e - s) / total for spans in merged.values() for s, e in spans), reverse=True)
    else:
        ideal_gains = [1 / len(points)] * len(points)
    idcg = sum(g / math.log2(rank + 2) for rank, g in enumerate(ideal_gains[:k]))
    return min(1.0, dcg / idcg) if idcg > 0 else 0.0


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCT)).split())


def token_f1(prediction: str, reference: str) -> float:
    pred, ref = normalize_answer(prediction).split(), normalize_answer(reference).split()
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else 0.0


@dataclass
class QuestionResult:
    """One question's scores. Answer fields stay None when no answer was asked for."""

    id: str
    category: str
    unanswerable: bool
    retrieval: dict[str, float] = field(default_factory=dict)  # "hit@5" -> 1.0, ...
    latency_ms: float = 0.0
    correct: bool | None = None  # multiple choice, or an unanswerable question answered by abstaining
    f1: float | None = None  # open questions with a reference answer
    abstained: bool | None = None
    grounded: bool | None = None
    tokens: int | None = None
    answer_ms: float | None = None
    detail: dict = field(default_factory=dict)


def retrieval_scores(retrieved: Sequence[Span], evidence: Sequence[Span], ks: Iterable[int]) -> dict[str, float]:
    out = {}
    for k in ks:
        out[f"hit@{k}"] = hit_at_k(retrieved, evidence, k)
        out[f"recall@{k}"] = recall_at_k(retrieved, evidence, k)
        out[f"ndcg@{k}"] = ndcg_at_k(retrieved, evidence, k)
    return out


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize(results: Sequence[QuestionResult]) -> dict[str, float | int | None]:
    """Aggregate scores. Retrieval scores average over the questions that have evidence windows."""
    out: dict[str, float | int | None] = {"questions": len(results)}
    scored = [r for r in results if r.retrieval]
    for name in sorted({n for r in scored for n in r.retrieval}, key=lambda n: (n.split("@")[0], int(n.split("@")[1]))):
        out[name] = _mean([r.retrieval[name] for r in scored if name in r.retrieval])
    out["retrieval_questions"] = len(scored)
    latencies = [r.latency_ms for r in results]
    out["latency_p50_ms"], out["latency_p95_ms"] = percentile(latencies, 50), percentile(latencies, 95)
    answered = [r for r in results if r.abstained is not None]
    if answered:
        out["accuracy"] = _mean([float(r.correct) for r in answered if r.correct is not None])
        out["f1"] = _mean([r.f1 for r in answered if r.f1 is not None])
        predicted = [r for r in answered if r.abstained]
        truly = [r for r in answered if r.unanswerable]
        both = [r for r in predicted if r.unanswerable]
        out["abstention_precision"] = len(both) / len(predicted) if predicted else None
        out["abstention_recall"] = len(both) / len(truly) if truly else None
        replied = [r for r in answered if not r.abstained]
        out["grounded"] = _mean([float(bool(r.grounded)) for r in replied])
        right = [r for r in replied if r.correct or (r.f1 or 0) >= 0.5]
        out["grounded_accuracy"] = _mean([float(bool(r.grounded)) for r in right])
        out["tokens"] = _mean([float(r.tokens or 0) for r in answered])
        answer_ms = [r.answer_ms for r in answered if r.answer_ms is not None]
        out["answer_p50_ms"], out["answer_p95_ms"] = percentile(answer_ms, 50), percentile(answer_ms, 95)
    return out


def by_category(results: Sequence[QuestionResult]) -> dict[str, dict]:
    groups: dict[str, list[QuestionResult]] = {}
    for r in results:
        groups.setdefault(r.category or "none", []).append(r)
    return {name: summarize(group) for name, group in sorted(groups.items())}
