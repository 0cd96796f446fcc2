"""Retrieval latency over a large synthetic library (no LLM): p50/p95 per strategy.

    .venv/bin/python benchmarks/retrieval_latency.py [--units 100000] [--queries 200] [--dir DIR]

The library holds `units` memory units: half captions (parents), half their subchunks, spread over
100 text footages of one day each, with words drawn from a kitchen/daily-life vocabulary. Their
vectors are random unit vectors (embedding 100k texts would take ~10 minutes and does not change the
cost of a search); the question is embedded by the real embedder, so its ~10 ms are included. Built
once into DIR (default: the user cache) and reused. Each strategy answers the same questions, half
over the whole library, half restricted to one footage with an online cutoff.
"""

from __future__ import annotations

import argparse
import random
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import platformdirs
from sqlalchemy import func, select

from egodesk.core.paths import APP_NAME, LibraryPaths
from egodesk.core.timeutil import to_ts
from egodesk.memory.indices import IndexManager
from egodesk.memory.store import Footage, Store, Unit
from egodesk.perception.embedder import make_embedder
from egodesk.retrieval.base import Memory, Query, make_strategy

WORDS = ("take put wash open close cut pour stir dry wipe plate cup knife fork spoon pan pot lid tap sink fridge "
         "milk coffee tea bread cheese onion tomato pepper salt oil bowl board towel cloth sponge bin bag drawer "
         "cupboard table chair door window phone laptop book keys umbrella jacket shoes Caroline Melanie Jake "
         "garden park bus station shop market friend sister meeting lunch dinner breakfast").split()
QUESTIONS = ["When was the last time I took the keys?", "Where did I leave the blue umbrella?",
             "What did I do right after the first time I opened the fridge?", "What did Caroline say about the garden?",
             "What did I eat yesterday afternoon?", "How often do I drink coffee?", "Who did I meet at the market?",
             "What did I put in the pan before lunch?"]
FOOTAGES = 100
DAY0 = datetime(2024, 1, 1, 8, 0)


def build(root: Path, units: int, dim: int, model_id: str) -> tuple[Store, IndexManager]:
    paths = LibraryPaths.at(root).ensure()
    store = Store(paths.database)
    indices = IndexManager(store, paths.indices)
    with store.session() as s:
        have = s.scalar(select(func.count(Unit.id)))
    if have >= units:
        return store, indices
    rng = random.Random(7)
    vectors = np.random.default_rng(7)
    per_footage = units // 2 // FOOTAGES
    for f in range(FOOTAGES):
        start = DAY0 + timedelta(days=f)
        with store.session() as s:
            footage = Footage(content_hash=f"synthetic-{f}", path=f"synthetic#{f}", kind="text", title=f"day-{f:03d}",
                              start_ts=to_ts(start), start_source="text", duration=per_footage * 15.0)
            s.add(footage)
            s.flush()
            parents = []
            for i in range(per_footage):
                t = to_ts(start + timedelta(seconds=15 * i))
                text = "I " + " ".join(rng.choices(WORDS, k=12)) + "."
                parents.append(Unit(footage_id=footage.id, kind="caption", start_ts=t, end_ts=t + 15, text=text))
            s.add_all(parents)
            s.flush()
            children = [Unit(footage_id=footage.id, parent_id=p.id, kind="subchunk", start_ts=p.start_ts, end_ts=p.end_ts,
                             text=p.text[: len(p.text) // 2]) for p in parents]
            s.add_all(children)
            s.flush()
            for space, group in (("caption", parents), ("subchunk", children)):
                matrix = vectors.standard_normal((len(group), dim)).astype(np.float32)
                indices.add(space, [u.id for u in group], matrix, model_id, session=s)
        indices.save()
    return store, indices


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--strategies", default="flat,parent,hybrid,context,timeaware,auto")
    parser.add_argument("--dir", type=Path, default=platformdirs.user_cache_path(APP_NAME) / "latency-library")
    args = parser.parse_args(argv)
    embedder = make_embedder()
    started = time.perf_counter()
    store, indices = build(args.dir / str(args.units), args.units, embedder.dim, embedder.model_id)
    print(f"library: {len(Memory(store, indices, embedder).catalog())} units, ready in {time.perf_counter() - started:.1f} s")
    asked = to_ts(DAY0 + timedelta(days=FOOTAGES))
    for name in args.strategies.split(","):
        memory = Memory(store, indices, embedder)  # fresh caches: every strategy pays for embedding its questions
        strategy = make_strategy(name, memory)
        strategy.retrieve(Query(QUESTIONS[0], asked_at=asked, k=12))  # warm: indices, lexical index, catalog
        times, returned = [], 0
        for n in range(args.queries):
            question = QUESTIONS[n % len(QUESTIONS)] + ("" if n < len(QUESTIONS) else f" #{n}")  # defeat the embedding cache
            day = n % FOOTAGES
            scoped = n % 2 == 1
            cutoff = to_ts(DAY0 + timedelta(days=day, hours=3)) if scoped else asked
            query = Query(question, asked_at=cutoff, sources=[f"day-{day:03d}"] if scoped else None, k=12, cutoff=cutoff)
            t = time.perf_counter()
            returned += len(strategy.retrieve(query))
            times.append((time.perf_counter() - t) * 1000)
        print(f"{name:<10} p50 {np.percentile(times, 50):6.1f} ms   p95 {np.percentile(times, 95):6.1f} ms   "
              f"({args.queries} questions, {returned / args.queries:.1f} units returned on average)")
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
