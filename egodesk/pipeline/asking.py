"""Questions come before LLM-built memories: while a question is being answered, the ingest worker
holds its LLM memory stages between batches, so the answer does not queue behind them for the cores.

The ask path (in any process: the app's warm ask task, `egodesk ask`) wraps its answering in
`question_in_flight(paths)`, which holds a shared flock on the library's `asking.lock`: any number of
questions at once, and a process that dies lets go of it by itself. The worker calls
`wait_while_asking` between LLM batches; it returns once no question holds the file.
"""

from __future__ import annotations

import fcntl
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from egodesk.core.paths import LibraryPaths

POLL_S = 0.1


def ask_lock_file(paths: LibraryPaths) -> Path:
    return paths.root / "asking.lock"


@contextmanager
def question_in_flight(paths: LibraryPaths) -> Iterator[None]:
    """Hold LLM memory building off while the body answers a question."""
    paths.root.mkdir(parents=True, exist_ok=True)
    with open(ask_lock_file(paths), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def asking(paths: LibraryPaths) -> bool:
    """A question is being answered in some process right now."""
    path = ask_lock_file(paths)
    if not path.exists():
        return False
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def wait_while_asking(paths: LibraryPaths, should_stop: Callable[[], bool], on_pause: Callable[[], None]) -> None:
    """Return once no question is in flight (at once when none is) or a stop is asked; `on_pause` is
    called once when this has to wait."""
    paused = False
    while asking(paths) and not should_stop():
        if not paused:
            on_pause()
            paused = True
        time.sleep(POLL_S)
