"""What a big library costs: for 10 h, 100 h and 1,000 h of footage, the time until it is searchable
and until every memory is built (on this CPU, and with an inference server of a given throughput), its
size on disk, the RAM a question needs and retrieval p50 at that size.

    .venv/bin/python benchmarks/library_cost.py [--hours 10,100,1000] [--llm llm-quality] [--memories-subset narration]
        [--server-prompt-tps 4000] [--server-reply-tps 400] [--quick] [--json FILE]

Each rate is measured on this machine by the benchmark that owns it, then scaled by the hours:
- searchable: `ingest_rtf.py` runs the real ingest worker on two minutes of the shared walk + speech
  footage with the LLM memories off; its real-time factor (without the worker's start-up, paid once per
  import) times the footage.
- memories: `memory_build.py --tiers LLM --subsets SUBSET` builds interaction records and atomic
  statements from epic-dev narrations (`--memories-subset narration`, the default) or LoCoMo dialogue
  (`dialogue`, a talkative day): seconds per minute of footage, of which the LLM's seconds and its prompt and
  reply tokens. The worker builds them after every footage is searchable, so full = searchable +
  memories. With a server the LLM part becomes prompt tokens / prompt-tps + reply tokens / reply-tps
  (requests in flight overlap the rest, which stays on this CPU: embedding and writing), so the longer
  of the two counts. The server's throughputs are stated, not measured here (no GPU): pass your
  server's (llama.cpp's server logs both per request); the defaults are an assumption for a 1.5B Q4
  model on one consumer GPU with 4 slots.
- size, RAM, p50: `scale_library.py` builds the memory of that many hours (the real schema and hnswlib
  indices, every memory kind, synthetic text and vectors) into a scratch folder, then a fresh process
  opens it and asks its questions without the LLM (`scale_library.py --ask`): the folder's bytes, that
  process's peak RSS and its warm questions' p50. Answering adds the LLM's own RSS, measured once by a
  process that loads it and answers one prompt.
Building a 1,000 h library takes ~15 min and ~9 GB of scratch disk on 2 cores; `--quick` measures 1 h
and 10 h with half a minute of footage and fewer memory entries.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import memory_build
from common import REPO, Report, add_output_args, read_figures

HERE = Path(__file__).resolve().parent
# A child reports its own peak RSS: the kernel's figure for a child (wait4) also counts the parent's
# memory copied at fork, which is the loaded LLM here.
PEAK_RSS = """import atexit, os, runpy, sys
def peak():
    with open(os.environ["PEAK_RSS_FILE"], "w") as out:
        out.write(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))
