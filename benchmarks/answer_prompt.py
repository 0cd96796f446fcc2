"""Answer prompt size: tokens of the whole prompt the answerer reads, per question, on each benchmark.

Runs `egodesk eval`'s path (egodesk.eval.runner.run_eval, answers on) with the real llm-quality
tokenizer and chat template, but in place of generating an answer the model's stand-in counts the
prompt and replies "not found": the figure is exactly what a question costs to read, in seconds of CPU
instead of hours. Questions are spread over the whole benchmark (every n-th), so every category is in.
Prompt evaluation runs at ~36-48 tokens/s on 2 cores with llm-quality (MODELS.md; measured 36 at 1,250
tokens), which is why this number is most of an answer's latency.

    .venv/bin/python benchmarks/answer_prompt.py [--questions 200] [--bench DIR ...] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
from common import EPIC_DEV, LOCOMO, PARENT_TOKENS, Report, add_output_args

from egodesk.core.settings import Settings
from egodesk.eval.benchmark import load_benchmark
from egodesk.eval.runner import default_library_root, run_eval
from egodesk.perception.embedder import make_embedder
from egodesk.perception.llm import make_llm

BUDGET = 600  # the bound on an answer prompt
NOT_FOUND_REPLY = json.dumps({"evidence": [], "reasoning": "", "answer": "NOT_FOUND"})


class PromptMeter:
    """The answerer's model, measuring instead of answering: the templated prompt's real token count."""

    def __init__(self, llm):
        self.llm, self.model_id, self.in_flight = llm, llm.model_id, 1
        self.sizes: list[int] = []

    def chat(self, messages, max_tokens=256, temperature=0.0, schema=None, on_text=None):
        templated = self.llm._format(messages).encode("utf-8")
        self.sizes.append(len(self.llm._llama.tokenize(templated, add_bos=False, special=True)))
        return NOT_FOUND_REPLY, self.sizes[-1]

    def count_tokens(self, text: str) -> int:
        return self.llm.count_tokens(text)

    def keep_prefix(self, messages) -> None:
        pass  # nothing is evaluated


def spread(bench_dir: Path, count: int, out: Path) -> Path:
    """A copy of the benchmark holding every n-th of its questions (the same memory, so its library)."""
    lines = (bench_dir / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    step = max(1.0, len(lines) / count)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("memory.jsonl", "README.md"):
        if (bench_dir / name).exists() and not (out / name).exists():
            (out / name).symlink_to(bench_dir / name)
    (out / "questions.jsonl").write_text("\n".join(lines[int(i * step)] for i in range(min(count, len(lines)))) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, help="questions per benchmark (default 200; quick 20)")
    parser.add_argument("--bench", type=Path, nargs="+", default=[EPIC_DEV, LOCOMO])
    add_output_args(parser)
    args = parser.parse_args(argv)
    count = args.questions or (20 if args.quick else 200)
    settings = Settings(llm_model="llm-quality")
    embedder = make_embedder(threads=2)
    meter = PromptMeter(make_llm(settings, role="llm-quality"))
    report = Report("answer prompt")
    with tempfile.TemporaryDirectory() as scratch:
        for bench_dir in args.bench:
            bench = load_benchmark(bench_dir)
            subset = spread(bench_dir, count, Path(scratch) / bench.name)
            meter.sizes.clear()
            run_eval(
                subset,
                settings.strategy,
                answer=True,
                settings=settings,
                embedder=embedder,
                llm=meter,
                library_dir=default_library_root(bench, embedder.model_id),
                quiet=True,
                reuse_replies=False,
            )
            sizes = np.asarray(meter.sizes)
            note = f"{len(sizes)} questions"
            print(f"{bench.name}: prompt tokens p50 {np.median(sizes):.0f}, max {sizes.max()}", flush=True)
            report.add(f"prompt tokens p50 [{bench.name}]", float(np.median(sizes)), "tokens", PARENT_TOKENS, note)
            report.add(f"prompt tokens p95 [{bench.name}]", float(np.percentile(sizes, 95)), "tokens", note=note)
            report.add(f"prompt tokens max [{bench.name}]", float(sizes.max()), "tokens", note=note)
            report.add(f"over {BUDGET} tokens [{bench.name}]", float(np.mean(sizes > BUDGET)), "share", note=note)
    report.finish(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
