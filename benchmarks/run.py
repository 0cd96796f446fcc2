"""Run the benchmarks and print one table of their figures, with the commands that produced it.

    .venv/bin/python benchmarks/run.py [--quick] [--only NAME ...] [--args NAME "ARGS"] [--json FILE]

Each benchmark runs as its own process (`.venv/bin/python benchmarks/<script> [--quick] --json TMP`),
so each stays runnable on its own, one cannot disturb another's memory figures, and a failing one
does not stop the rest. Its output streams through; its figures come back as JSON.

`--quick` keeps the whole run to about 5 minutes on 2 idle cores (1 min of footage, 10k/100k units,
3 questions with llm-test and llm-fast). The full run takes about an hour on an idle machine the
first time (building the 1M-unit synthetic library is ~30 min of it; it is cached under
~/.cache/egodesk/bench/ and reused) and ~35 min after. Shared cores make both slower: the load
average is printed with the table.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from common import REPO, Figure, format_references, format_table, read_figures

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Bench:
    name: str
    script: str
    what: str
    full: tuple[str, ...] = ()
    quick: tuple[str, ...] | None = ("--quick",)  # None: not part of the quick run


BENCHMARKS = (
    Bench("ingest", "ingest_rtf.py", "ingest RTF per stage and ASR tier; worker and GUI peak RSS"),
    Bench(
        "ingest-llm",
        "ingest_rtf.py",
        "peak RSS of an ingest that also builds the LLM memories (llm-quality)",
        full=("--minutes", "0.5", "--asr", "asr", "--llm", "llm-quality", "--no-gui"),
        quick=None,
    ),
    Bench("memory-size", "memory_size.py", "parent-child memory bytes per minute of footage (epic-dev)"),
    # Quick: the test LLM only, to stay near 5 minutes.
    Bench(
        "memory-build",
        "memory_build.py",
        "memory build time per minute of footage per builder and LLM tier",
        quick=("--quick", "--tiers", "llm-test"),
    ),
    Bench("index-scale", "index_scale.py", "vector index build per 10k units, load, search latency, recall"),
    Bench("retrieval-latency", "retrieval_latency.py", "retrieval p50/p95 per strategy at 10k/100k/1M synthetic units"),
    Bench("answer", "answer_cost.py", "answer latency and prompt tokens per question per LLM tier (epic-dev)"),
)


def command(bench: Bench, quick: bool, extra: list[str]) -> list[str] | None:
    args = bench.quick if quick else bench.full
    if args is None:
        return None
    return [sys.executable, str(HERE / bench.script), *args, *extra]


def shown(cmd: list[str]) -> str:
    """A command as a user would type it from the repository root."""
    return shlex.join(str(Path(p).relative_to(REPO)) if Path(p).is_relative_to(REPO) and os.path.isabs(p) else p for p in cmd)


def run_one(bench: Bench, cmd: list[str], folder: Path) -> tuple[list[Figure], float, int]:
    out = folder / f"{bench.name}.json"
    print(f"\n== {bench.name}: {bench.what}\n$ {shown(cmd)}", flush=True)
    started = time.perf_counter()
    rc = subprocess.run([*cmd, "--json", str(out)], cwd=REPO).returncode
    seconds = time.perf_counter() - started
    figures = read_figures(out) if rc == 0 and out.exists() else []
    return figures, seconds, rc


def main(argv: list[str] | None = None) -> int:
    names = [b.name for b in BENCHMARKS]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="about 5 minutes: smaller sizes, fewer questions, fast LLM tiers")
    parser.add_argument("--only", nargs="+", choices=names, metavar="NAME", help=f"only these: {', '.join(names)}")
    parser.add_argument(
        "--args",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "ARGS"),
        help='extra arguments for one benchmark, e.g. --args index-scale "--units 5000"',
    )
    parser.add_argument("--json", help="also write every figure and command to this JSON file")
    args = parser.parse_args(argv)
    extra: dict[str, list[str]] = {}
    for name, text in args.args:
        if name not in names:
            parser.error(f"--args: unknown benchmark {name!r}")
        extra.setdefault(name, []).extend(shlex.split(text))
    chosen = [b for b in BENCHMARKS if not args.only or b.name in args.only]
    load_before, started = os.getloadavg(), time.perf_counter()
    figures: list[Figure] = []
    log: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="egodesk-bench-") as tmp:
        for bench in chosen:
            cmd = command(bench, args.quick, extra.get(bench.name, []))
            if cmd is None:
                continue
            got, seconds, rc = run_one(bench, cmd, Path(tmp))
            figures += got
            log.append({"name": bench.name, "command": shown(cmd), "seconds": round(seconds, 1), "rc": rc})
    total, load_after = time.perf_counter() - started, os.getloadavg()
    mode = "quick" if args.quick else "full"
    print(
        f"\n## egodesk benchmarks ({mode}): {total / 60:.1f} min on {os.cpu_count()} cores; load average "
        f"{load_before[0]:.1f} at the start, {load_after[0]:.1f} / {load_after[1]:.1f} / {load_after[2]:.1f} (1/5/15 min) at the end"
    )
    print(f"$ {shown([sys.executable, str(HERE / 'run.py'), *(argv if argv is not None else sys.argv[1:])])}")
    for row in log:
        state = f"{row['seconds']:.0f} s" + ("" if row["rc"] == 0 else f", FAILED (exit {row['rc']})")
        print(f"  {row['command']}   [{state}]")
    print()
    print(format_table(figures))
    print(format_references(figures))
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "mode": mode,
                    "seconds": round(total, 1),
                    "load_before": load_before,
                    "load_after": load_after,
                    "commands": log,
                    "figures": [asdict(f) for f in figures],
                },
                indent=1,
            ),
            encoding="utf-8",
        )
    return 0 if all(row["rc"] == 0 for row in log) else 1


if __name__ == "__main__":
    raise SystemExit(main())
