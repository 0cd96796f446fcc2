"""Time to searchable: after importing an 8-file, 2-day batch, how long until every file can be
searched, and until all of its memories (the LLM-built ones too) are built.

Makes 8 short camera files from the sample walk video (each from another point of the walk, half of
them mirrored) with the JFK speech under them, named with their start times over two days
(`20240202_090000.mp4`, see egodesk/media/starttime.py). Registers them in a scratch library, then runs
the ingest worker (`python -m egodesk.pipeline.worker`, what `egodesk import` starts) and times its
progress stream from the worker's start: a file is searchable once its parent-child and visual memory
stages are done; all memories are built when the worker ends. It uses only the library's `add` and the
worker's progress lines, so the same script measures an older checkout too (run it there with
PYTHONPATH set to that checkout: the line "code:" names the egodesk it ran).

    .venv/bin/python benchmarks/time_to_searchable.py [--seconds 4] [--llm llm-test] [--json FILE]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from clips import FAST, speaking_walk
from common import Report, add_output_args

import egodesk
from egodesk.core.types import Progress
from egodesk.pipeline.library import Library
from egodesk.pipeline.worker import read_progress

SEARCH_DONE = {"memory-parent", "memory-visual"}  # with these two a footage is found by every strategy
STARTS = [
    ("20240202", "090000"),
    ("20240202", "101500"),
    ("20240202", "133000"),
    ("20240202", "170000"),
    ("20240203", "083000"),
    ("20240203", "114500"),
    ("20240203", "150000"),
    ("20240203", "191500"),
]


def make_files(folder: Path, seconds: float) -> list[Path]:
    """8 distinct short recordings over two days: the walk from another offset each (every other one
    mirrored), the JFK speech under it."""
    out = []
    for n, (day, clock) in enumerate(STARTS):
        path = folder / f"{day}_{clock}.mp4"
        video = "hflip" if n % 2 else "null"
        seek = ("-ss", f"{(n * 0.6) % 4:.1f}")
        speaking_walk(path, "-vf", video, "-t", str(seconds), "-c:v", "libx264", *FAST, "-c:a", "aac", before=seek)
        out.append(path)
    return out


def run_worker(root: Path, env: dict[str, str]) -> tuple[dict[int, float], float, list[str]]:
    """Run the ingest worker to the end: (seconds until each footage was searchable, seconds until
    the worker ended, failures)."""
    done: dict[int, set[str]] = {}
    searchable: dict[int, float] = {}
    failed: list[str] = []
    started = time.perf_counter()

    def on_progress(event: Progress) -> None:
        if event.footage_id is None:
            return
        if event.message == "done" and event.stage in SEARCH_DONE:
            done.setdefault(event.footage_id, set()).add(event.stage)
            if done[event.footage_id] == SEARCH_DONE:
                searchable[event.footage_id] = time.perf_counter() - started
                print(f"  footage {event.footage_id} searchable at {searchable[event.footage_id]:.0f} s", flush=True)
        elif event.message.startswith("failed"):
            failed.append(f"{event.footage_id}/{event.stage}: {event.message}")

    worker = subprocess.Popen(
        [sys.executable, "-m", "egodesk.pipeline.worker", "--library", str(root)], stdout=subprocess.PIPE, text=True, env=env
    )
    read_progress(iter(worker.stdout.readline, ""), on_progress)
    worker.wait()
    return searchable, time.perf_counter() - started, failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=4.0, help="length of each of the 8 files")
    parser.add_argument("--llm", default="llm-test", help="the LLM role that builds records and atomic statements")
    add_output_args(parser)
    args = parser.parse_args()
    seconds = 3.0 if args.quick else args.seconds
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "EGODESK_LLM_MODEL": args.llm,
        "EGODESK_MEMORY_RECORDS": "true",
        "EGODESK_MEMORY_ATOMIC": "true",
    }
    os.environ.update(env)  # the library opened here reads the same settings as the worker
    print(f"code: {Path(egodesk.__file__).parent}; load average {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory(prefix="egodesk-tts-") as tmp:
        files = make_files(Path(tmp), seconds)
        library = Library(Path(tmp) / "library")
        added = library.add(files)
        assert len(added.added) == len(files) and not added.errors, added
        footage_seconds = sum(f.duration for f in library.footage())
        library.close()
        searchable, total, failed = run_worker(Path(tmp) / "library", env)
    if failed or len(searchable) != len(files):
        raise SystemExit(f"ingest did not finish cleanly: {failed or 'not every file became searchable'}")
    order = sorted(searchable.values())
    print("searchable after (s), in the order files became searchable: " + ", ".join(f"{s:.0f}" for s in order))
    report = Report("time_to_searchable")
    note = f"{len(files)} files, {footage_seconds:.0f} s of footage, {args.llm}"
    report.add("first file searchable", order[0], "s", note=note)
    report.add("every file searchable", order[-1], "s", note=note)
    report.add("all memories built", total, "s", note=note)
    report.finish(args.json)


if __name__ == "__main__":
    main()
