"""Strategy x benchmark table of retrieval scores (Hit@1/5/12, Recall@12, nDCG@5, latency p50/p95).

    .venv/bin/python benchmarks/retrieval_table.py BENCH_DIR [BENCH_DIR ...] --strategies flat,parent,hybrid \
        [--limit N] [--k 12] [--out table.md] [--reports DIR]

Each benchmark is imported and built once into the cached scratch library (see egodesk.eval.runner);
every strategy then runs over the same questions. Latency is retrieval only (no LLM).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from egodesk.eval.runner import run_eval

COLUMNS = ("hit@1", "hit@5", "hit@12", "recall@12", "ndcg@5", "latency_p50_ms", "latency_p95_ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmarks", nargs="+")
    parser.add_argument("--strategies", default="flat,subchunk,parent,parent-time,hybrid,context,timeaware,carve,auto")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--k", type=int, default=12)
    parser.add_argument("--out", help="also write the markdown table here")
    parser.add_argument("--reports", help="folder for one JSON report per run")
    args = parser.parse_args(argv)
    rows = [f"| strategy | benchmark | {' | '.join(COLUMNS)} | n |", "|" + "---|" * (len(COLUMNS) + 3)]
    for bench in args.benchmarks:
        for strategy in args.strategies.split(","):
            report = Path(args.reports) / f"{Path(bench).name}-{strategy}.json" if args.reports else None
            data = run_eval(bench, strategy, k=args.k, limit=args.limit, report=report, quiet=True)
            s = data["summary"]
            cells = [f"{s[c]:.3f}" if not c.startswith("latency") else f"{s[c]:.0f}" for c in COLUMNS]
            rows.append(f"| {strategy} | {Path(bench).name} | {' | '.join(cells)} | {s['retrieval_questions']} |")
            print(rows[-1], flush=True)
            if args.reports:
                cats = {name: {c: round(v[c], 3) for c in ("hit@1", "hit@5") if v.get(c) is not None} for name, v in data["by_category"].items()}
                print("   ", json.dumps(cats), flush=True)
    table = "\n".join(rows)
    print(table)
    if args.out:
        Path(args.out).write_text(table + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
