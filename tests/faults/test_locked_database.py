"""Another program holds the library database's write lock: the worker and the CLI wait the busy
timeout, then stop saying the library is busy (no traceback); readers go on working meanwhile; once
the lock is released the same worker run completes the library exactly."""

from __future__ import annotations

import sqlite3
import sys

import pytest

from egodesk.pipeline.library import Library
from tests.faults.harness import assert_same, fault_env, job_states, run, snapshot, worker

pytestmark = pytest.mark.faults

BUSY_MS = 1500


def test_writer_waits_then_says_busy_and_succeeds_after_release(tmp_path, reference, llm_server):
    root = reference.copy_at("captions:start", tmp_path / "lib")
    before = snapshot(root)
    env = fault_env(llm_server.url, EGODESK_BUSY_TIMEOUT_MS=str(BUSY_MS))
    holder = sqlite3.connect(root / "library.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # held by "another program" until released below
    try:
        ran = worker(root, env)
        assert ran.code == 1 and "the library is busy" in ran.out, ran
        assert "database is locked" in ran.err and "Traceback" not in ran.err, ran
        assert BUSY_MS / 1000 <= ran.seconds < 60, ran  # it waited the busy timeout, then gave up

        cli = run([sys.executable, "-m", "egodesk", "--library", str(root), "resume"], env)
        assert cli.code == 1 and "egodesk: the library is busy" in cli.err and "Traceback" not in cli.err, cli

        library = Library(root)  # readers still work
        try:
            assert [(f.id, f.state) for f in library.footage()] == [(1, "indexing")]
            assert len(library.clips(1)) == 2
        finally:
            library.close()
    finally:
        holder.rollback()
        holder.close()
    assert_same(snapshot(root), before, "after the lock vs before it")  # nothing written, nothing lost

    ran = worker(root, fault_env(llm_server.url))
    assert ran.code == 0, ran
    assert {state for state, _ in job_states(root).values()} == {"done"}
    assert_same(snapshot(root), reference.final, "after the lock was released vs the uninterrupted run")
