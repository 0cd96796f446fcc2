"""The Qt binding must keep Python's reference counts whole.

PySide6 6.12.0's `SignalInstance.emit` hands back `True` without a reference of its own, so every emit
took one from `True`; the player emits its position many times a second, and after about a minute of
playback `True`'s count reached zero and Python aborted ("bool_dealloc: deallocating True or False"), or
freed memory was reused and the app crashed in Qt's engine threads. requirements.txt pins a release
without the fault; this test fails on one that has it."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal

EMITS = 1000


class _Sender(QObject):
    moved = Signal(float)


class _Receiver(QObject):
    def on_moved(self, seconds: float) -> None:
        self.seconds = seconds


def test_emitting_a_signal_leaves_pythons_booleans_their_references(qapp):
    sender, receiver = _Sender(), _Receiver()
    sender.moved.connect(receiver.on_moved)
    before = sys.getrefcount(True)
    results = [sender.moved.emit(float(i)) for i in range(EMITS)]
    assert receiver.seconds == EMITS - 1
    kept = sys.getrefcount(True) - before
    # each result kept holds a reference; other threads of the suite may take or drop a few meanwhile
    assert kept >= results.count(True) - EMITS // 100, f"{EMITS} emits added {kept} references to True"
