"""Retrieval latency over large synthetic libraries (no LLM): p50/p95 per strategy at each size.

    .venv/bin/python benchmarks/retrieval_latency.py [--sizes 10000,100000,1000000] [--queries 100]
        [--strategies flat,...] [--embedder ROLE] [--cache DIR] [--quick] [--json FILE]

Each size is a synthetic library laid out like a real one (see synthetic.py: 13 units per 15 s clip,
over 100 days), built once into the cache and reused (1M units: ~30 min to build, minutes to open).
The question is embedded by the real embedder (`--embedder`: the default nomic-embed-text-v1.5, ~50 ms
a question; `embedder`: MiniLM, ~10 ms), so that time is included; the library's vectors are synthetic,
of the embedder's dimension. Every strategy answers
the same questions (each text made unique, so each pays for its embedding), half over the whole
library, half restricted to one day with an online cutoff. Caches that live between questions in the
app (catalog, BM25 and label indices) are warmed by one question first; that cold start is reported.
`rerank` is left out: it is LLM-bound (one LLM call per candidate, seconds per question).
`--quick`: 10k and 100k units, 30 questions.
"""

from __future__ import annotations

import argparse
import time
from datetime import timedelta
from pathlib import Path

from common import IMPRINT_LATENCY_MS, Report, add_embedder_args, add_output_args, cache_dir, p50_p95, timed_ms
from synthetic import DAY0, LAYOUT_VERSION, asked_at, day_title, days_for, open_library

from egodesk.core.timeutil import to_ts
from egodesk.perception.embedder import make_embedder
from egodesk.retrieval.base import Memory, Query
from egodesk.retrieval.registry import make_strategy

STRATEGIES = "flat,subchunk,parent,parent-time,hybrid,context,records,timeaware,carve,auto"
QUESTIONS = [
    "When was the last time I took the keys?",
    "Where did I leave the blue umbrella?",
    "What did I do right after the first time I opened the fridge?",
    "What did Caroline say about the garden?",
    "What did I eat yesterday afternoon?",
    "How often do I drink coffee?",
    "Who did I meet at the market?",
    "What did I put in the pan before lunch?",
]


def label(units: int) -> str:
    return f"{units // 1_000_000}M" if units % 1_000_000 == 0 else f"{units // 1000}k" if units % 1000 == 0 else str(units)


def queries(n: int, salt: int, days: int) -> list[Query]:
    """n questions, every text unique (`salt` separates strategies), half scoped to one day."""
    out = []
    for i in range(n):
        day, scoped = i % days, i % 2 == 1
        cutoff = to_ts(DAY0 + timedelta(days=day, hours=3)) if scoped else asked_at(days)
        text = f"{QUESTIONS[i % len(QUESTIONS)]} #{salt * 10_000 + i}"
        out.append(Query(text, asked_at=cutoff, sources=[day_title(day)] if scoped else None, k=12, cutoff=cutoff))
    return out


def measure(report: Report, root: Path, units: int, strategies: list[str], count: int, embedder) -> None:
    size, days = label(units), days_for(units)
    store, indices, built = open_library(root, units, embedder.model_id, dim=embedder.dim)
    if built is not None:
        report.add(f"build synthetic library @ {size}", built, "s")
        report.add(f"build synthetic library @ {size}", built / units * 10_000, "s per 10k units", note="SQLite + indices")
    store.close()  # time the open as the app meets a library: from its files (indices load at first use)
    started = time.perf_counter()
    store, indices, _ = open_library(root, units, embedder.model_id, dim=embedder.dim)
    memory = Memory(store, indices, embedder)
    total = len(memory.catalog())
    report.add(f"open library + catalog @ {size}", time.perf_counter() - started, "s", note=f"{total:,} units")
    cold = 0.0
    for salt, name in enumerate(strategies):
        strategy = make_strategy(name, memory)
        if not strategy.available():
            print(f"{name}: not available in this library; skipped")
            continue
        start = time.perf_counter()
        strategy.retrieve(queries(1, 999, days)[0])  # warm the caches this strategy needs
        first = time.perf_counter() - start
        cold += first
        returned: list[int] = []

        def run(query, strategy=strategy, returned=returned) -> None:
            returned.append(len(strategy.retrieve(query)))

        p50, p95 = p50_p95(timed_ms(run, queries(count, salt, days)))
        paper = IMPRINT_LATENCY_MS if name == "records" else None
        report.add(f"{name} p50 @ {size}", p50, "ms", paper)
        report.add(f"{name} p95 @ {size}", p95, "ms", paper)
        print(
            f"{size} {name:<12} p50 {p50:7.1f} ms  p95 {p95:7.1f} ms  ({count} questions, {sum(returned) / count:.1f} units each; "
            f"first question {first:.1f} s)",
            flush=True,
        )
    report.add(f"cold start, first question of every strategy @ {size}", cold, "s")
    store.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", help="units per library, comma separated (default 10000,100000,1000000)")
    parser.add_argument("--queries", type=int, help="questions per strategy and size (default 100; quick 30)")
    parser.add_argument("--strategies", default=STRATEGIES)
    add_embedder_args(parser)
    parser.add_argument("--cache", type=Path, help="folder for the synthetic libraries (default: the user cache)")
    add_output_args(parser)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in (args.sizes or ("10000,100000" if args.quick else "10000,100000,1000000")).split(",")]
    count = args.queries or (30 if args.quick else 100)
    embedder = make_embedder(threads=args.threads, model=args.embedder)
    report = Report("retrieval-latency")
    for units in sizes:
        key = {"layout": LAYOUT_VERSION, "units": units, "model": embedder.model_id}
        root = args.cache / f"synthetic-{units}-{embedder.model_id}" if args.cache else cache_dir("synthetic-library", **key)
        measure(report, root, units, args.strategies.split(","), count, embedder)
    report.finish(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
