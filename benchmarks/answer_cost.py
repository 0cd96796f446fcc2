"""Answer cost per LLM tier: seconds and prompt tokens per question, on real epic-dev questions.

Runs `egodesk eval`'s path (egodesk.eval.runner.run_eval with answers on) over the first N questions
of the benchmark with each LLM tier: retrieval with the default strategy, then the answerer. Reports
per tier: the model's load time, answer latency p50/p95 (the LLM call alone, and retrieval + answer),
prompt tokens per question (the parent-retrieval paper spends 3,600), and accuracy on those few
questions (too few to compare tiers by; it shows the answers are real). LLM threads: 2 (`--threads`;
on a machine busier than its cores, 2 llama.cpp threads generate ~10x slower than 1).
`--quick`: llm-test and llm-fast, 3 questions; default: all three tiers, 10 questions.

    .venv/bin/python benchmarks/answer_cost.py [--tiers llm-test,llm-fast,llm-quality] [--questions 10]
        [--bench DIR] [--threads 2] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from common import EPIC_DEV, PARENT_TOKENS, Report, add_output_args, p50_p95

from egodesk.core.settings import Settings
from egodesk.eval.runner import run_eval
from egodesk.perception.embedder import make_embedder
from egodesk.perception.llm import make_llm


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiers", help="LLM roles, comma separated (default: all three; quick: llm-test,llm-fast)")
    parser.add_argument("--questions", type=int, help="questions per tier (default 10; quick 3)")
    parser.add_argument("--bench", type=Path, default=EPIC_DEV)
    parser.add_argument("--threads", type=int, default=2, help="LLM threads")
    add_output_args(parser)
    args = parser.parse_args(argv)
    tiers = (args.tiers or ("llm-test,llm-fast" if args.quick else "llm-test,llm-fast,llm-quality")).split(",")
    count = args.questions or (3 if args.quick else 10)
    embedder = make_embedder(threads=2)
    report = Report("answer")
    for tier in tiers:
        settings = Settings(llm_model=tier, threads=args.threads)
        start = time.perf_counter()
        llm = make_llm(settings, role=tier)
        report.add(f"LLM load [{tier}]", time.perf_counter() - start, "s")
        data = run_eval(
            args.bench, settings.strategy, answer=True, limit=count, settings=settings, embedder=embedder, llm=llm, quiet=True
        )
        rows = data["questions"]
        answer_ms = [r["answer_ms"] for r in rows]
        whole_ms = [r["answer_ms"] + r["latency_ms"] for r in rows]
        a50, a95 = p50_p95(answer_ms)
        w50, w95 = p50_p95(whole_ms)
        tokens = float(np.mean([r["tokens"] or 0 for r in rows]))
        correct = [r["correct"] for r in rows if r["correct"] is not None]
        print(f"{tier}: {len(rows)} questions, answer p50 {a50 / 1000:.1f} s, {tokens:.0f} prompt tokens each", flush=True)
        report.add(f"answer (LLM call) p50 [{tier}]", a50 / 1000, "s")
        report.add(f"answer (LLM call) p95 [{tier}]", a95 / 1000, "s")
        report.add(f"retrieval + answer p50 [{tier}]", w50 / 1000, "s")
        report.add(f"retrieval + answer p95 [{tier}]", w95 / 1000, "s")
        report.add(f"prompt tokens per question [{tier}]", tokens, "tokens", PARENT_TOKENS)
        if correct:
            report.add(f"accuracy [{tier}]", float(np.mean(correct)), "share", note=f"{len(correct)} questions")
        del llm
    report.finish(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
