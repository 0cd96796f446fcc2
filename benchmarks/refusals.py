"""The answers made without the model, counted on every set: how often the ask path refuses an answerable
question before the model reads anything (a false refusal) and how often it rightly refuses an
unanswerable one, per set and category. Retrieval alone: no LLM is loaded, so this runs in minutes.

    .venv/bin/python benchmarks/refusals.py [--sets clean,real,locomo,epic-dev] [--limit N] [--json REPORT]

The test days use the libraries `test_day.py` builds (the same cache: run it first, or this builds
them); the shared benchmarks their cached scratch libraries (egodesk.eval.runner). Each refusal is
listed with its question and the reason the answer would give.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from common import EPIC_DEV, LOCOMO
from test_day import built_library, library_settings
from testday.make_day import DAY, make_day, plan_of
from testday.questions import QUESTIONS, load_questions
from testday.real_day import QUESTIONS as REAL_QUESTIONS

from egodesk.core.settings import Settings
from egodesk.eval.benchmark import BenchQuestion, load_benchmark
from egodesk.eval.runner import open_library
from egodesk.perception.embedder import make_embedder
from egodesk.pipeline.ask import AskRequest, retrieve, without_model
from egodesk.retrieval.base import Memory

SETS = ("clean", "real", "locomo", "epic-dev")


def refusals(memory: Memory, questions: list[BenchQuestion], strategy: str) -> list[dict]:
    """Each question's decision: refused without the model (and why) or left to the model."""
    out = []
    for q in questions:
        found = retrieve(
            memory, AskRequest.make(q.question, memory.settings, None, q.options, q.asked_at, strategy, 12, q.sources)
        )
        settled = without_model(memory, found)
        out.append(
            {
                "id": q.id,
                "category": q.category or "",
                "unanswerable": q.unanswerable,
                "question": q.question,
                "refused": settled is not None,
                "reason": settled.text if settled is not None else "",
            }
        )
    return out


def day_memory(day: str, llm: str) -> tuple[Memory, list[BenchQuestion], object]:
    plan = plan_of(day)
    library, _, _ = built_library(make_day(plan=plan), library_settings(llm, True))
    questions = [q.bench for q in load_questions(QUESTIONS if plan is DAY else REAL_QUESTIONS)]
    return library.memory, questions, library


def bench_memory(folder: Path, limit: int | None) -> tuple[Memory, list[BenchQuestion], object]:
    bench = load_benchmark(folder, limit)
    settings = Settings.load(None)
    embedder = make_embedder(threads=min(2, settings.threads), model=settings.embedder_model)
    store, indices = open_library(bench, embedder, settings)
    return Memory(store, indices, embedder, settings=settings), bench.questions, store


def summary(decisions: list[dict]) -> dict[str, dict[str, int]]:
    rows: dict[str, dict[str, int]] = {}
    for d in decisions:
        for name in ("all", d["category"]):
            row = rows.setdefault(name, {"answerable": 0, "false_refusals": 0, "unanswerable": 0, "refused_unanswerable": 0})
            kind = "unanswerable" if d["unanswerable"] else "answerable"
            row[kind] += 1
            if d["refused"]:
                row["refused_unanswerable" if d["unanswerable"] else "false_refusals"] += 1
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS), help="comma separated, of: " + ", ".join(SETS))
    parser.add_argument(
        "--limit", type=int, default=200, help="questions of each shared benchmark (default 200, as the answered runs)"
    )
    parser.add_argument("--llm", default="llm-quality", help="the LLM the test days' libraries were built with")
    parser.add_argument("--strategy", default="auto")
    parser.add_argument("--json", type=Path, help="write every decision here")
    args = parser.parse_args(argv)
    report = {}
    for name in args.sets.split(","):
        if name in ("clean", "real"):
            memory, questions, owner = day_memory(name, args.llm)
        elif name in ("locomo", "epic-dev"):
            memory, questions, owner = bench_memory(LOCOMO if name == "locomo" else EPIC_DEV, args.limit)
        else:
            parser.error(f"unknown set {name!r}")
        try:
            decisions = refusals(memory, questions, args.strategy)
        finally:
            owner.close()
        report[name] = {"summary": summary(decisions), "decisions": decisions}
        print(f"\n{name}: refused without the model")
        print(f"{'':<16}{'answerable':>11}{'refused':>9}{'unanswerable':>14}{'refused':>9}")
        for category, row in sorted(report[name]["summary"].items(), key=lambda item: item[0] != "all"):
            print(
                f"{category:<16}{row['answerable']:>11}{row['false_refusals']:>9}"
                f"{row['unanswerable']:>14}{row['refused_unanswerable']:>9}"
            )
        for d in decisions:
            if d["refused"]:
                tag = "ok   " if d["unanswerable"] else "FALSE"
                print(f"  {tag} {d['id']} {d['question']} -> {d['reason']}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
