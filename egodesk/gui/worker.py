"""The worker-process side of the task runner. Imports no Qt: it runs in a spawned child process.

A child runs one op, `op(ctx, *args, **kwargs)` (or, when long-lived, one op after another), and
streams tagged messages back over a multiprocessing queue: ("progress", Progress), ("partial", value),
("log", LogRecord), then exactly one of
("result", pickled bytes), ("error", message, traceback text) or ("cancelled", message). The result is
pickled here, inside the try, so an unpicklable result becomes a reported error rather than a silent
loss in the queue's feeder thread.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import pickle
import traceback
from collections.abc import Callable
from typing import Any

from egodesk.core.types import Progress

# Exceptions whose message is already written for a person (they name the file or setting and the
# reason); anything else is shown as "<type>: <message>" and its traceback goes to the log only.
_PLAIN = (OSError, ValueError, LookupError, RuntimeError)


class StopRequested(Exception):
    """Raised by an op that noticed `ctx.should_stop()`; reported as a cancel, not an error."""


class WorkerContext:
    """What an op gets to talk to the window: progress events and the cooperative stop flag."""

    def __init__(self, queue: Any, stop_event: Any):
        self._queue = queue
        self._stop = stop_event

    def progress(self, event: Progress) -> None:
        self._queue.put(("progress", event))

    def should_stop(self) -> bool:
        return self._stop.is_set()

    def partial(self, value: Any) -> None:
        """A result the window can use before the op ends (an import's per-file errors)."""
        self._queue.put(("partial", value))


class _QueueLogHandler(logging.handlers.QueueHandler):
    """Forwards the child's log records to the window process, which writes the one log file."""

    def enqueue(self, record: logging.LogRecord) -> None:
        self.queue.put(("log", record))


def describe(exc: BaseException) -> str:
    """A one-line message for a person: the exception's own text when it is written for one."""
    text = str(exc).strip()
    if isinstance(exc, _PLAIN) and text:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


WORKER_NICENESS = 10


def _setup(queue: Any) -> None:
    if hasattr(os, "setpgrp"):
        os.setpgrp()  # its own process group: ending the task also ends any process the op started
    if hasattr(os, "nice"):
        os.nice(WORKER_NICENESS)  # model work yields the cores to the window first: it must stay responsive
    root = logging.getLogger()
    root.handlers[:] = [_QueueLogHandler(queue)]
    root.setLevel(logging.INFO)


def _run_one(queue: Any, stop_event: Any, op: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    ctx = WorkerContext(queue, stop_event)
    try:
        payload = pickle.dumps(op(ctx, *args, **kwargs))
    except StopRequested as exc:
        queue.put(("cancelled", str(exc) or "stopped"))
    except BaseException as exc:  # everything must reach the window as a message
        logging.getLogger(__name__).info("task %s failed", getattr(op, "__name__", op), exc_info=True)
        queue.put(("error", describe(exc), traceback.format_exc()))
    else:
        queue.put(("result", payload))


def child_main(queue: Any, stop_event: Any, op: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    """Entry point of a one-op worker process."""
    _setup(queue)
    _run_one(queue, stop_event, op, args, kwargs)


def serve_main(requests: Any, queue: Any, stop_event: Any) -> None:
    """Entry point of a long-lived worker: runs ops one after another (None ends it), so that what an
    op keeps in its module (an open library, a loaded model) is there for the next one."""
    _setup(queue)
    while (request := requests.get()) is not None:
        _run_one(queue, stop_event, *request)
