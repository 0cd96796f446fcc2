"""kill -9 in the middle of ingest stages, then restart: the library equals an uninterrupted run's."""

import os
import signal
import subprocess
import sys

import pytest
from sqlalchemy import select

from egodesk.memory.store import Caption, Clip, Footage, Job, Keyframe, Store, TranscriptSegment, Unit, Vector
from egodesk.pipeline.library import Library

pytestmark = pytest.mark.faults


def run_worker(root, kill_at: str | None = None) -> int:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("EGODESK_KILL_AT", None)
    if kill_at:
        env["EGODESK_KILL_AT"] = kill_at
    result = subprocess.run(
        [sys.executable, "-m", "egodesk.pipeline.worker", "--library", str(root)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return result.returncode


def snapshot(root) -> dict:
    """Everything ingest stores, without ids and clock times that legitimately differ between runs."""
    store = Store(root / "library.sqlite")
    with store.session() as s:
        clip_idx = dict(s.execute(select(Clip.id, Clip.idx)).all())
        snap = {
            "footage": [(f.content_hash, f.duration, f.has_audio, f.start_ts) for f in s.scalars(select(Footage))],
            "clips": [(c.idx, c.start_ts, c.end_ts) for c in s.scalars(select(Clip).order_by(Clip.idx))],
            "keyframes": sorted(
                (clip_idx[k.clip_id], k.idx, k.offset, str(k.labels), k.ocr_text, len(k.feature or b""))
                for k in s.scalars(select(Keyframe))
            ),
            "segments": [
                (t.idx, t.text, t.start_ts, t.end_ts)
                for t in s.scalars(select(TranscriptSegment).order_by(TranscriptSegment.idx))
            ],
            "captions": sorted((clip_idx[c.clip_id], c.text) for c in s.scalars(select(Caption))),
            "jobs": sorted((j.stage, j.state) for j in s.scalars(select(Job))),
            "units": sorted((u.kind, u.view, u.text, u.start_ts, u.end_ts) for u in s.scalars(select(Unit))),
            "vectors": sorted((v.space, len(v.data)) for v in s.scalars(select(Vector))),
        }
    store.close()
    return snap


def fresh_library(tmp_path, name, clip):
    library = Library(tmp_path / name)
    assert len(library.add([clip]).added) == 1
    library.close()
    return tmp_path / name


@pytest.fixture(scope="module")
def reference(tmp_path_factory, composite_clip):
    root = fresh_library(tmp_path_factory.mktemp("ref"), "lib", composite_clip)
    assert run_worker(root) == 0
    snap = snapshot(root)
    assert all(state == "done" for _, state in snap["jobs"]) and snap["segments"] and snap["captions"]
    return snap


@pytest.mark.parametrize(
    "kill_at", ["asr:commit", "asr:segment", "keyframes:commit", "captions:1", "captions:commit", "memory-parent:commit"]
)
def test_kill_then_resume_equals_uninterrupted(tmp_path, composite_clip, reference, kill_at):
    root = fresh_library(tmp_path, "lib", composite_clip)
    assert run_worker(root, kill_at) == -signal.SIGKILL  # it really died at that point
    interrupted = snapshot(root)
    stage = kill_at.split(":")[0]
    assert (stage, "running") in interrupted["jobs"]  # the stage was in flight and nothing of it committed
    assert run_worker(root) == 0
    assert snapshot(root) == reference
