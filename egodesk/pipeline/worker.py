"""The ingest worker process the CLI starts: `python -m egodesk.pipeline.worker --library DIR`.

Runs `runner.run` (the entry point the app's import task runs too, under the same per-library writer
lock) until no unfinished stage is left, printing progress as JSON lines on stdout. SIGTERM keeps its
default action (end at once, even inside a model call). Ending this process at any moment is safe:
every stage commits whole, and the next lock holder puts jobs left "running" back to "pending".
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict

from egodesk.core.paths import LibraryPaths
from egodesk.core.types import Progress

CANCEL_GRACE_S = 1.0


def start_worker(paths: LibraryPaths, detached: bool) -> subprocess.Popen:
    """Start a worker for the library; detached ones outlive the caller and log to the library."""
    cmd = [sys.executable, "-m", "egodesk.pipeline.worker", "--library", str(paths.root)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if detached:
        paths.logs.mkdir(parents=True, exist_ok=True)
        log = open(paths.logs / "worker.out", "ab")
        return subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, start_new_session=True
        )
    # stderr is the caller's own: a pipe nobody reads would stall the worker once it held 64 KB.
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=None, stdin=subprocess.DEVNULL, text=True, env=env)


def stop_process(pid: int, grace_s: float = CANCEL_GRACE_S) -> bool:
    """SIGTERM, then SIGKILL after the grace period: a cancel never waits on a model call."""
    if pid <= 0:  # never a process group or every process
        return False
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if _reap(pid) or not process_alive(pid):
            return True
        time.sleep(0.02)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _reap(pid, block=True)
    return True


def process_alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie waiting for a parent that is not us to reap it."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def _reap(pid: int, block: bool = False) -> bool:
    try:
        done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
        return done == pid
    except ChildProcessError:  # not our child: nothing to reap
        return False


def read_progress(lines: Iterator[str], on_progress: Callable[[Progress], None]) -> None:
    for line in lines:
        try:
            on_progress(Progress(**json.loads(line)))
        except (ValueError, TypeError):
            continue


def main(argv: list[str] | None = None) -> int:
    from egodesk.core.logging_setup import setup_logging
    from egodesk.core.settings import Settings
    from egodesk.memory.store import Store
    from egodesk.pipeline.jobs import failure_text, storage_problem
    from egodesk.pipeline.runner import run

    parser = argparse.ArgumentParser(prog="egodesk-worker")
    parser.add_argument("--library", required=True)
    parser.add_argument("--retry-failed", action="store_true")
    args = parser.parse_args(argv)
    paths = LibraryPaths.at(args.library).ensure()
    setup_logging(paths)
    logging.raiseExceptions = False  # a log file on a full disk must not put a traceback on stderr per line
    store = Store(paths.database)
    settings = Settings.load(paths.settings_file)
    try:
        outcome = run(
            store, paths, settings, progress=lambda p: print(json.dumps(asdict(p)), flush=True), retry_failed=args.retry_failed
        )
    except Exception as exc:  # a full disk or a locked database even kept the job from being marked failed
        problem = storage_problem(exc)
        if problem is None:
            raise
        print(json.dumps({"stage": "worker", "done": 0, "total": 0, "message": problem}), flush=True)
        print(f"egodesk worker: {failure_text(exc)}", file=sys.stderr, flush=True)
        return 1  # the stage stays "running": the next lock holder takes it up again
    print(
        json.dumps({"stage": "worker", "done": outcome["done"], "total": sum(outcome.values()), "message": json.dumps(outcome)}),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