atexit.register(peak)
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))  # as `python script.py` would
runpy.run_path(sys.argv[0], run_name="__main__")
"""
LOAD_LLM = """import sys
from egodesk.core.settings import Settings
from egodesk.perception.llm import make_llm
llm = make_llm(Settings(llm_model=sys.argv[1], threads=2))
llm.chat([{"role": "user", "content": "Say hello."}], max_tokens=8)
"""


def run_child(script: Path, *args: str) -> tuple[str, float]:
    """A Python script's stdout, run in a child, and the child's peak RSS in MB."""
    with tempfile.NamedTemporaryFile(suffix=".kb") as peak:
        env = {**os.environ, "PEAK_RSS_FILE": peak.name}
        done = subprocess.run(
            [sys.executable, "-c", PEAK_RSS, str(script), *args], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True
        )
        if done.returncode:
            raise RuntimeError(f"{script.name} exited with {done.returncode}")
        return done.stdout, int(Path(peak.name).read_text()) / 1024


def searchable_rtf(minutes: float, folder: Path) -> float:
    """Seconds of ingest per second of footage, up to searchable, without the worker's start-up (model
    loading: once per import, whatever its length)."""
    out = folder / "ingest.json"
    run_child(HERE / "ingest_rtf.py", "--minutes", str(minutes), "--asr", "asr", "--no-gui", "--json", str(out))
    figures = {f.figure: f.value for f in read_figures(out)}
    return figures["RTF whole ingest [asr]"] - figures["RTF worker start-up, outside stages [asr]"]


def answer_model_rss(llm: str, folder: Path) -> float:
    script = folder / "load_llm.py"
    script.write_text(LOAD_LLM, encoding="utf-8")
    return run_child(script, llm)[1]


def memory_rates(llm: str, subset: str, quick: bool) -> dict:
    """Records + atomic statements on one of memory_build's subsets: seconds and the LLM's seconds per
    second of footage, its tokens per minute of footage."""
    result = memory_build.main(["--tiers", llm, "--subsets", subset, *(["--quick"] if quick else [])])
    [rates] = memory_build.llm_memories(result["rows"])
    return {
        "seconds": rates["rtf"],  # real-time factors
        "llm_s": rates["llm_rtf"],
        "prompt_tokens": rates["prompt_tokens_per_min"],  # per minute of footage
        "reply_tokens": rates["reply_tokens_per_min"],
    }


def library_at(hours: float, folder: Path) -> dict:
    """Disk bytes, peak RSS of a process asking questions (no LLM), warm p50 of a library of `hours`."""
    root = folder / f"scale-{hours:g}h"
    run_child(HERE / "scale_library.py", str(root), "--hours", str(hours))
    out, rss = run_child(HERE / "scale_library.py", str(root), "--ask")  # a fresh process: what asking holds
    report = json.loads(out)
    # On disk once closed: the build's own byte count was taken with the SQLite write-ahead log still open.
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    shutil.rmtree(root)
    return {"bytes": size, "rss_mb": rss, "p50_s": report["questions"]["warm_p50"], "units": report["units"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", help="library sizes in hours of footage (default 10,100,1000; quick 1,10)")
    parser.add_argument("--llm", default="llm-quality", choices=memory_build.TIERS, help="the LLM that builds memories")
    parser.add_argument(
        "--memories-subset", default="narration", choices=memory_build.SUBSETS, help="memory_build's footage for the memory rates"
    )
    parser.add_argument("--server-prompt-tps", type=float, default=4000.0, help="server prompt tokens/s, all slots")
    parser.add_argument("--server-reply-tps", type=float, default=400.0, help="server reply tokens/s, all slots")
    add_output_args(parser)
    args = parser.parse_args(argv)
    sizes = [float(h) for h in (args.hours or ("1,10" if args.quick else "10,100,1000")).split(",")]
    report = Report("library cost")
    with tempfile.TemporaryDirectory(prefix="egodesk-cost-") as tmp:
        folder = Path(tmp)
        search_rtf = searchable_rtf(0.5 if args.quick else 2.0, folder)
        memory = memory_rates(args.llm, args.memories_subset, args.quick)
        llm_rss = answer_model_rss(args.llm, folder)
        libraries = {hours: library_at(hours, folder) for hours in sizes}
    server_llm_rtf = (memory["prompt_tokens"] / args.server_prompt_tps + memory["reply_tokens"] / args.server_reply_tps) / 60
    cpu_rest_rtf = memory["seconds"] - memory["llm_s"]
    full_cpu_rtf = search_rtf + memory["seconds"]
    full_server_rtf = search_rtf + max(server_llm_rtf, cpu_rest_rtf)
    print(
        f"\nmeasured: searchable {search_rtf:.3f}x real time; memories ({args.llm}) {memory['seconds']:.3f}x, of which the "
        f"LLM {memory['llm_s']:.3f}x ({memory['prompt_tokens']:.0f} prompt + {memory['reply_tokens']:.0f} reply tokens per "
        f"min of footage); answer model RSS {llm_rss:.0f} MB. Stated server: {args.server_prompt_tps:g} prompt and "
        f"{args.server_reply_tps:g} reply tokens/s -> LLM {server_llm_rtf:.3f}x, the rest on this CPU {cpu_rest_rtf:.3f}x"
    )
    header = ("hours", "searchable", "memories, CPU", "memories, server", "disk GB", "RAM MB (+LLM)", "p50 ms", "units")
    rows = []
    for hours, lib in libraries.items():
        rows.append(
            (
                f"{hours:g}",
                duration(hours * search_rtf),
                duration(hours * full_cpu_rtf),
                duration(hours * full_server_rtf),
                f"{lib['bytes'] / 1e9:.2f}",
                f"{lib['rss_mb']:.0f} (+{llm_rss:.0f})",
                f"{lib['p50_s'] * 1000:.0f}",
                f"{lib['units']:,}",
            )
        )
        note = f"{hours:g} h of footage"
        report.add(f"time to searchable @ {hours:g} h", hours * search_rtf, "h", note=note)
        report.add(f"time to all memories, this CPU @ {hours:g} h", hours * full_cpu_rtf, "h", note=f"{args.llm}")
        report.add(
            f"time to all memories, server @ {hours:g} h",
            hours * full_server_rtf,
            "h",
            note=f"{args.server_prompt_tps:g}/{args.server_reply_tps:g} tokens/s stated",
        )
        report.add(f"library on disk @ {hours:g} h", lib["bytes"] / 1e9, "GB", note=f"{lib['units']:,} units")
        report.add(f"RAM asking, without the LLM @ {hours:g} h", lib["rss_mb"], "MB", note=f"the LLM adds {llm_rss:.0f} MB")
        report.add(f"retrieval p50 @ {hours:g} h", lib["p50_s"] * 1000, "ms")
    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        print("  ".join(str(cell).rjust(width) for cell, width in zip(row, widths)))
    report.finish(args.json)
    return 0


def duration(hours: float) -> str:
    return f"{hours * 60:.0f} min" if hours < 1 else f"{hours:.1f} h" if hours < 48 else f"{hours / 24:.1f} days"


if __name__ == "__main__":
    raise SystemExit(main())
