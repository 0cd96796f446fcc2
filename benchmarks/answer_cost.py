"""Answer cost per LLM tier: seconds and prompt tokens per question, on real epic-dev questions.

Runs `egodesk eval`'s path (egodesk.eval.runner.run_eval with answers on) over the first N questions
of the benchmark with each LLM tier: retrieval with the default strategy, then the answerer. Reports
per tier: the model's load time, answer latency p50/p95 (the LLM call alone, and retrieval + answer),
prompt tokens per question (the parent-retrieval paper spends 3,600), the time to the first streamed
token and to the answer's first words (the model cites and reasons first), and accuracy on those few
questions (too few to compare tiers by; it shows the answers are real). Replies are always generated,
never taken from the reply cache. The kept instruction head (`LLM.keep_prefix`) is measured on the
first question's prompt: time to its first token on a freshly loaded model against the same prompt
once the head is kept and another prompt ran in between. LLM threads: 2 (`--threads`;
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
from egodesk.reasoning.answerer import FieldStream
from egodesk.reasoning.prompt import EVIDENCE_OPEN


class Timed:
    """The answerer's model, timed: for each reply, seconds to its first streamed token and to the
    first words of its answer field; keeps the first prompt it was sent."""

    def __init__(self, llm):
        self.llm = llm
        self.first_token: list[float] = []
        self.first_words: list[float] = []
        self.first_prompt: list[dict] | None = None

    def __getattr__(self, name):
        return getattr(self.llm, name)

    def chat(self, messages, max_tokens=256, temperature=0.0, schema=None, on_text=None):
        start, marks = time.perf_counter(), {}
        self.first_prompt = self.first_prompt or messages
        words = FieldStream("answer", lambda text: marks.setdefault("words", time.perf_counter() - start))

        def seen(piece: str) -> None:
            marks.setdefault("token", time.perf_counter() - start)
            words.feed(piece)
            if on_text is not None:
                on_text(piece)

        reply = self.llm.chat(messages, max_tokens=max_tokens, temperature=temperature, schema=schema, on_text=seen)
        self.first_token.append(marks.get("token", time.perf_counter() - start))
        if "words" in marks:
            self.first_words.append(marks["words"])
        return reply


def first_token_s(llm, messages) -> float:
    """Seconds until the first token of a reply to `messages`: the prompt's evaluation."""
    start, first = time.perf_counter(), []
    llm.chat(messages, max_tokens=1, on_text=lambda piece: first.append(time.perf_counter()))
    return (first[0] if first else time.perf_counter()) - start


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
        timed = Timed(llm)
        data = run_eval(
            args.bench,
            settings.strategy,
            answer=True,
            limit=count,
            settings=settings,
            embedder=embedder,
            llm=timed,
            quiet=True,
            reuse_replies=False,
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
        t50, t95 = p50_p95(timed.first_token)
        report.add(f"first token p50 [{tier}]", t50, "s")
        report.add(f"first token p95 [{tier}]", t95, "s")
        if timed.first_words:
            w50, w95 = p50_p95(timed.first_words)
            note = f"{len(timed.first_words)} answers"
            report.add(f"first answer words p50 [{tier}]", w50, "s", note=note)
            report.add(f"first answer words p95 [{tier}]", w95, "s", note=note)
        if correct:
            report.add(f"accuracy [{tier}]", float(np.mean(correct)), "share", note=f"{len(correct)} questions")
        if timed.first_prompt is not None:
            prompt = timed.first_prompt
            del llm, timed
            fresh = make_llm(settings, role=tier)
            cold = first_token_s(fresh, prompt)
            fresh.keep_prefix([prompt[0], {"role": "user", "content": EVIDENCE_OPEN}])  # its rules
            first_token_s(fresh, [{"role": "user", "content": "Say hello."}])  # another prompt in between
            kept = first_token_s(fresh, prompt)
            report.add(f"first token, cold [{tier}]", cold, "s")
            report.add(f"first token, head kept [{tier}]", kept, "s", note=f"{cold / max(kept, 1e-3):.1f}x faster")
            del fresh
    report.finish(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
