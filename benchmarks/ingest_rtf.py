"""Ingest speed: real-time factor (processing seconds / footage seconds) per stage and overall.

Makes an N-minute footage by looping the sample composite clip (walk video + JFK speech), imports it
into a scratch library and runs every ingest stage with the default models, timing each stage.
Goal from the issue: transcripts + captions for 1 hour of footage in <= 15 minutes on 2 cores (RTF <= 0.25).

    .venv/bin/python benchmarks/ingest_rtf.py [--minutes 10] [--quick] [--asr asr|asr-lite]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
MEDIA = REPO.parent / "shared" / "media"


def make_footage(folder: Path, minutes: float) -> Path:
    composite = folder / "composite.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(MEDIA / "gopro_max-heromode.mp4"), "-i", str(MEDIA / "whisper_jfk.flac"),
                    "-map", "0:v:0", "-map", "1:a:0", "-c:v", "copy", "-c:a", "aac", "-shortest", str(composite)], check=True)
    looped = folder / f"DAY1_09000000_loop{minutes:g}min.mp4"
    loops = int(minutes * 60 / 10.0) + 1
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-stream_loop", str(loops), "-i", str(composite), "-t", str(minutes * 60),
                    "-c", "copy", str(looped)], check=True)
    return looped


def run(minutes: float, asr_model: str) -> dict[str, float]:
    from egodesk.pipeline.library import Library

    with tempfile.TemporaryDirectory(prefix="egodesk-rtf-") as tmp:
        footage = make_footage(Path(tmp), minutes)
        library = Library(Path(tmp) / "lib")
        # The goal covers transcripts and captions; the LLM-built memories (records, atomic statements)
        # are measured on their own (tests/memory, benchmarks/memory_size.py).
        library.save_settings(library.settings.model_copy(update={"asr_model": asr_model, "memory_records": False,
                                                                  "memory_atomic": False}))
        t0 = time.perf_counter()
        report = library.add([footage])
        timings = {"probe+plan": time.perf_counter() - t0}
        duration = library.footage()[0].duration
        started: dict[str, float] = {}

        def on_progress(event):
            if event.message == "started":
                started[event.stage] = time.perf_counter()
            elif event.message == "done":
                timings[event.stage] = time.perf_counter() - started[event.stage]

        outcome = library.process(progress=on_progress)
        total = time.perf_counter() - t0
        assert report.added and outcome["failed"] == 0, library.job_rows()
        library.close()
    print(f"footage: {duration / 60:.1f} min ({asr_model})")
    print(f"{'stage':<16}{'seconds':>10}{'RTF':>10}")
    for stage, seconds in timings.items():
        print(f"{stage:<16}{seconds:>10.1f}{seconds / duration:>10.3f}")
    print(f"{'whole ingest':<16}{total:>10.1f}{total / duration:>10.3f}   (goal <= 0.25)")
    return {"rtf": total / duration, **{f"rtf_{k}": v / duration for k, v in timings.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--quick", action="store_true", help="2 minutes of footage")
    parser.add_argument("--asr", default="asr", choices=["asr", "asr-lite"])
    args = parser.parse_args()
    run(2.0 if args.quick else args.minutes, args.asr)


if __name__ == "__main__":
    main()
