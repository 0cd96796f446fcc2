"""A disk that fills up during indexing: the stage fails saying the disk is full, the library stays
readable with everything it held before, and once space is freed a resume completes it exactly.

The real case runs the library on a small tmpfs that the test fills while the worker is stopped at
the start of the keyframes stage (thumbnails and database writes then meet ENOSPC); where mounting is
not allowed it is skipped and the injected cases (EGODESK_ENOSPC_AT: OSError(ENOSPC) at a write point)
stand in: the keyframes commit and an index file save.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from egodesk.pipeline.library import Library
from tests.faults.harness import assert_same, fault_env, job_states, snapshot, worker

pytestmark = pytest.mark.faults


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(
            f"cannot mount a small tmpfs here ({done.stderr.strip() or done.returncode}); the injected cases cover ENOSPC"
        )
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=True)


def fill(folder: Path) -> Path:
    """Take every free byte of the file system holding `folder`."""
    filler = folder / "filler"
    handle = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        for size in (1 << 20, 1 << 16, 1 << 12, 1 << 9, 1):
            try:
                while os.write(handle, b"\0" * size):
                    pass
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
    finally:
        os.close(handle)
    return filler


def stored(snap: dict) -> dict:
    """The rows and indices, but the job rows (whose state is the point) and the files (a failed stage
    may leave files it wrote before its commit failed, which its rerun overwrites)."""
    return {k: v for k, v in snap.items() if k not in ("job", "files")}


def check_usable_and_intact(root: Path, before: dict, stage: str) -> None:
    """Readable, consistent, everything stored before still there; the stage failed saying why (or,
    when even that could not be written, was left running for the next worker)."""
    with sqlite3.connect(root / "library.sqlite") as con:
        assert con.execute("pragma integrity_check").fetchone()[0] == "ok"
    after = snapshot(root)
    assert_same(stored(after), stored(before), "after the full disk vs before it")
    assert set(before["files"]) <= set(after["files"])
    state, error = job_states(root)[stage]
    assert state == "running" or (state == "failed" and "disk is full" in error), (state, error)
    library = Library(root)
    try:
        assert [f.id for f in library.footage()] == [1]
    finally:
        library.close()


def test_real_full_disk_during_keyframes(small_disk, reference, llm_server):
    root = reference.copy_at("keyframes:start", small_disk / "lib")
    before = snapshot(root)
    filled: list[Path] = []
    ran = worker(
        root, fault_env(llm_server.url, EGODESK_STOP_AT="keyframes:start"), on_stop=lambda: filled.append(fill(small_disk))
    )
    assert filled, ran
    assert ran.code in (0, 1) and "disk is full" in ran.out + ran.err and "Traceback" not in ran.err, ran
    check_usable_and_intact(root, before, "keyframes")

    filled[0].unlink()  # space freed: resume
    ran = worker(root, fault_env(llm_server.url), retry_failed=True)
    assert ran.code == 0, ran
    assert_same(snapshot(root), reference.final, "resumed after the full disk vs the uninterrupted run")


@pytest.mark.parametrize(
    "start, point, stage",
    [
        ("keyframes:start", "keyframes:commit", "keyframes"),  # the stage's rows in its open transaction
        ("memory-parent:start", "index-save:caption", "memory-parent"),  # an index file, its units committed
    ],
)
def test_injected_enospc(tmp_path, reference, llm_server, start, point, stage):
    root = reference.copy_at(start, tmp_path / "lib")
    before = snapshot(root) if point.endswith(":commit") else snapshot(reference.copies[point])
    ran = worker(root, fault_env(llm_server.url, EGODESK_ENOSPC_AT=point))
    assert ran.code == 0 and "failed: the disk is full" in ran.out, ran
    assert job_states(root)[stage][0] == "failed"
    check_usable_and_intact(root, before, stage)

    ran = worker(root, fault_env(llm_server.url), retry_failed=True)
    assert ran.code == 0, ran
    assert_same(snapshot(root), reference.final, f"resumed after ENOSPC at {point} vs the uninterrupted run")
