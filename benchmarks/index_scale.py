"""Vector index at library scale: synthetic 384-d units in a scratch library.

Prints build seconds per 10k units (incremental adds of 10k, vectors into SQLite and the index),
save / load / rebuild seconds, and per-query latency (p50, p95) of plain, small-filter (exact) and
large-filter (graph walk) searches. `--quick` uses 20k units instead of 100k.

    .venv/bin/python benchmarks/index_scale.py [--quick] [--units N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from sqlalchemy import insert

from egodesk.memory.indices import IndexManager
from egodesk.memory.store import Footage, Store, Unit

DIM = 384
BATCH = 10_000


def make_units(store: Store, n: int) -> np.ndarray:
    with store.session() as s:
        footage = Footage(content_hash="b" * 64, path="/bench.mp4", title="bench", start_ts=0.0, duration=15.0 * n)
        s.add(footage)
        s.flush()
        s.execute(insert(Unit), [{"footage_id": footage.id, "kind": "subchunk", "start_ts": 15.0 * i,
                                  "end_ts": 15.0 * i + 15, "text": ""} for i in range(n)])
    return np.arange(1, n + 1, dtype=np.int64)


def clustered(n: int, rng: np.random.Generator) -> np.ndarray:
    """Vectors around 500 topics: closer to real text embeddings than uniform noise."""
    centres = rng.normal(size=(500, DIM)).astype(np.float32)
    return centres[rng.integers(0, 500, n)] + 0.6 * rng.normal(size=(n, DIM)).astype(np.float32)


def timed_queries(fn, queries: np.ndarray) -> tuple[float, float]:
    times = []
    for q in queries:
        start = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - start) * 1000)
    return float(np.percentile(times, 50)), float(np.percentile(times, 95))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20k units instead of 100k")
    parser.add_argument("--units", type=int, default=0)
    parser.add_argument("--k", type=int, default=36)
    args = parser.parse_args()
    n = args.units or (20_000 if args.quick else 100_000)
    rng = np.random.default_rng(0)
    data = clustered(n, rng)
    queries = data[rng.integers(0, n, 200)] + 0.3 * rng.normal(size=(200, DIM)).astype(np.float32)

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "library.sqlite")
        ids = make_units(store, n)
        manager = IndexManager(store, Path(tmp) / "indices")
        start = time.perf_counter()
        for first in range(0, n, BATCH):
            manager.add("subchunk", ids[first:first + BATCH], data[first:first + BATCH], "bench")
        build = time.perf_counter() - start
        start = time.perf_counter()
        manager.save()
        save = time.perf_counter() - start

        start = time.perf_counter()
        loaded = IndexManager(store, Path(tmp) / "indices")
        loaded.count("subchunk")
        load = time.perf_counter() - start

        k = args.k
        p50, p95 = timed_queries(lambda q: loaded.search("subchunk", q, k), queries)
        small = rng.choice(ids, 2_000, replace=False)
        s50, s95 = timed_queries(lambda q: loaded.search("subchunk", q, k, allowed_ids=small), queries[:50])
        large = ids[: n // 2]
        l50, l95 = timed_queries(lambda q: loaded.search("subchunk", q, k, allowed_ids=large), queries[:50])

        exact = (queries / np.linalg.norm(queries, axis=1, keepdims=True)) @ (data / np.linalg.norm(data, axis=1, keepdims=True)).T
        truth = np.argsort(-exact, axis=1)[:, :k] + 1
        got = [[u for u, _ in row] for row in loaded.search("subchunk", queries, k)]
        recall = np.mean([len(set(g) & set(t.tolist())) / k for g, t in zip(got, truth)])

        start = time.perf_counter()
        loaded.rebuild("subchunk")
        rebuild = time.perf_counter() - start
        size = loaded.file_bytes("subchunk")
        store.close()

    print(f"units {n:,} x {DIM}-d, k={k}")
    print(f"build: {build:.1f} s total, {build / n * 10_000:.2f} s per 10k units (SQLite + index, incremental)")
    print(f"save {save:.2f} s, load+verify {load:.2f} s, rebuild from SQLite {rebuild:.1f} s, file {size / 1e6:.0f} MB")
    print(f"search: p50 {p50:.2f} ms, p95 {p95:.2f} ms per query; recall@{k} {recall:.4f}")
    print(f"filtered 2k allowed (exact): p50 {s50:.2f} ms, p95 {s95:.2f} ms")
    print(f"filtered {len(large):,} allowed (graph): p50 {l50:.2f} ms, p95 {l95:.2f} ms")


if __name__ == "__main__":
    main()
