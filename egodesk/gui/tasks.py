"""The one background-task runner every view uses (in the spirit of Anki's QueryOp).

A view hands the runner an op (a module-level function `op(ctx, *args)` that never touches the UI, see
`egodesk.gui.ops`), a label, and what to do on success, on failure and with each progress event. The
op runs in a spawned worker *process*: model inference holds the GIL and would freeze the window from a
thread; a process can be ended for a real cancel, and a crash there (SIGILL, out of memory) only fails
that one task. Events come back over a multiprocessing queue that a QTimer drains on the GUI thread, so
every callback runs on the GUI thread.

Most ops get a process of their own. `warm=True` ops (getting ready to answer, asking) share one
long-lived process instead, so the library, indices and LLM an op keeps open are still loaded for the
next question; they run one after another (a question asked while the model is still getting ready
waits for it rather than loading a second one). Ending such a task ends that process, and the next
warm op starts a fresh one.

Processes are spawned, never forked (the parent runs Qt): a script that starts tasks must keep its
top-level code under `if __name__ == "__main__":`, as multiprocessing requires.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import queue as queue_module
import signal
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from egodesk.core.types import Progress
from egodesk.gui.worker import child_main, serve_main

log = logging.getLogger(__name__)

POLL_MS = 40
CANCEL_GRACE_S = 3.0  # after asking an op to stop, how long before the process is ended
KILL_WAIT_S = 0.2  # how long a task's end waits for its killed process to be gone
GONE_POLL_MS = 5  # how often it looks
_SPAWN = multiprocessing.get_context("spawn")


class _Worker:
    """A worker process with its channels: one-op, or long-lived (`persistent`) taking ops in turn."""

    def __init__(self, persistent: bool):
        self.persistent = persistent
        self.events = _SPAWN.Queue()
        self.stop = _SPAWN.Event()
        self.requests = _SPAWN.Queue() if persistent else None
        self.process: Any = None
        self.busy = False
        self.closed = False

    def submit(self, label: str, op: Callable[..., Any], args: tuple, kwargs: dict) -> None:
        self.busy = True
        self.stop.clear()
        if self.persistent:
            if self.process is None:
                self.process = _SPAWN.Process(
                    target=serve_main, args=(self.requests, self.events, self.stop), name="egodesk-warm", daemon=True
                )
                self.process.start()
            self.requests.put((op, args, kwargs))
            return
        self.process = _SPAWN.Process(
            target=child_main, args=(self.events, self.stop, op, args, kwargs), name=f"egodesk-{label}", daemon=True
        )
        self.process.start()

    def alive(self) -> bool:
        return self.process is not None and self.process.is_alive()

    def drain(self) -> list[tuple]:
        messages = []
        while True:
            try:
                messages.append(self.events.get_nowait())
            except (queue_module.Empty, EOFError, OSError, ValueError):
                return messages

    def kill(self) -> None:
        """End the process (and whatever it started) without waiting for it to be gone."""
        self.closed = True
        if self.alive():
            try:
                os.killpg(self.process.pid, signal.SIGKILL)  # it and whatever it started
            except (AttributeError, ProcessLookupError, PermissionError):
                self.process.kill()  # not yet its own group leader, or not POSIX

    def gone(self) -> bool:
        """The process has exited and been reaped (a non-blocking check)."""
        return not self.alive()

    def close(self) -> None:
        """End the process and let go of the queues, at once: nothing here waits for the process to be gone
        (`Task` checks that without blocking, see `Task._end`)."""
        self.kill()
        for channel in (self.events, self.requests):
            if channel is not None:
                channel.close()
                channel.cancel_join_thread()  # a killed child's half-read pipe must not block exit


class Task(QObject):
    """One op in a worker process. Emits exactly one of succeeded/failed/cancelled, then finished."""

    progressed = Signal(object)  # Progress
    partial = Signal(object)  # a result sent before the end (WorkerContext.partial)
    succeeded = Signal(object)  # the op's return value
    failed = Signal(str)  # a message for a person
    cancelled = Signal(str)
    finished = Signal()

    def __init__(
        self, label: str, op: Callable[..., Any], args: tuple, kwargs: dict, worker: _Worker, parent: QObject | None = None
    ):
        super().__init__(parent)
        self.label = label
        self.state = "pending"  # pending|running|done|failed|cancelled
        self.error = ""
        self.started_at = 0.0
        self.worker = worker
        self._op, self._args, self._kwargs = op, args, kwargs
        self._cancel_deadline: float | None = None
        self._outcome: tuple[str, str, Any] = ("", "", None)  # what `_end` decided, told once the process is gone
        self._gone_by = 0.0
        self._ended = False  # `_end` ran: no message is handled any more
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)

    @property
    def running(self) -> bool:
        return self.state == "running"

    @property
    def process(self) -> Any:
        return self.worker.process

    def start(self) -> None:
        self.worker.submit(self.label, self._op, self._args, self._kwargs)
        self.state = "running"
        self.started_at = time.monotonic()
        self._timer.start()

    def cancel(self, grace_s: float = CANCEL_GRACE_S) -> None:
        """Ask the op to stop where it can (ingest keeps what it finished); end the process after
        `grace_s` if it has not. `grace_s=0` ends it at once. One still waiting for its turn just ends."""
        if self.state == "pending":
            self.state = "cancelled"
            self.cancelled.emit("cancelled")
            self.finished.emit()
            return
        if not self.running or self._ended:
            return
        self.worker.stop.set()
        if grace_s <= 0:
            self._end("cancelled", "cancelled")
        elif self._cancel_deadline is None:
            self._cancel_deadline = time.monotonic() + grace_s

    def _poll(self) -> None:
        for message in self.worker.drain():
            self._handle(message)
            if self._ended:
                return
        if not self.worker.alive():
            for message in self.worker.drain():  # what it sent just before it exited
                self._handle(message)
                if self._ended:
                    return
            code = self.worker.process.exitcode
            self._end("failed", f"the worker process stopped unexpectedly (exit code {code}); see Help > Show logs")
        elif self._cancel_deadline is not None and time.monotonic() >= self._cancel_deadline:
            self._end("cancelled", "cancelled")

    def _handle(self, message: tuple) -> None:
        kind = message[0]
        if kind == "progress":
            self.progressed.emit(message[1])
        elif kind == "partial":
            self.partial.emit(message[1])
        elif kind == "log":
            record = message[1]
            logging.getLogger(record.name).handle(record)
        elif kind == "result":
            try:
                result = pickle.loads(message[1])
            except Exception as exc:  # noqa: BLE001 - a result this side cannot load is a failure
                self._end("failed", f"could not read the worker's result ({exc})")
                return
            self._end("done", result=result)
        elif kind == "error":
            self._end("failed", message[1])
        elif kind == "cancelled":
            self._end("cancelled", message[1])

    def _end(self, state: str, message: str = "", result: Any = None) -> None:
        """Stop polling, release the worker (a one-op or broken one is ended), tell the listeners once.

        An ended process is killed, and the listeners hear of the end once it is gone (at most
        KILL_WAIT_S later), so that what it held (an import's writer lock on the library) is free by
        then. The wait is checked every GONE_POLL_MS on the GUI thread's timer, never blocked on:
        `Process.join` there froze the window for up to KILL_WAIT_S at the end of every import."""
        self._ended = True
        self._timer.stop()
        self._timer.timeout.disconnect(self._poll)
        self.worker.busy = False
        self._outcome = (state, message, result)
        if not self.worker.persistent or state == "cancelled" or not self.worker.alive():
            self.worker.close()
            if not self.worker.gone():
                self._gone_by = time.monotonic() + KILL_WAIT_S
                self._timer.timeout.connect(self._await_exit)
                self._timer.setInterval(GONE_POLL_MS)
                self._timer.start()
                return
        self._announce()

    def _await_exit(self) -> None:
        if self.worker.gone() or time.monotonic() >= self._gone_by:
            self.announce_now()

    def announce_now(self) -> None:
        """Tell the listeners of an end decided but still waiting for the process to be gone, now (the
        window is closing: nothing waits on the process)."""
        if self._ended and self.state in ("pending", "running"):
            self._timer.stop()
            self._announce()

    def _announce(self) -> None:
        state, message, result = self._outcome
        self.state, self.error = state, message
        if state == "done":
            self.succeeded.emit(result)
        elif state == "failed":
            log.info("task %s failed: %s", self.label, message)
            self.failed.emit(message)
        else:
            self.cancelled.emit(message)
        self.finished.emit()


class TaskRunner(QObject):
    """Starts tasks and keeps the running ones; the activity panel and the window's close listen here."""

    task_started = Signal(object)  # Task
    task_finished = Signal(object)  # Task
    # What an op changed (its `ops.changes` mark), announced as it reports progress or partial results
    # and when it ends however it ends (a cancelled import keeps what it finished): views listen here.
    changed = Signal(object)  # frozenset[str]

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.tasks: list[Task] = []
        self._waiting: list[Task] = []  # warm ops waiting for the warm worker, in order
        self._warm: _Worker | None = None

    def run(
        self,
        op: Callable[..., Any],
        *args: Any,
        label: str,
        on_success: Callable[[Any], None] | None = None,
        on_failure: Callable[[str], None] | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        on_cancel: Callable[[str], None] | None = None,
        on_partial: Callable[[Any], None] | None = None,
        warm: bool = False,
        **kwargs: Any,
    ) -> Task:
        """Run `op(ctx, *args, **kwargs)` in a worker process; callbacks run on the GUI thread."""
        task = Task(label, op, args, kwargs, self._warm_worker() if warm else _Worker(persistent=False), self)
        waits = warm and task.worker.busy
        if on_progress:
            task.progressed.connect(on_progress)
        if on_success:
            task.succeeded.connect(on_success)
        if on_failure:
            task.failed.connect(on_failure)
        if on_cancel:
            task.cancelled.connect(on_cancel)
        if on_partial:
            task.partial.connect(on_partial)
        if what := getattr(op, "changes", frozenset()):
            for news in (task.progressed, task.partial, task.finished):
                news.connect(lambda *_: self.changed.emit(what))
        task.finished.connect(lambda: self._finished(task))
        self.tasks.append(task)
        if waits:
            self._waiting.append(task)
        else:
            task.start()
        self.task_started.emit(task)
        return task

    def _warm_worker(self) -> _Worker:
        """The long-lived worker (a fresh one when the last was ended or died)."""
        if self._warm is not None and (self._warm.closed or (self._warm.process is not None and not self._warm.alive())):
            self._warm = None
        if self._warm is None:
            self._warm = _Worker(persistent=True)
        return self._warm

    def running(self, label: str | None = None) -> list[Task]:
        return [t for t in self.tasks if t.running and (label is None or t.label == label)]

    def cancel_all(self) -> None:
        """End every worker at once (the window is closing: nothing waits on them)."""
        for task in list(self.tasks):
            task.cancel(grace_s=0)
            task.announce_now()
        if self._warm is not None:
            self._warm.close()
            self._warm = None

    def _finished(self, task: Task) -> None:
        if task in self.tasks:
            self.tasks.remove(task)
        if task in self._waiting:
            self._waiting.remove(task)
        self.task_finished.emit(task)
        task.deleteLater()
        warm = self._warm_worker() if self._waiting else None
        if warm is not None and not warm.busy:  # the next warm op's turn
            waiting = self._waiting.pop(0)
            waiting.worker = warm
            waiting.start()
