"""The reference floors, measured the plain way, and any eval reports scored the same two ways.

    .venv/bin/python benchmarks/retrieval_floors.py BENCH_DIR [--limit N] [--embedder ROLE] [REPORT.json ...]

Floors: every raw memory entry is one unit; query = question + options; only the question's sources
and entries that start before asked_at. dense = the text embedder's cosine (`--embedder`: the default
nomic-embed-text-v1.5, or `embedder` for all-MiniLM-L6-v2; the library's flat index holds exactly the
raw entries' vectors), bm25 = plain bm25s (English stop words, no stemming), hybrid
= their reciprocal rank fusion (k0=60) over the top 36 of each. Hit@K is given twice: strict
(shared time, egodesk's metric) and touching (intervals meeting at an end also count), because the
reference numbers for these benchmarks read overlap the second way.
"""

from __future__ import annotations

import argparse
import json

import bm25s
import numpy as np
from common import add_embedder_args

from egodesk.core.settings import Settings
from egodesk.eval.benchmark import load_benchmark
from egodesk.eval.metrics import hit_at_k, recall_at_k
from egodesk.eval.runner import open_library
from egodesk.perception.embedder import make_embedder
from egodesk.retrieval.base import Memory, Query
from egodesk.retrieval.fusion import rrf
from egodesk.retrieval.registry import make_strategy

POOL = 36


def _scores(name: str, ranked: list[list[tuple[str, float, float]]], evidence: list) -> dict[str, float]:
    out = {}
    for touching, tag in ((False, ""), (True, "~")):
        for k in (1, 5, 12):
            out[f"hit@{k}{tag}"] = float(np.mean([hit_at_k(r, e, k, touching) for r, e in zip(ranked, evidence)]))
    out["recall@12"] = float(np.mean([recall_at_k(r, e, 12) for r, e in zip(ranked, evidence)]))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmark")
    parser.add_argument("reports", nargs="*")
    parser.add_argument("--limit", type=int)
    add_embedder_args(parser)
    args = parser.parse_intermixed_args(argv)
    bench = load_benchmark(args.benchmark, args.limit)
    embedder = make_embedder(threads=args.threads, model=args.embedder)
    store, indices = open_library(bench, embedder, Settings())
    memory = Memory(store, indices, embedder)
    flat = make_strategy("flat", memory)
    entries = bench.entries
    tokens = bm25s.tokenize([e.text for e in entries], stopwords="en", show_progress=False)
    bm25 = bm25s.BM25()
    bm25.index(tokens, show_progress=False)
    sources = np.array([e.source for e in entries])
    starts = np.array([e.start for e in entries])
    questions = [q for q in bench.questions if q.evidence]
    evidence = [[(w.source, w.start, w.end) for w in q.evidence] for q in questions]
    runs: dict[str, list] = {"dense": [], "bm25": [], "hybrid": []}
    for q in questions:
        text = " ".join([q.question, *(q.options or [])])
        plain = Query(q.question, q.options, q.asked_at, q.sources, POOL, q.asked_at, windowed=False)
        dense = [(ev.source, ev.start, ev.end) for ev in flat.retrieve(plain)]
        words = [
            w for w in bm25s.tokenize([text], stopwords="en", show_progress=False, return_ids=False)[0] if w in bm25.vocab_dict
        ]
        scores = bm25.get_scores(words) if words else np.zeros(len(entries))
        allowed = (
            np.isin(sources, q.sources or sources) & (starts < (q.asked_at if q.asked_at is not None else np.inf)) & (scores > 0)
        )
        top = np.flatnonzero(allowed)[np.argsort(-scores[allowed], kind="stable")][:POOL]
        lexical = [(entries[i].source, entries[i].start, entries[i].end) for i in top]
        runs["dense"].append(dense)
        runs["bm25"].append(lexical)
        keys = {span: i for i, span in enumerate(dict.fromkeys(dense + lexical))}
        fused = rrf([[(keys[s], 0.0) for s in dense], [(keys[s], 0.0) for s in lexical]])
        spans = list(keys)
        runs["hybrid"].append([spans[i] for i, _ in fused])
    print(f"{bench.name}: {len(questions)} questions with evidence (of {len(bench.questions)}); embedder {embedder.model_id}")
    categories = [q.category or "-" for q in questions]
    for name, ranked in runs.items():
        _print(f"floor {name}", ranked, evidence, categories)
    by_id = {q.id: (e, c) for q, e, c in zip(questions, evidence, categories)}
    for path in args.reports:
        data = json.load(open(path, encoding="utf-8"))
        rows = [(r["detail"]["retrieved"], *by_id[r["id"]]) for r in data["questions"] if r["id"] in by_id]
        ranked = [[(x["source"], x["start"], x["end"]) for x in ret] for ret, _, _ in rows]
        _print(data["strategy"], ranked, [e for _, e, _ in rows], [c for _, _, c in rows])
    store.close()
    return 0


def _print(name: str, ranked: list, evidence: list, categories: list[str]) -> None:
    """One line of scores over all questions, then one per category (a floor must hold in each)."""
    print(f"{name:<14} {'all':<12}", json.dumps({k: round(v, 3) for k, v in _scores(name, ranked, evidence).items()}))
    for category in sorted(set(categories)):
        picked = [i for i, c in enumerate(categories) if c == category]
        scores = _scores(name, [ranked[i] for i in picked], [evidence[i] for i in picked])
        print(
            f"{'':<14} {category[:12]:<12}",
            json.dumps({k: round(scores[k], 3) for k in ("hit@1", "hit@5", "hit@5~")}),
            f"n={len(picked)}",
        )


if __name__ == "__main__":
    raise SystemExit(main())
