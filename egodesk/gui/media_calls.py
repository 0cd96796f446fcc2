"""QMediaPlayer calls that tear down Qt's FFmpeg playback engine, made with the GIL released.

PySide holds the GIL through `QMediaPlayer.stop()` and `setSource()`. Both tear the engine down and take
Qt's signal-slot locks, while the engine's audio thread, destroying its objects under those locks, calls
a virtual of a PySide-made object and so waits for the GIL: a deadlock that froze the window (and the
test suite) when a footage was closed (gdb: the main thread in `QObject::disconnect` under `stop()`, the
`QFFmpeg::AudioRenderer` thread in `PyGILState_Ensure` under `~QObject`). Calling the C++ methods through
ctypes releases the GIL for the call; slots the call emits take the GIL back as usual.

Where the Qt library or its symbols cannot be found (another platform's name mangling), the calls fall
back to the bindings.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Callable
from functools import cache

from PySide6.QtCore import QUrl
from PySide6.QtMultimedia import QMediaPlayer
from shiboken6 import Shiboken

log = logging.getLogger(__name__)

QT_MULTIMEDIA = "libQt6Multimedia.so.6"  # already loaded by PySide6.QtMultimedia: dlopen finds it by soname
STOP = "_ZN12QMediaPlayer4stopEv"  # void QMediaPlayer::stop()
SET_SOURCE = "_ZN12QMediaPlayer9setSourceERK4QUrl"  # void QMediaPlayer::setSource(const QUrl &)


@cache
def _method(symbol: str, arguments: int) -> Callable[..., None] | None:
    try:
        function = getattr(ctypes.CDLL(QT_MULTIMEDIA), symbol)
    except (OSError, AttributeError):
        log.info("%s not found in %s: QMediaPlayer teardown goes through the bindings", symbol, QT_MULTIMEDIA)
        return None
    function.argtypes = [ctypes.c_void_p] * arguments  # `this`, then references as pointers
    function.restype = None
    return function


def _address(wrapped: object) -> int:
    return Shiboken.getCppPointer(wrapped)[0]


def stop(player: QMediaPlayer) -> None:
    method = _method(STOP, 1)
    if method is None:
        player.stop()
    else:
        method(_address(player))


def set_source(player: QMediaPlayer, url: QUrl) -> None:
    method = _method(SET_SOURCE, 2)
    if method is None:
        player.setSource(url)
    else:
        method(_address(player), _address(url))
