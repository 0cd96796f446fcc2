"""Parent-child memory size and build time on a benchmark's memory.jsonl (default: EPIC dev).

Imports the file into a scratch library, builds the parent-child memory of every source, and prints
bytes per minute of footage (text memory alone, + vectors, + index share; the parent-retrieval paper
reports 66 KB/min for its textual memory, Imprint 109 MB for 7 days) and build time per minute of
footage and per 1k units. `--quick`: the first 5 sources.

    .venv/bin/python benchmarks/memory_size.py [--memory PATH] [--sources N] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from common import EPIC_DEV, IMPRINT_KB_PER_MIN, PARENT_KB_PER_MIN, Report, add_output_args

from egodesk.core.paths import LibraryPaths
from egodesk.memory.indices import IndexManager
from egodesk.memory.parent_child import build_parent_child
from egodesk.memory.stats import memory_stats
from egodesk.memory.store import Store
from egodesk.perception.embedder import make_embedder
from egodesk.pipeline.textimport import import_memory_jsonl


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory", type=Path, default=EPIC_DEV / "memory.jsonl")
    parser.add_argument("--sources", type=int, default=0, help="only the first N sources (0 = all; quick: 5)")
    add_output_args(parser)
    args = parser.parse_args(argv)
    args.sources = args.sources or (5 if args.quick else 0)
    with tempfile.TemporaryDirectory() as tmp:
        memory = args.memory
        if args.sources:
            memory = Path(tmp) / "subset.jsonl"
            rows = [json.loads(line) for line in args.memory.read_text(encoding="utf-8").splitlines() if line.strip()]
            keep = list(dict.fromkeys(r["source"] for r in rows))[: args.sources]
            memory.write_text("".join(json.dumps(r) + "\n" for r in rows if r["source"] in keep), encoding="utf-8")
        paths = LibraryPaths.at(Path(tmp) / "library").ensure()
        store = Store(paths.database)
        footage_ids = import_memory_jsonl(store, memory).footage_ids
        embedder = make_embedder()
        indices = IndexManager(store, paths.indices)
        units = embedded = 0
        start = time.perf_counter()
        for footage_id in footage_ids:
            built = build_parent_child(store, indices, embedder, footage_id)
            units += built.parents_added + built.children_added
            embedded += built.texts_embedded
        seconds = time.perf_counter() - start
        totals = [r for r in memory_stats(store, paths.indices) if r["kind"] == "all"]
        store.close()

    minutes = sum(r["minutes"] for r in totals)
    text, vectors, index = (sum(r[key] for r in totals) for key in ("text_bytes", "vector_bytes", "index_bytes"))
    print(
        f"{args.memory.name}: {len(footage_ids)} sources, {minutes:.1f} min of footage, "
        f"{units:,} units ({embedded:,} distinct texts embedded)"
    )
    report = Report("memory-size")
    report.add("text memory (parent-child)", text / minutes / 1000, "KB/min", PARENT_KB_PER_MIN)
    report.add("+ vectors", (text + vectors) / minutes / 1000, "KB/min")
    report.add(
        "whole memory: text + vectors + index files", (text + vectors + index) / minutes / 1000, "KB/min", IMPRINT_KB_PER_MIN
    )
    report.add("build", seconds / minutes, "s per min of footage")
    report.add("build", seconds / units * 1000, "s per 1k units")
    report.finish(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
