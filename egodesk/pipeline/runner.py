"""The one way to index a library: `run`, called by the CLI's worker process (`worker.py`) and by the
app's import task (`gui/ops.py`, through `Library.process`) alike, under one per-library writer lock.

Whoever holds the lock (an exclusive flock on `worker.pid`, which holds its pid for `egodesk cancel`)
is the library's only ingest writer: it alone puts jobs a dead worker left "running" back in line,
and it appends every progress event to `logs/worker.progress`. A second caller does not run a second
pipeline: it attaches, replaying and then following that file until the lock is free, then takes the
lock and indexes what is left (footage it registered after the other's last look). A person who
imports in the app while `egodesk import` runs expects their files to be indexed and to see it happen,
not a refusal to retry or a silent wait; and the running worker picks new footage up by itself, newest
first. The lock dies with its process (flock), so a crashed or killed worker never leaves it held.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import TextIO

from egodesk.core.paths import LibraryPaths
from egodesk.core.settings import Settings
from egodesk.core.types import Progress
from egodesk.memory.store import Store

FOLLOW_POLL_S = 0.2
ATTACHED = "another egodesk process is indexing this library: showing its progress"


def pid_file(paths: LibraryPaths) -> Path:
    return paths.root / "worker.pid"


def progress_file(paths: LibraryPaths) -> Path:
    return paths.logs / "worker.progress"


@contextmanager
def worker_lock(paths: LibraryPaths) -> Iterator[bool]:
    """Yields True when this process now holds the library's writer lock (never waits for it)."""
    paths.root.mkdir(parents=True, exist_ok=True)
    with open(pid_file(paths), "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield True
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)


def wait_until_no_writer(paths: LibraryPaths, timeout_s: float = 5.0) -> bool:
    """After ending a worker: True once no process holds the writer lock. A killed process's main thread
    shows as a zombie while its other threads (a model call) are still being torn down, holding the
    lock's file open; its jobs may be marked cancelled only after that."""
    deadline = time.monotonic() + timeout_s
    while running_worker(paths) is not None:
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def running_worker(paths: LibraryPaths) -> int | None:
    """The pid of the process holding the library's writer lock, if any (-1: held, its pid not yet
    written: a writer that took the lock this instant)."""
    path = pid_file(paths)
    if not path.exists():
        return None
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            for _ in range(50):
                handle.seek(0)
                text = handle.read().strip()
                if text.isdigit():
                    return int(text)
                time.sleep(0.01)
            return -1
        fcntl.flock(handle, fcntl.LOCK_UN)
    return None


def run(
    store: Store,
    paths: LibraryPaths,
    settings: Settings,
    progress: Callable[[Progress], None] = lambda p: None,
    should_stop: Callable[[], bool] = lambda: False,
    retry_failed: bool = False,
) -> dict[str, int]:
    """Index every unfinished stage of the library, as its one writer or attached to the one running.
    Returns this caller's own counts by outcome; a stop while attached leaves the other's jobs alone."""
    from egodesk.pipeline.ingest import process
    from egodesk.pipeline.jobs import recover_orphans

    while True:
        with worker_lock(paths) as mine:
            if mine:
                recover_orphans(store)  # safe only here: holding the lock proves their worker is gone
                with _ProgressLog(progress_file(paths), progress) as tee:
                    return process(store, paths, settings, tee, should_stop, retry_failed)
        progress(Progress("worker", 0, 0, None, ATTACHED))
        if not _follow(paths, progress, should_stop):
            return {"done": 0, "failed": 0, "cancelled": 0}


class _ProgressLog:
    """The writer's progress callback: passes each event on and appends it to the progress file for
    attached callers. A file that cannot be written (a full disk) only costs them the events."""

    def __init__(self, path: Path, progress: Callable[[Progress], None]):
        self.path, self.progress = path, progress
        self.handle: TextIO | None = None

    def __enter__(self) -> _ProgressLog:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.handle = open(self.path, "w", encoding="utf-8")
        except OSError:
            self.handle = None
        return self

    def __call__(self, event: Progress) -> None:
        if self.handle is not None:
            try:
                self.handle.write(json.dumps(asdict(event)) + "\n")
                self.handle.flush()
            except OSError:
                pass
        self.progress(event)

    def __exit__(self, *exc) -> None:
        if self.handle is not None:
            try:
                self.handle.close()
            except OSError:
                pass


def _follow(paths: LibraryPaths, progress: Callable[[Progress], None], should_stop: Callable[[], bool]) -> bool:
    """Replay and follow the running writer's progress until it lets the lock go (True) or this
    caller asks to stop (False)."""
    offset = 0
    while True:
        alive = running_worker(paths) is not None
        offset = _replay(progress_file(paths), offset, progress)
        if not alive:
            return True
        if should_stop():
            return False
        time.sleep(FOLLOW_POLL_S)


def _replay(path: Path, offset: int, progress: Callable[[Progress], None]) -> int:
    """Emit the whole lines written past `offset`; returns the new offset (0 again when a new writer
    started the file afresh)."""
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size < offset:
                offset = 0
            handle.seek(offset)
            data = handle.read()
    except FileNotFoundError:
        return 0
    complete = data[: data.rfind(b"\n") + 1]
    for line in complete.splitlines():
        try:
            progress(Progress(**json.loads(line)))
        except (ValueError, TypeError):
            continue
    return offset + len(complete)
