"""`egodesk watch run` as a person leaves it running: 20 files (videos, photos, voice notes) copied into the
watched folder one after another, the watcher killed with SIGKILL mid-way (inside a file's registration, then again inside
indexing), restarted, and in the end every file imported once and indexed, none twice. One file is
written slowly, in pieces, while it runs: it is imported whole, never half-written."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import func, select

from egodesk.media.hashing import content_hash
from egodesk.memory.store import Caption, Clip, Footage, Job, Store, TranscriptSegment
from tests.conftest import JFK_AUDIO, WALK_VIDEO, ffmpeg

pytestmark = pytest.mark.faults

FILES = 20
VIDEOS = 14  # and 3 photos and 3 voice notes
# Small and fast: one frame a clip, the fast speech model; real models and real media all the same.
FAST = {
    "EGODESK_WATCH_INTERVAL_S": "0.3",
    "EGODESK_ASR_MODEL": "asr-lite",
    "EGODESK_THREADS": "1",
    "EGODESK_FRAMES_PER_CLIP": "2",
    "EGODESK_KEYFRAMES_PER_CLIP": "1",
    "PYTHONUNBUFFERED": "1",
}


@pytest.fixture(scope="module")
def camera_files(tmp_path_factory) -> list[Path]:
    """20 different files as a camera and a phone leave them: 14 one-second videos (the walk and the speech
    looped, cut in one pass), 3 photos (frames of the walk) and 3 voice notes (cuts of the speech)."""
    d = tmp_path_factory.mktemp("camera")
    ffmpeg(
        *("-stream_loop", "1", "-i", str(WALK_VIDEO), "-stream_loop", "1", "-i", str(JFK_AUDIO)),
        *("-map", "0:v:0", "-map", "1:a:0", "-t", str(VIDEOS), "-vf", "scale=160:90", "-r", "10"),
        *("-c:v", "libx264", "-preset", "ultrafast", "-force_key_frames", "expr:gte(t,n_forced)", "-c:a", "aac"),
        *("-f", "segment", "-segment_time", "1", "-reset_timestamps", "1", str(d / "GX01%04d.MP4")),
    )
    for i in range(3):
        ffmpeg("-ss", str(2 * i + 1), "-i", str(WALK_VIDEO), "-frames:v", "1", "-vf", "scale=320:180", str(d / f"IMG_000{i}.JPG"))
        ffmpeg("-ss", str(3 * i), "-i", str(JFK_AUDIO), "-t", "1", str(d / f"Voice 00{i}.wav"))
    files = sorted(p for p in d.iterdir())
    assert len(files) == FILES and len({content_hash(f) for f in files}) == FILES
    return files


def start_watcher(root: Path, log: Path, **extra: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "EGODESK_KILL_AT"}
    env.update(FAST, EGODESK_HOME=str(root), **extra)
    with open(log, "ab") as out:
        # Ctrl-C as from a terminal: Python turns SIGINT into KeyboardInterrupt only when the process did not
        # start with it ignored, and a test runner's process may hand an ignored SIGINT down.
        return subprocess.Popen(
            [sys.executable, "-m", "egodesk", "watch", "run"],
            stdout=out,
            stderr=out,
            env=env,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )


def counts(root: Path) -> dict:
    store = Store(root / "library.sqlite")
    try:
        with store.session() as s:
            return {
                "paths": Counter(s.scalars(select(Footage.path))),
                "hashes": Counter(s.scalars(select(Footage.content_hash))),
                "unfinished": s.scalar(select(func.count()).select_from(Job).where(Job.state != "done")),
                "clips": s.scalar(select(func.count()).select_from(Clip)),
                "captions": s.scalar(select(func.count()).select_from(Caption)),
                "segments": Counter(s.scalars(select(TranscriptSegment.footage_id))),
            }
    finally:
        store.close()


def wait_for(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := check():
            return result
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}")


def write_slowly(data: bytes, target: Path, pieces: int, gap_s: float) -> None:
    """A copy that takes several scans: each piece appended, flushed, then a pause shorter than a scan."""
    with open(target, "wb") as out:
        for i in range(pieces):
            out.write(data[i * len(data) // pieces : (i + 1) * len(data) // pieces])
            out.flush()
            time.sleep(gap_s)


def test_files_copied_in_while_killed_twice_are_each_imported_once(tmp_path, camera_files):
    root, card, log = tmp_path / "library", tmp_path / "card" / "DCIM" / "100GOPRO", tmp_path / "watch.log"
    card.mkdir(parents=True)
    added = subprocess.run(
        [sys.executable, "-m", "egodesk", "watch", "add", str(tmp_path / "card")],
        env={**os.environ, "EGODESK_HOME": str(root)},
        capture_output=True,
        text=True,
    )
    assert added.returncode == 0, added.stderr
    slow, quick = camera_files[0], camera_files[1:]

    # 1. Killed inside the 6th file's registration (its transaction not committed), while files keep coming.
    watcher = start_watcher(root, log, EGODESK_KILL_AT="probe:commit#6")
    writer = threading.Thread(target=write_slowly, args=(slow.read_bytes(), card / slow.name, 8, 0.1))
    writer.start()
    for file in quick:
        shutil.copy(file, card / file.name)
        time.sleep(0.15)
    writer.join()
    assert watcher.wait(timeout=120) == -signal.SIGKILL, log.read_text()[-3000:]
    first = counts(root)
    assert sum(first["paths"].values()) == 5 and max(first["paths"].values()) == 1  # the 6th left no trace

    # 2. Restarted, and killed again inside indexing (the second captions stage it starts).
    watcher = start_watcher(root, log, EGODESK_KILL_AT="captions:start#2")
    assert watcher.wait(timeout=180) == -signal.SIGKILL, log.read_text()[-3000:]

    # 3. Restarted: everything arrives, once, and is indexed.
    watcher = start_watcher(root, log)
    try:
        final = wait_for(
            lambda: (c := counts(root)) and sum(c["paths"].values()) == FILES and c["unfinished"] == 0 and c,
            timeout=240,
            what="all 20 files imported and indexed",
        )
    finally:
        watcher.send_signal(signal.SIGINT)  # Ctrl-C
        try:
            code = watcher.wait(timeout=120)  # a stage under way finishes first; the full suite's load slows it
        except subprocess.TimeoutExpired:
            watcher.kill()
            watcher.wait()
            pytest.fail("the watcher did not stop on Ctrl-C:\n" + log.read_text()[-3000:])
    assert code == 0, log.read_text()[-3000:]
    assert final["paths"] == Counter({str((card / f.name).resolve()): 1 for f in camera_files})
    assert final["hashes"] == Counter({content_hash(f): 1 for f in camera_files})  # the slow one whole, too
    assert final["clips"] == FILES and final["captions"] == FILES  # one clip each, captioned once
    assert "Traceback" not in log.read_text() and "error:" not in log.read_text()
