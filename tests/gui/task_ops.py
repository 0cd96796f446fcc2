"""Ops for the task-runner tests. No Qt here: they run in the runner's spawned worker process."""

from __future__ import annotations

import logging
import os
import time

from egodesk.core.types import Progress
from egodesk.gui.ops import FOOTAGE, changes


def count(ctx, n: int) -> int:
    for i in range(1, n + 1):
        ctx.progress(Progress("count", i, n, message=f"step {i}"))
    return n * 10


@changes(FOOTAGE)
def count_changing_footage(ctx, n: int) -> int:
    return count(ctx, n)


def fail(ctx, text: str) -> None:
    logging.getLogger("egodesk.test").info("about to fail")
    raise FileNotFoundError(text)


def crash(ctx, code: int) -> None:
    os._exit(code)  # what a SIGILL or an out-of-memory kill looks like from outside: no result, no error


def spin(ctx, seconds: float) -> int:
    """Hold a CPU (and the GIL of *its* process) for `seconds`."""
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1
    return n


def wait_for_stop(ctx, seconds: float) -> str:
    """Cooperative: returns early when asked to stop."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if ctx.should_stop():
            return "stopped"
        time.sleep(0.02)
    return "timed out"


def sleep(ctx, seconds: float) -> None:
    time.sleep(seconds)  # never looks at should_stop: only ending the process stops it


_KEPT: dict[str, object] = {}


def keep(ctx, key: str, value: object) -> int:
    """Store a value in this process (what a warm op does with an open library) and say where."""
    _KEPT[key] = value
    return os.getpid()


def recall(ctx, key: str) -> tuple[int, object]:
    return os.getpid(), _KEPT.get(key)


def halfway(ctx, value: str) -> str:
    ctx.partial(value)
    return value + " and done"
