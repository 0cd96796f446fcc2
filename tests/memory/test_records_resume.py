"""kill -9 during record extraction, then restart: the rows equal an uninterrupted run's, none lost or
repeated (each batch commits its records, entries, prototypes and progress mark in one transaction)."""

import json
import os
import signal
import subprocess
import sys

import pytest
from sqlalchemy import select

from egodesk.core.settings import Settings
from egodesk.memory.indices import IndexManager
from egodesk.memory.record_compression import build_records
from egodesk.memory.record_tables import BuildProgress, EventPrototype, MemoryEntryState
from egodesk.memory.store import Store, Unit, Vector
from egodesk.perception.embedder import make_embedder
from egodesk.perception.llm import make_llm
from egodesk.pipeline.textimport import import_memory_jsonl
from tests.conftest import REPO

pytestmark = pytest.mark.faults

NARRATIONS = ["I take plate.", "I put down plate.", "I open fridge.", "I take milk."]
BATCH = 2


def build(root, batch: int = BATCH) -> None:
    """The build under test; the child process runs exactly this (printing one line per batch)."""
    settings = Settings(llm_model="llm-test", threads=1, records_batch_size=batch)
    store = Store(root / "library.sqlite")
    report = build_records(
        store,
        IndexManager(store, root / "indices"),
        make_embedder(model="embedder"),
        make_llm(settings, n_ctx=2048),
        1,
        settings,
        progress=lambda p: print("BATCH", p.done, flush=True),
    )
    store.close()
    print("DONE", report["clips_done"], flush=True)


def make_library(root, memory_jsonl):
    root.mkdir()
    store = Store(root / "library.sqlite")
    assert import_memory_jsonl(store, memory_jsonl).footage_ids == [1]
    store.close()
    return root


def child(root) -> subprocess.Popen:
    code = f"from pathlib import Path; from tests.memory.test_records_resume import build; build(Path({str(root)!r}))"
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=REPO, env={**os.environ, "PYTHONUNBUFFERED": "1"}
    )


def snapshot(root) -> dict:
    store = Store(root / "library.sqlite")
    with store.session() as s:
        snap = {
            "units": [
                (u.id, u.kind, u.clip_id, u.parent_id, u.start_ts, u.end_ts, u.text, json.dumps(u.meta, sort_keys=True))
                for u in s.scalars(select(Unit).order_by(Unit.id))
            ],
            "vectors": [(v.unit_id, v.space, v.data) for v in s.scalars(select(Vector).order_by(Vector.unit_id, Vector.space))],
            "prototypes": [
                (p.seq, p.count, p.last_seen, p.context_sum)
                for p in s.scalars(select(EventPrototype).order_by(EventPrototype.seq))
            ],
            "entries": [(e.unit_id, e.seq, e.count, e.event_sum, e.context_sum) for e in s.scalars(select(MemoryEntryState))],
            "progress": [(p.builder, p.last_idx, p.batches, p.state) for p in s.scalars(select(BuildProgress))],
        }
    store.close()
    return snap


def test_sigkill_mid_extraction_then_resume_equals_uninterrupted(tmp_path):
    memory = tmp_path / "memory.jsonl"
    memory.write_text(
        "".join(
            json.dumps(
                {
                    "id": str(i),
                    "source": "k",
                    "start": f"2020-01-01T09:00:{2 * i:02d}",
                    "end": f"2020-01-01T09:00:{2 * i + 1:02d}",
                    "kind": "narration",
                    "text": t,
                }
            )
            + "\n"
            for i, t in enumerate(NARRATIONS)
        )
    )
    reference = make_library(tmp_path / "ref", memory)
    build(reference)  # uninterrupted, in this process

    killed = make_library(tmp_path / "killed", memory)
    proc = child(killed)
    assert proc.stdout.readline().split() == ["BATCH", str(BATCH)]  # one batch committed, the next in flight
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=60) == -signal.SIGKILL
    proc.stdout.close()
    partial = snapshot(killed)
    assert [p[1:3] for p in partial["progress"]] == [(BATCH - 1, 1)]  # last clip idx done, batches done
    assert {u[2] for u in partial["units"] if u[1] == "record"} <= set(range(1, 1 + BATCH))  # only batch 1's clips

    resumed = child(killed)
    out = resumed.communicate(timeout=600)[0].split("\n")
    assert resumed.returncode == 0
    assert out[0] == f"BATCH {2 * BATCH}" and out[-2] == f"DONE {len(NARRATIONS) - BATCH}"
    assert snapshot(killed) == snapshot(reference)
