"""One ingest writer per library, searchable first, LLM memories yield to questions: with real media,
the real pipeline and the tiny real LLM (llm-test)."""

import json
import os
import queue
import re
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing

import pytest

from egodesk.core.paths import LibraryPaths
from egodesk.core.stages import LLM_STAGES
from egodesk.gui import ops
from egodesk.gui.worker import StopRequested, WorkerContext
from egodesk.pipeline.asking import question_in_flight
from egodesk.pipeline.library import Library
from egodesk.pipeline.memory_stages import PAUSED
from egodesk.pipeline.runner import ATTACHED, running_worker
from tests.conftest import ffmpeg

SEARCH_STAGES = ("audio", "asr", "speakers", "keyframes", "faces", "ocr", "captions", "memory-parent", "memory-visual")


@pytest.fixture(scope="module")
def short_clips(tmp_path_factory, composite_clip):
    """Three 3.5 s parts of the composite clip (each with speech), named with their start times."""
    folder = tmp_path_factory.mktemp("short")
    out = []
    for n, start in enumerate((0.0, 3.5, 7.0)):
        path = folder / f"DAY1_1{n}000000_part{n}.mp4"
        ffmpeg(
            "-ss",
            str(start),
            "-t",
            "3.5",
            "-i",
            str(composite_clip),
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-c:a",
            "aac",
            str(path),
        )
        out.append(path)
    return out


def app_context(stop: threading.Event | None = None, on_event=None) -> WorkerContext:
    """The context the app's task runner gives an op, over in-process channels."""
    events: queue.Queue = queue.Queue()
    ctx = WorkerContext(events, stop or threading.Event())
    if on_event is not None:
        ctx.progress = on_event  # type: ignore[method-assign]
    return ctx


