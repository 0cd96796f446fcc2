"""Strategy x benchmark table: retrieval scores (Hit@1/5/12, Recall@12, nDCG@5, latency p50/p95) and,
with --answer, the answerer's (accuracy or token F1, grounded share, abstention recall / precision on
unanswerable questions, prompt tokens, answer latency p50/p95).

    .venv/bin/python benchmarks/strategy_table.py BENCH_DIR [BENCH_DIR ...] --strategies flat,parent,hybrid \
        [--limit N] [--k 12] [--answer [--answer-k 8]] [--out table.md] [--reports DIR [--resume]]

Each benchmark is imported and built once into the cached scratch library (see egodesk.eval.runner);
every strategy then runs over the same questions. Retrieval latency excludes the LLM. Answered runs hand
the answerer the top --answer-k units (Hit and Recall are still scored at 12); with --reports and
--resume an answered run continues from its report, and any prompt an earlier strategy already had
answered comes from the library's reply cache, so a table of every strategy costs each distinct prompt once.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from egodesk.eval.runner import format_value, run_eval

RETRIEVAL_COLUMNS = ("hit@1", "hit@5", "hit@12", "recall@12", "ndcg@5", "latency_p50_ms", "latency_p95_ms")
ANSWER_COLUMNS = (
    "accuracy",
    "f1",
    "grounded",
    "abstention_recall",
    "abstention_precision",
    "tokens",
    "answer_p50_ms",
    "answer_p95_ms",
)


def strategy_table(
    benchmarks: list[str],
    strategies: list[str],
    k: int = 12,
    limit: int | None = None,
    answer: bool = False,
    answer_k: int = 8,
    reports: Path | None = None,
    resume: bool = False,
    run: Callable[..., dict] = run_eval,
    echo: Callable[[str], None] = print,
) -> str:
    """The markdown table, one row per benchmark and strategy; each row is echoed as it is done."""
    columns = RETRIEVAL_COLUMNS + (ANSWER_COLUMNS if answer else ())
    rows = [f"| strategy | benchmark | {' | '.join(columns)} | n |", "|" + "---|" * (len(columns) + 3)]
    for bench in benchmarks:
        for strategy in strategies:
            suffix = "-answer" if answer else ""
            report = reports / f"{Path(bench).name}-{strategy}{suffix}.json" if reports else None
            data = run(
                bench, strategy, k=answer_k if answer else k, limit=limit, report=report, quiet=True, answer=answer, resume=resume
            )
            s = data["summary"]
            cells = [format_value(c, s.get(c)) for c in columns]
            rows.append(f"| {strategy} | {Path(bench).name} | {' | '.join(cells)} | {s['questions']} |")
            echo(rows[-1])
            cats = {
                name: {c: round(v[c], 3) for c in ("hit@1", "hit@5", "accuracy", "f1") if v.get(c) is not None}
                for name, v in data["by_category"].items()
            }
            echo("    " + json.dumps(cats))
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmarks", nargs="+")
    parser.add_argument("--strategies", default="flat,subchunk,parent,parent-time,hybrid,context,timeaware,carve,auto")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--k", type=int, default=12, help="units retrieved per question (retrieval-only runs)")
    parser.add_argument("--answer", action="store_true", help="also answer every question with the LLM")
    parser.add_argument("--answer-k", type=int, default=8, help="units handed to the answerer")
    parser.add_argument("--out", help="also write the markdown table here")
    parser.add_argument("--reports", type=Path, help="folder for one JSON report per run")
    parser.add_argument("--resume", action="store_true", help="continue answered runs from their reports (needs --reports)")
    args = parser.parse_args(argv)
    if args.resume and not args.reports:
        parser.error("--resume needs --reports")
    table = strategy_table(
        args.benchmarks,
        args.strategies.split(","),
        args.k,
        args.limit,
        args.answer,
        args.answer_k,
        args.reports,
        args.resume,
        echo=lambda line: print(line, flush=True),
    )
    print(table)
    if args.out:
        Path(args.out).write_text(table + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
