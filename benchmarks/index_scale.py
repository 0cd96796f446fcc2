"""Vector index at library scale: synthetic 384-d units in a scratch library.

Reports build seconds per 10k units (incremental adds of 10k, vectors into SQLite and the index),
save / load / rebuild seconds, and per-query latency (p50, p95) of plain, small-filter (exact) and
large-filter (graph walk) searches, with recall against exact search. `--quick` uses 20k units
instead of 100k.

    .venv/bin/python benchmarks/index_scale.py [--quick] [--units N] [--queries 200] [--json FILE]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from common import Report, add_output_args, p50_p95, timed_ms
from synthetic import DIM, clustered, plain_units

from egodesk.memory.indices import IndexManager
from egodesk.memory.store import Store

BATCH = 10_000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=0, help="default 100k (quick: 20k)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=36)
    add_output_args(parser)
    args = parser.parse_args(argv)
    n = args.units or (20_000 if args.quick else 100_000)
    k = min(args.k, n)
    rng = np.random.default_rng(0)
    data = clustered(n, rng)
    queries = data[rng.integers(0, n, args.queries)] + 0.3 * rng.normal(size=(args.queries, DIM)).astype(np.float32)
    report = Report("index-scale")

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "library.sqlite")
        ids = plain_units(store, n)
        manager = IndexManager(store, Path(tmp) / "indices")
        start = time.perf_counter()
        for first in range(0, n, BATCH):
            manager.add("subchunk", ids[first : first + BATCH], data[first : first + BATCH], "bench")
        build = time.perf_counter() - start
        start = time.perf_counter()
        manager.save()
        save = time.perf_counter() - start

        start = time.perf_counter()
        loaded = IndexManager(store, Path(tmp) / "indices")
        loaded.count("subchunk")
        load = time.perf_counter() - start

        p50, p95 = p50_p95(timed_ms(lambda q: loaded.search("subchunk", q, k), queries))
        few = max(1, min(len(queries), 50))
        small = rng.choice(ids, max(1, min(2_000, n // 20)), replace=False)  # under EXACT_SHARE: scored exactly
        s50, s95 = p50_p95(timed_ms(lambda q: loaded.search("subchunk", q, k, allowed_ids=small), queries[:few]))
        large = ids[: n // 2]
        l50, l95 = p50_p95(timed_ms(lambda q: loaded.search("subchunk", q, k, allowed_ids=large), queries[:few]))

        unit = lambda m: m / np.linalg.norm(m, axis=1, keepdims=True)  # noqa: E731
        truth = np.argsort(-(unit(queries) @ unit(data).T), axis=1)[:, :k] + ids[0]
        got = [[u for u, _ in row] for row in loaded.search("subchunk", queries, k)]
        recall = np.mean([len(set(g) & set(t.tolist())) / k for g, t in zip(got, truth)])

        start = time.perf_counter()
        loaded.rebuild("subchunk")
        rebuild = time.perf_counter() - start
        size = loaded.file_bytes("subchunk")
        store.close()

    print(f"units {n:,} x {DIM}-d, k={k}, {args.queries} queries")
    report.add("build (SQLite + index, incremental)", build / n * 10_000, "s per 10k units", note=f"{n:,} units")
    report.add("save", save, "s")
    report.add("load + verify", load, "s")
    report.add("rebuild from SQLite", rebuild, "s")
    report.add("index file", size / 1e6, "MB")
    report.add("search p50", p50, "ms")
    report.add("search p95", p95, "ms")
    report.add(f"recall@{k}", recall, "share")
    report.add(f"filtered {len(small):,} allowed (exact) p50", s50, "ms")
    report.add(f"filtered {len(small):,} allowed (exact) p95", s95, "ms")
    report.add(f"filtered {len(large):,} allowed (graph) p50", l50, "ms")
    report.add(f"filtered {len(large):,} allowed (graph) p95", l95, "ms")
    report.finish(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