def cli(root, *args, **popen):
    return subprocess.Popen(
        [sys.executable, "-m", "egodesk", *args],
        env={**os.environ, "EGODESK_HOME": str(root)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


def wait_for(condition, what: str, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


# Ids written inside a unit's JSON meta ("keyframe_id": 14, "key": "frame:14") and the digest taken over them.
_META_IDS = [
    (re.compile(r'"(\w+_id)": \d+'), r'"\1": -'),
    (re.compile(r'"key": "(\w+):\d+"'), r'"key": "\1:-"'),
    (re.compile(r'"digest": "[0-9a-f]+"'), '"digest": "-"'),
]


def _normal(value, root):
    if not isinstance(value, str):
        return value
    value = value.replace(str(root), "<root>")
    for pattern, replacement in _META_IDS:
        value = pattern.sub(replacement, value)
    return value


def tables(root) -> dict:
    """Every table's rows without ids (columns, and ids inside JSON), clock times and saved-index
    bookkeeping, absolute paths into the library written relative to it: what two builds of the same
    files must share."""
    volatile = {"id", "updated_at", "imported_at", "built_at", "sha256", "file"}
    out = {}
    with closing(sqlite3.connect(root / "library.sqlite")) as con:
        names = [r[0] for r in con.execute("select name from sqlite_master where type='table' and name not like 'sqlite_%'")]
        # An FTS5 table's segments depend on the order its rows were written in: its rows are compared
        # through the table itself, not through the shadow tables that store them.
        fts = [r[0] for r in con.execute("select name from sqlite_master where sql like 'create virtual table%using fts5%'")]
        shadows = {f"{table}_{part}" for table in fts for part in ("data", "idx", "docsize", "config", "content")}
        for name in [n for n in names if n not in shadows]:
            cols = [r[1] for r in con.execute(f"pragma table_info({name})") if r[1] not in volatile and not r[1].endswith("_id")]
            rows = con.execute(f"select {', '.join(cols)} from {name}").fetchall()
            out[name] = sorted((tuple(_normal(v, root) for v in row) for row in rows), key=repr)
    return out


def job_rows(root) -> list[tuple[int, str, str, int]]:
    with closing(sqlite3.connect(f"file:{root / 'library.sqlite'}?mode=ro", uri=True)) as con:  # never creates it
        return con.execute("select footage_id, stage, state, attempts from job order by footage_id, id").fetchall()


def job_states(root) -> list[str]:
    """The states of the library's jobs; none while the CLI is still creating the database."""
    try:
        return [state for _, _, state, _ in job_rows(root)]
    except sqlite3.OperationalError:  # no file or no tables yet
        return []


def test_cli_and_app_import_at_once_build_what_one_writer_builds(tmp_path, short_clips):
    a, b, c = short_clips
    reference = Library(tmp_path / "single")
    assert len(reference.add([a, b, c]).added) == 3
    assert reference.process()["failed"] == 0
    reference.close()

    root = tmp_path / "two"
    command = cli(root, "import", str(a), str(b), "--wait")
    wait_for(lambda: running_worker(LibraryPaths.at(root)) is not None, "the CLI's worker")
    seen = []
    outcome = ops.import_paths(app_context(on_event=seen.append), str(root), [str(b), str(c)])  # the app's import op
    stdout, stderr = command.communicate(timeout=600)
    assert command.returncode == 0, stderr
    assert any(e.message == ATTACHED for e in seen)  # the app found the CLI's worker and followed it
    assert {e.stage for e in seen} >= {"asr", "captions"}  # ... with its progress
    assert outcome["failed"] == 0
    assert all(state == "done" and attempts <= 1 for _, _, state, attempts in job_rows(root)), job_rows(root)  # none ran twice
    two, single = tables(root), tables(tmp_path / "single")
    assert two.keys() == single.keys()
    for name in single:
        assert two[name] == single[name], name


def test_every_footage_is_searchable_before_any_llm_memory_starts(tmp_path, short_clips, monkeypatch):
    monkeypatch.setenv("EGODESK_MEMORY_RECORDS", "true")  # the atomic stage is scheduled alike (LLM_STAGES)
    library = Library(tmp_path / "lib")
    ids = library.add(short_clips).added
    events = []
    assert library.process(progress=events.append)["failed"] == 0
    started = [(e.footage_id, e.stage) for e in events if e.message == "started"]
    first_llm = min(i for i, (_, stage) in enumerate(started) if stage in LLM_STAGES)
    searchable = started[:first_llm]
    assert sorted(searchable) == sorted((f, s) for f in ids for s in SEARCH_STAGES)  # all of it, before any LLM stage
    assert [f for f, stage in searchable if stage == "audio"] == sorted(ids, reverse=True)  # newest import first
    assert sorted(started[first_llm:]) == sorted((f, s) for f in ids for s in LLM_STAGES)
    assert all(f.state == "indexed" and f.searchable for f in library.footage())
    library.close()


@pytest.mark.faults
def test_a_cancel_from_one_caller_leaves_the_other_callers_jobs_alone(tmp_path, composite_clip):
    root = tmp_path / "lib"
    longer = tmp_path / "DAY2_10000000_long.mp4"
    ffmpeg("-stream_loop", "2", "-i", str(composite_clip), "-t", "30", "-c", "copy", str(longer))
    owner = cli(root, "import", str(longer), "--wait")
    wait_for(lambda: "running" in job_states(root), "the CLI's worker to run a stage")

    stop = threading.Event()
    ctx = app_context(stop, on_event=lambda e: e.message == ATTACHED and stop.set())  # Cancel once attached
    with pytest.raises(StopRequested):
        ops.import_paths(ctx, str(root), [str(longer)])
    window_side = Library(root)
    assert window_side.mark_cancelled() == 0  # what the window does after a cancel: not the live worker's jobs
    window_side.close()
    assert "cancelled" not in job_states(root), job_states(root)
    # Between two of its stages no job runs for a moment: the worker goes on to the next, or has finished.
    wait_for(lambda: "running" in job_states(root) or owner.poll() is not None, "the CLI's worker to go on")

    _, stderr = owner.communicate(timeout=600)
    assert owner.returncode == 0, stderr
    assert all(state == "done" and attempts <= 1 for _, _, state, attempts in job_rows(root)), job_rows(root)


def test_llm_memories_wait_while_a_question_is_answered(tmp_path, short_clips, monkeypatch):
    monkeypatch.setenv("EGODESK_MEMORY_RECORDS", "true")
    library = Library(tmp_path / "lib")
    [footage_id] = library.add(short_clips[:1]).added
    events = []
    worker = threading.Thread(target=lambda: events.append(library.process(progress=events.append)))
    with question_in_flight(library.paths):
        worker.start()
        wait_for(lambda: any(getattr(e, "message", "") == PAUSED for e in events), "the records stage to pause")
        time.sleep(1.0)
        stages = {f.stages["memory-records"] for f in library.footage()}
        assert stages == {"running"}  # held between batches, not finished while the question runs
        assert not [e for e in events if getattr(e, "stage", "") == "imprint"]  # not one LLM batch ran
        assert library.footage()[0].searchable
    worker.join(timeout=300)
    assert not worker.is_alive()
    outcome = events[-1]
    assert outcome["failed"] == 0 and library.footage()[0].state == "indexed"
    assert [e for e in events[:-1] if e.stage == "imprint"]  # the batches ran once the question was answered
    library.close()


def test_the_progress_file_replays_for_an_attached_caller(tmp_path):
    """A caller that attaches late sees the events written before it came, whole lines only."""
    from egodesk.core.types import Progress
    from egodesk.pipeline.runner import _replay

    path = tmp_path / "worker.progress"
    path.write_text(
        json.dumps({"stage": "asr", "done": 1, "total": 4, "footage_id": 3, "message": ""}) + "\n" + '{"stage": "ocr", "do'
    )
    seen: list[Progress] = []
    offset = _replay(path, 0, seen.append)
    assert seen == [Progress("asr", 1, 4, 3, "")]
    with open(path, "a") as handle:
        handle.write('ne": 2, "total": 2, "footage_id": 3, "message": "done"}\n')
    _replay(path, offset, seen.append)
    assert seen[-1] == Progress("ocr", 2, 2, 3, "done")
    path.write_text(json.dumps({"stage": "audio", "done": 0, "total": 0, "footage_id": 9, "message": "started"}) + "\n")
    _replay(path, 10_000, seen.append)  # a new writer started the file afresh: read it from the start
    assert seen[-1].footage_id == 9
