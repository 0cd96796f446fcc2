"""Library reads off the GUI thread.

A read of the library (the footage list, a footage's clips, the memories of a moment) takes milliseconds
on a small library and far more on a big one or while an import writes; on the GUI thread that time is a
frozen window. `Reads` runs each read on one background thread, in the order asked, and hands the result
back on the GUI thread. Reads share a key when only the newest answer matters (the moment under the
playhead while playing): an older read of that key that finishes later is dropped, not shown.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from PySide6.QtCore import QObject, Signal

log = logging.getLogger(__name__)


class Reads(QObject):
    _finished = Signal(object, object, object)  # request, ok, value: emitted on the reading thread

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="library-read")
        self._latest: dict[str, object] = {}
        self._closed = False
        self.pending = 0
        # emitted from the pool's thread to this object of the GUI thread: Qt queues the call
        self._finished.connect(self._deliver)

    def read(
        self,
        key: str,
        read: Callable[[], Any],
        on_result: Callable[[Any], None],
        on_error: Callable[[Exception], None],
    ) -> None:
        """Run `read()` off the GUI thread, then `on_result(value)` or `on_error(exception)` on it, unless a
        newer read of the same `key` was asked for meanwhile. After `close` nothing is read."""
        if self._closed:
            return
        token = object()
        self._latest[key] = token
        self.pending += 1
        request = (key, token, on_result, on_error)

        def job() -> None:
            try:
                value, ok = read(), True
            except Exception as exc:  # noqa: BLE001 - the caller says what a failed read means to the user
                value, ok = exc, False
            self._finished.emit(request, ok, value)

        self._pool.submit(job)

    @property
    def idle(self) -> bool:
        """Every read asked for has come back (tests wait on this)."""
        return self.pending == 0

    def _deliver(self, request: tuple, ok: bool, value: Any) -> None:
        key, token, on_result, on_error = request
        self.pending -= 1
        if self._latest.get(key) is not token:
            return
        del self._latest[key]
        if ok:
            on_result(value)
        else:
            log.info("library read %s failed", key, exc_info=value)
            on_error(value)

    def close(self) -> None:
        """Drop reads not started; a read in progress finishes on its own (it only reads)."""
        self._closed = True
        self._latest.clear()
        self._pool.shutdown(wait=False, cancel_futures=True)
