"""A clock-window question set derived from a benchmark's narrations, in the benchmark format.

    .venv/bin/python benchmarks/window_questions.py ../shared/benchmarks/epic-dev OUT_DIR [--per-source 6]
    .venv/bin/egodesk eval OUT_DIR --strategy auto --k 5

People name times ("between 17:26:09 and 17:26:29, what did I add to the pan?"); the shared benchmarks
never do. Each question here names a 40-second window around one narration and asks what was done
with its object; the object recurs all over the video, so only the window tells the moments apart.
Multiple choice: the narration's action and three others from the same video. Deterministic: the
same narrations are picked every run (every n-th of a video's narrations that name an object).
"""

from __future__ import annotations

import argparse
import json
import shutil
from datetime import timedelta
from pathlib import Path

from egodesk.core.timeutil import from_ts
from egodesk.eval.benchmark import load_benchmark

MARGIN_S = 20


def window_questions(bench_dir: str, per_source: int = 6) -> list[dict]:
    bench = load_benchmark(bench_dir)
    by_source: dict[str, list] = {}
    for entry in bench.entries:
        words = entry.text.rstrip(".").split()
        if entry.kind == "narration" and len(words) >= 3 and words[0] == "I":
            by_source.setdefault(entry.source, []).append(entry)
    out = []
    for source, entries in sorted(by_source.items()):
        entries.sort(key=lambda e: (e.start, e.id))
        step = max(1, len(entries) // per_source)
        for n, entry in enumerate(entries[step // 2 :: step][:per_source]):
            action = entry.text.rstrip(".").split(" ", 1)[1]
            thing = action.split()[-1]
            inside = {e.text for e in entries if e.start < entry.end + MARGIN_S and e.end > entry.start - MARGIN_S}
            others = list(dict.fromkeys(e.text.rstrip(".").split(" ", 1)[1] for e in entries if e.text not in inside))
            distractors = [o for o in others if thing in o.split()][:3]
            distractors += [o for o in others if o not in distractors][: 3 - len(distractors)]
            if len(distractors) < 3:
                continue
            options = sorted([action, *distractors], key=lambda o: (hash_of(o + entry.id), o))
            start, end = from_ts(entry.start - MARGIN_S), from_ts(entry.end + MARGIN_S)
            out.append(
                {
                    "id": f"{source}-window-{n}",
                    "question": f"Between {start:%H:%M:%S} and {end:%H:%M:%S}, what did I do with the {thing}?",
                    "options": options,
                    "answer_idx": options.index(action),
                    "answer": None,
                    "asked_at": (from_ts(max(e.end for e in entries)) + timedelta(seconds=1)).isoformat(),
                    "sources": [source],
                    "category": "clock-window",
                    "unanswerable": False,
                    "evidence": [
                        {"source": source, "start": from_ts(entry.start).isoformat(), "end": from_ts(entry.end).isoformat()}
                    ],
                }
            )
    return out


def hash_of(text: str) -> int:
    """A stable shuffle key (Python's hash() changes between runs)."""
    return sum((i + 1) * ord(c) for i, c in enumerate(text)) % 9973


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmark")
    parser.add_argument("out")
    parser.add_argument("--per-source", type=int, default=6)
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(Path(args.benchmark) / "memory.jsonl", out / "memory.jsonl")
    questions = window_questions(args.benchmark, args.per_source)
    (out / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    (out / "README.md").write_text(
        f"Clock-window questions derived from {args.benchmark} by benchmarks/window_questions.py.\n", encoding="utf-8"
    )
    print(f"{len(questions)} questions in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
