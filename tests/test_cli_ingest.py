"""The ingest CLI as a user runs it: import with a progress bar, list footage and clips, cancel a
background worker within 2 s and resume it."""

import json
import os
import subprocess
import sys
import time

import pytest

from egodesk.cli import main as cli_main
from egodesk.core.paths import LibraryPaths
from egodesk.pipeline.runner import running_worker
from egodesk.pipeline.worker import process_alive
from tests.conftest import ffmpeg


def egodesk(*args, env=None, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", "egodesk", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )


def test_import_wait_then_footage_and_clips(library, composite_clip, tmp_path):
    broken = tmp_path / "broken.mp4"
    broken.write_text("not a video")
    result = egodesk("import", str(composite_clip), str(broken), "--wait")
    assert result.returncode == 1  # one file was bad ...
    assert f"error: {broken}" in result.stderr and "Traceback" not in result.stderr
    assert "asr" in result.stderr  # the progress bars name the stages
    footage = json.loads(egodesk("footage", "--json").stdout)
    assert len(footage) == 1 and footage[0]["state"] == "indexed"  # ... the good one is fully indexed
    assert (library / "library.sqlite").exists()  # EGODESK_HOME is the library folder
    clips = json.loads(egodesk("clips", str(footage[0]["id"]), "--json").stdout)
    assert len(clips) == 1 and clips[0]["caption"] and clips[0]["tags"]
    assert "fellow Americans" in " ".join(t[3] for t in clips[0]["transcript"])
    assert egodesk("clips", "nonexistent").returncode == 2


def jobs():
    return json.loads(egodesk("jobs", "--json").stdout)


@pytest.mark.faults
def test_cancel_stops_the_worker_within_two_seconds_and_resume_finishes(library, composite_clip, tmp_path):
    longer = tmp_path / "DAY2_10000000_long.mp4"
    ffmpeg("-stream_loop", "5", "-i", str(composite_clip), "-t", "60", "-c", "copy", str(longer))
    assert egodesk("import", str(longer)).returncode == 0  # starts a background worker
    deadline = time.monotonic() + 120
    while not any(j["state"] == "running" and j["stage"] in ("asr", "keyframes", "ocr") for j in jobs()):
        assert time.monotonic() < deadline, jobs()
        time.sleep(0.3)
    pid = running_worker(LibraryPaths.at(library))
    started = time.monotonic()
    assert cli_main(["cancel"]) == 0  # in this process: the clock runs from the command, not an interpreter start
    elapsed = time.monotonic() - started
    assert elapsed < 2.0, elapsed  # the worker is gone within 2 s
    assert not process_alive(pid)
    states = {j["stage"]: j["state"] for j in jobs()}
    assert "cancelled" in states.values() and "running" not in states.values()
    assert running_worker(LibraryPaths.at(library)) is None  # no live worker holds the library
    result = egodesk("resume", "--wait")
    assert result.returncode == 0, result.stderr
    assert all(j["state"] == "done" for j in jobs())
