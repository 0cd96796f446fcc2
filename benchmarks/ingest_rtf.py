"""Ingest speed and memory: real-time factor (processing seconds / footage seconds) per stage and tier,
and the peak RSS of the processes a user runs: the ingest worker and the GUI.

Makes an N-minute footage by looping the sample composite clip (walk video + JFK speech). For each
ASR tier it imports the footage into a scratch library and runs the real ingest worker
(`python -m egodesk.pipeline.worker`, what `egodesk import` and the GUI start) in a child process,
timing each stage from the worker's progress stream and reading the worker's peak RSS from the
kernel when it exits (wait4). The LLM memory builders (records, atomic statements) are off unless
`--llm TIER` turns them on with that model (their build time per tier is benchmarks/memory_build.py's
subject). The captioner is the default `describe`: the `vlm` and `server` captioners need a model
the user adds, so there is no other captioner tier to measure offline. Finally the GUI is started
offscreen on the last library for a few seconds and its peak RSS read from /proc.
Goal from the issue: transcripts + captions for 1 hour of footage in <= 15 minutes on 2 cores (RTF <= 0.25).

    .venv/bin/python benchmarks/ingest_rtf.py [--minutes 10] [--asr asr,asr-lite] [--llm llm-fast] [--no-gui]
        [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from clips import WHOLE_WALK_SPOKEN, ffmpeg, speaking_walk
from common import RTF_GOAL, Report, add_output_args

from egodesk.core.stages import LLM_STAGES
from egodesk.core.types import Progress
from egodesk.pipeline.library import Library
from egodesk.pipeline.worker import read_progress

GUI_SECONDS = 8.0


def make_footage(folder: Path, minutes: float) -> Path:
    composite = speaking_walk(folder / "composite.mp4", *WHOLE_WALK_SPOKEN)
    looped = folder / f"DAY1_09000000_loop{minutes:g}min.mp4"
    loops = int(minutes * 60 / 10.0) + 1
    ffmpeg("-stream_loop", str(loops), "-i", str(composite), "-t", str(minutes * 60), "-c", "copy", str(looped))
    return looped


def run_worker(root: Path) -> tuple[dict[str, float], list[str], float, float]:
    """Run the ingest worker on a library to the end: (seconds per finished stage, failed stages,
    total seconds, peak RSS in MB). A failed stage is reported, not fatal: the peak RSS still counts."""
    started: dict[str, float] = {}
    timings: dict[str, float] = {}
    failed: list[str] = []

    def on_progress(event: Progress) -> None:
        if event.message == "started":
            started[event.stage] = time.perf_counter()
        elif event.message == "done":
            timings[event.stage] = time.perf_counter() - started[event.stage]
        elif event.message.startswith("failed"):
            print(f"stage {event.stage} {event.message}", flush=True)
            failed.append(event.stage)

    t0 = time.perf_counter()
    worker = subprocess.Popen(
        [sys.executable, "-m", "egodesk.pipeline.worker", "--library", str(root)],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    read_progress(iter(worker.stdout.readline, ""), on_progress)
    worker.stdout.close()
    _, status, usage = os.wait4(worker.pid, 0)  # the child's own rusage: its peak RSS, not ours
    worker.returncode = os.waitstatus_to_exitcode(status)
    if worker.returncode != 0:
        raise RuntimeError(f"the worker exited with {worker.returncode}")
    return timings, failed, time.perf_counter() - t0, usage.ru_maxrss / 1024


def gui_peak_rss(root: Path, seconds: float = GUI_SECONDS) -> float:
    """Peak RSS (MB) of the GUI opened offscreen on a library, after `seconds` of running."""
    env = {**os.environ, "EGODESK_HOME": str(root), "QT_QPA_PLATFORM": "offscreen", "QT_API": "pyside6"}
    gui = subprocess.Popen(
        [sys.executable, "-m", "egodesk"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        time.sleep(seconds)
        if gui.poll() is not None:
            raise RuntimeError(f"the GUI exited early with {gui.returncode}")
        status = Path(f"/proc/{gui.pid}/status").read_text()
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) / 1024
    finally:
        gui.terminate()
        gui.wait(timeout=30)


def ingest(report: Report, folder: Path, footage: Path, asr: str, llm: str | None) -> Path:
    tier = asr + (f" + {llm}" if llm else "")
    library = Library(folder / f"lib-{asr}-{llm or 'nollm'}")
    updates = {"asr_model": asr, "memory_records": bool(llm), "memory_atomic": bool(llm), "threads": 2}
    if llm:
        updates["llm_model"] = llm
    library.save_settings(library.settings.model_copy(update=updates))
    t0 = time.perf_counter()
    added = library.add([footage])
    plan = time.perf_counter() - t0
    duration = library.footage()[0].duration
    library.close()
    assert added.added, added.errors
    timings, failed, total, rss = run_worker(library.paths.root)
    print(
        f"footage {duration / 60:.1f} min, tier {tier}: whole ingest {plan + total:.1f} s, worker peak RSS {rss:.0f} MB",
        flush=True,
    )
    report.add(f"RTF probe+plan [{tier}]", plan / duration, "x real time")
    for stage, seconds in timings.items():
        if llm or stage not in LLM_STAGES:
            report.add(f"RTF {stage} [{tier}]", seconds / duration, "x real time")
    report.add(f"RTF worker start-up, outside stages [{tier}]", (total - sum(timings.values())) / duration, "x real time")
    report.add(
        f"RTF whole ingest [{tier}]",
        (plan + total) / duration,
        "x real time",
        None if llm else RTF_GOAL,  # the goal: without LLM memories
        note=f"{round(duration / 60, 1):g} min of footage",
    )
    report.add(f"worker peak RSS [{tier}]", rss, "MB", note=f"failed: {', '.join(failed)}" if failed else "")
    return library.paths.root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, help="footage length (default 10; quick 1)")
    parser.add_argument("--asr", default="asr,asr-lite", help="ASR tiers, comma separated")
    parser.add_argument(
        "--llm", choices=["llm-test", "llm-fast", "llm-quality"], help="also build the LLM memories with this model"
    )
    parser.add_argument("--no-gui", action="store_true", help="skip the GUI's RSS")
    add_output_args(parser)
    args = parser.parse_args(argv)
    minutes = args.minutes or (1.0 if args.quick else 10.0)
    report = Report("ingest")
    with tempfile.TemporaryDirectory(prefix="egodesk-rtf-") as tmp:
        footage = make_footage(Path(tmp), minutes)
        for asr in args.asr.split(","):
            root = ingest(report, Path(tmp), footage, asr, args.llm)
        if not args.no_gui:
            report.add("GUI peak RSS (library open, idle)", gui_peak_rss(root), "MB")
    report.finish(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
